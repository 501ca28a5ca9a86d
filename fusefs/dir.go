package fusefs

import (
	"context"
	"slices"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/nasemu/nasemu/models"
	"golang.org/x/sys/unix"
)

// OpendirHandle implements fs.NodeOpendirHandler, charged as an Open; the
// root's listing hides the allocator's state file and the journal's
// holding directory.
func (n *node) OpendirHandle(ctx context.Context, flags uint32) (fh fs.FileHandle, fuseFlags uint32, errno syscall.Errno) {
	defer n.fs.metrics.begin(opOpendir)(0, &errno)
	if errno = n.fs.charge(models.Open); errno != 0 {
		return nil, 0, errno
	}
	n.fs.journal.mu.RLock()
	boot := n.fs.reboot.boot.Load()
	d, errno := openDir(n.path(), n.IsRoot())
	n.fs.journal.mu.RUnlock()
	if errno != 0 {
		return nil, 0, errno
	}
	d.hide, d.fs, d.boot, d.node = n.IsRoot(), n.fs, boot, n
	n.dirsMu.Lock()
	n.dirs = append(n.dirs, d)
	n.dirsMu.Unlock()
	return d, 0, 0
}

// openDir opens the backing directory at path for a dirHandle: a listing
// and, on a second descriptor of the same open directory, its attributes.
// The kernel asks for an open directory's attributes by node, never by
// handle, and a loopback node finds its backing by path: once a rename
// replaced the directory (or rmdir removed it), its path names another
// inode or none. So the node answers through one of its open handles
// (attrHandle), whose descriptor still names the directory that was
// opened, as an open directory on a local filesystem does (go-fuse issue
// 55). A replaced directory thus lives in the backing
// filesystem only while it is open: nothing is left behind. A symlink is
// followed only at the root (a backing directory may be one); below it, a
// symlink a client put where the node's directory was is not a directory
// to list.
func openDir(path string, root bool) (*dirHandle, syscall.Errno) {
	flags := syscall.O_RDONLY | syscall.O_DIRECTORY | syscall.O_CLOEXEC
	if !root {
		flags |= syscall.O_NOFOLLOW
	}
	fd, err := syscall.Open(path, flags, 0)
	if err != nil {
		return nil, toErrno(err)
	}
	afd, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		syscall.Close(fd)
		return nil, toErrno(err)
	}
	ds, errno := fs.NewLoopbackDirStreamFd(fd)
	if errno != 0 {
		syscall.Close(fd)
		syscall.Close(afd)
		return nil, errno
	}
	return &dirHandle{DirStream: ds, handle: handle{lf: fs.NewLoopbackFile(afd).(*fs.LoopbackFile)}}, 0
}

// dirHandle is a directory listing that can hide the emulator's own
// entries; its fsync commits the journal. It answers for the attributes
// of the directory it opened (see openDir).
type dirHandle struct {
	fs.DirStream
	handle // the open directory, for its attributes
	node   *node
	hide   bool
}

var (
	_ fs.FileReaddirenter = (*dirHandle)(nil)
	_ fs.FileSeekdirer    = (*dirHandle)(nil)
	_ fs.FileReleasedirer = (*dirHandle)(nil)
	_ fs.FileFsyncdirer   = (*dirHandle)(nil)
	_ fs.FileGetattrer    = (*dirHandle)(nil)
	_ fs.FileSetattrer    = (*dirHandle)(nil)
)

// Readdirent implements fs.FileReaddirenter.
func (d *dirHandle) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	if d.stale() {
		return nil, staleErrno
	}
	for {
		de, errno := d.DirStream.(fs.FileReaddirenter).Readdirent(ctx)
		if d.hide && de != nil && unlisted(de.Name) {
			continue
		}
		return de, errno
	}
}

// Seekdir implements fs.FileSeekdirer.
func (d *dirHandle) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	if d.stale() {
		return staleErrno
	}
	return d.DirStream.(fs.FileSeekdirer).Seekdir(ctx, off)
}

// Releasedir implements fs.FileReleasedirer.
func (d *dirHandle) Releasedir(ctx context.Context, flags uint32) {
	n := d.node
	n.dirsMu.Lock()
	n.dirs = slices.DeleteFunc(n.dirs, func(o *dirHandle) bool { return o == d })
	n.dirsMu.Unlock()
	d.DirStream.(fs.FileReleasedirer).Releasedir(ctx, flags)
	d.lf.Release(ctx)
}

// Fsyncdir implements fs.FileFsyncdirer: like any fsync, it commits the
// running transaction of namespace changes.
func (d *dirHandle) Fsyncdir(ctx context.Context, flags uint32) syscall.Errno {
	d.fs.reboot.mu.RLock() // no power loss between the check and the commit
	defer d.fs.reboot.mu.RUnlock()
	if d.stale() {
		return staleErrno
	}
	if errno := d.DirStream.(fs.FileFsyncdirer).Fsyncdir(ctx, flags); errno != 0 {
		return errno
	}
	d.fs.commit()
	return 0
}
