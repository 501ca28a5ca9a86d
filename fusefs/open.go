package fusefs

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/nasemu/nasemu/models"
)

// truncateOpen truncates a file opened with O_TRUNC (which the backing
// open left out) to 0, keeping what it cuts off in the undo log.
func (f *FS) truncateOpen(lf *fs.LoopbackFile, inode *fs.Inode) syscall.Errno {
	fd, _ := lf.PassthroughFd()
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return toErrno(err)
	}
	if st.Size > 0 && st.Mode&syscall.S_IFMT == syscall.S_IFREG {
		f.beginLocked()
		if errno := f.undo.cut(fd, st.Ino, inode, 0); errno != 0 {
			return errno
		}
	}
	if err := syscall.Ftruncate(fd, 0); err != nil {
		return toErrno(err)
	}
	f.truncate(st.Ino, 0)
	return 0
}

// Create implements fs.NodeCreater, charged as a Create. A new file is a
// change of the running transaction; an existing one (FUSE creates with
// O_CREAT what the kernel has not looked up) is opened.
func (n *node) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (inode *fs.Inode, fh fs.FileHandle, fuseFlags uint32, errno syscall.Errno) {
	defer n.fs.metrics.begin(opCreate)(0, &errno)
	if n.hidden(name) {
		return nil, nil, 0, syscall.EPERM
	}
	probe := n.probeChild(name)
	if !probe {
		if errno = n.fs.chargeCreate(); errno != 0 {
			return nil, nil, 0, errno
		}
	}
	// A probe file is the fronts' own, not the clients': it is no change
	// of the running transaction, whose commits would cost the host an
	// fsync every few seconds while the fronts probe.
	if !n.fs.journaling() || probe {
		boot := n.fs.reboot.boot.Load()
		inode, lfh, _, errno := n.LoopbackNode.Create(ctx, name, backingFlags(flags), mode, out)
		if errno != 0 {
			return nil, nil, 0, errno
		}
		ino := out.Attr.Ino // the backing inode number, before go-fuse renumbers it
		if flags&syscall.O_TRUNC != 0 {
			n.fs.truncate(ino, 0)
		}
		h := n.fs.newFile(lfh.(*fs.LoopbackFile), ino, inode, boot, flags)
		fuseFlags = n.fs.frontOpenFlags(flags)
		if probe {
			h.probe, fuseFlags = true, fuseFlags|fuse.FOPEN_DIRECT_IO
		}
		return inode, h, fuseFlags, 0
	}
	n.fs.lockJournal()
	defer n.fs.unlockJournal()
	boot := n.fs.reboot.boot.Load() // stable while the journal is locked
	inode, lfh, _, errno := n.LoopbackNode.Create(ctx, name, backingFlags(flags)|syscall.O_EXCL, mode, out)
	switch {
	case errno == 0:
		n.fs.recordLocked(change{kind: created, path: n.rel(name)})
	case errno == syscall.EEXIST && flags&syscall.O_EXCL == 0:
		inode, lfh, _, errno = n.LoopbackNode.Create(ctx, name, backingFlags(flags)&^syscall.O_TRUNC, mode, out)
		if errno == 0 && flags&syscall.O_TRUNC != 0 {
			if errno = n.fs.truncateOpen(lfh.(*fs.LoopbackFile), inode); errno != 0 {
				lfh.(*fs.LoopbackFile).Release(ctx)
			}
		}
	}
	if errno != 0 {
		return nil, nil, 0, errno
	}
	ino := out.Attr.Ino // the backing inode number, before go-fuse renumbers it
	h := n.fs.newFile(lfh.(*fs.LoopbackFile), ino, inode, boot, flags)
	return inode, h, n.fs.frontOpenFlags(flags), 0
}

// Open implements fs.NodeOpener, charged as an Open.
func (n *node) Open(ctx context.Context, flags uint32) (fh fs.FileHandle, fuseFlags uint32, errno syscall.Errno) {
	defer n.fs.metrics.begin(opOpen)(0, &errno)
	// The backing file is opened first: the open is charged with the
	// file's address and size (see chargeFile). O_TRUNC is done here, so
	// that the undo log keeps what it cuts off.
	trunc := flags&syscall.O_TRUNC != 0 && n.fs.journaling() && flags&syscall.O_ACCMODE != syscall.O_RDONLY
	bflags := backingFlags(flags)
	if trunc {
		bflags &^= syscall.O_TRUNC
		n.fs.lockJournal()
	} else {
		n.fs.journal.mu.RLock()
	}
	boot := n.fs.reboot.boot.Load() // stable while the journal is locked
	lfh, _, errno := n.LoopbackNode.Open(ctx, bflags)
	if errno == syscall.ENOENT && n.undone.Load() {
		// The kernel opened a name it has cached, but a power loss undid
		// the file's create (the kernel learns of that only after the
		// rollback). ESTALE makes the kernel look the name up again and
		// retry once, so an open with O_CREAT creates the file, as after a
		// NAS reboot, instead of failing with ENOENT. Other opens of a
		// name gone (a rename raced them) keep ENOENT, as on a local
		// filesystem.
		errno = syscall.ESTALE
	}
	if errno == 0 && trunc {
		if errno = n.fs.truncateOpen(lfh.(*fs.LoopbackFile), n.EmbeddedInode()); errno != 0 {
			lfh.(*fs.LoopbackFile).Release(ctx)
		}
	}
	if trunc {
		n.fs.unlockJournal()
	} else {
		n.fs.journal.mu.RUnlock()
	}
	if errno != 0 {
		return nil, 0, errno
	}
	lf := lfh.(*fs.LoopbackFile)
	var out fuse.AttrOut
	if errno = lf.Getattr(ctx, &out); errno != 0 {
		lf.Release(ctx)
		return nil, 0, errno
	}
	probe := n.fs.front == FrontSMB && n.isProbe()
	if !probe {
		if errno = n.fs.chargeFile(models.Open, out.Ino, int64(out.Size)); errno != 0 {
			lf.Release(ctx)
			return nil, 0, errno
		}
	}
	if flags&syscall.O_TRUNC != 0 && !trunc {
		n.fs.truncate(out.Ino, 0)
	}
	h := n.fs.newFile(lf, out.Ino, n.EmbeddedInode(), boot, flags)
	fuseFlags = n.fs.frontOpenFlags(flags)
	if probe {
		// Every read and write of it reaches the share, to be timed.
		h.probe, fuseFlags = true, fuseFlags|fuse.FOPEN_DIRECT_IO
	}
	return h, fuseFlags, 0
}

// probeChild reports whether name, in directory n, is a probe file's
// behind smbd (see isProbe).
func (n *node) probeChild(name string) bool {
	return n.fs.front == FrontSMB && n.IsRoot() && isProbeName(name)
}

// isProbe reports whether the node is a probe file (see FS.SetProbeWait):
// named with ProbePrefix, in the share's root. It looks at the node's own
// name and parent, not its path, which every open would build.
func (n *node) isProbe() bool {
	name, parent := n.Parent()
	return parent != nil && parent.IsRoot() && isProbeName(name)
}

// openFlags returns the FUSE open flags for a client's open flags: O_DIRECT
// bypasses the client's page cache, so every read reaches the model, and
// direct writes to one file run in parallel (the kernel would otherwise
// hold the file's lock across each write and serialise the writers, which
// a NAS share does not).
func openFlags(flags uint32) uint32 {
	if flags&syscall.O_DIRECT != 0 {
		return fuse.FOPEN_DIRECT_IO | fuse.FOPEN_PARALLEL_DIRECT_WRITES
	}
	return 0
}

// backingFlags returns the flags to open a backing file with. O_DIRECT is
// the client's wish to bypass its own cache (honoured with
// FOPEN_DIRECT_IO); the backing file is only where the bytes are kept, and
// reaching it through the host's disk would add the host disk's latency to
// the model's. A write-only open is widened to read-write: the power-loss
// undo log reads the old bytes of every range before it is overwritten.
func backingFlags(flags uint32) uint32 {
	flags &^= syscall.O_DIRECT
	if flags&syscall.O_ACCMODE == syscall.O_WRONLY {
		flags = flags&^syscall.O_ACCMODE | syscall.O_RDWR
	}
	return flags
}
