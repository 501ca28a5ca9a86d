package fusefs

import (
	"context"
	"path/filepath"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/nasemu/nasemu/models"
)

// lstatChild returns the backing attributes of a child, or ok false when it
// does not exist.
func (n *node) lstatChild(name string) (st syscall.Stat_t, ok bool) {
	err := syscall.Lstat(filepath.Join(n.path(), name), &st)
	return st, err == nil
}

// lastLink reports whether removing a name with these attributes frees the
// file's data.
func lastLink(st syscall.Stat_t) bool {
	return st.Mode&syscall.S_IFMT == syscall.S_IFREG && st.Nlink == 1
}

// isDir reports whether attributes are a directory's.
func isDir(st syscall.Stat_t) bool { return st.Mode&syscall.S_IFMT == syscall.S_IFDIR }

// Unlink implements fs.NodeUnlinker, charged as a Remove. The file waits
// in the holding directory, blocks and all, until the journal commits
// (see hold); with the journal off, the last link's removal frees the
// file's blocks at once.
func (n *node) Unlink(ctx context.Context, name string) (errno syscall.Errno) {
	defer n.fs.metrics.begin(opUnlink)(0, &errno)
	if n.hidden(name) {
		return syscall.ENOENT
	}
	st, ok := n.lstatChild(name)
	probe := n.probeChild(name)
	switch {
	case probe: // timed by the fronts, not charged
	case ok && st.Mode&syscall.S_IFMT == syscall.S_IFREG:
		errno = n.fs.chargeFile(models.Remove, st.Ino, st.Size)
	default:
		errno = n.fs.charge(models.Remove)
	}
	if errno != 0 {
		return errno
	}
	if !n.fs.journaling() || probe { // a probe file is not the clients' (see Create)
		if errno = n.LoopbackNode.Unlink(ctx, name); errno != 0 {
			return errno
		}
		if ok && lastLink(st) {
			n.fs.remove(st.Ino)
		}
		return 0
	}
	n.fs.lockJournal()
	defer n.fs.unlockJournal()
	if st, ok = n.lstatChild(name); !ok || isDir(st) {
		return n.LoopbackNode.Unlink(ctx, name) // its error
	}
	c, held, errno := n.fs.hold(n.rel(name), st, false)
	if held {
		n.fs.recordHeldLocked(c, st)
	}
	return errno
}

// Rmdir implements fs.NodeRmdirer, charged as a Remove. The removal is a
// change of the running transaction: a power loss makes the directory
// again.
func (n *node) Rmdir(ctx context.Context, name string) (errno syscall.Errno) {
	defer n.fs.metrics.begin(opRmdir)(0, &errno)
	if n.hidden(name) {
		return syscall.ENOENT
	}
	if errno = n.fs.charge(models.Remove); errno != 0 {
		return errno
	}
	if !n.fs.journaling() {
		return n.LoopbackNode.Rmdir(ctx, name)
	}
	n.fs.lockJournal()
	defer n.fs.unlockJournal()
	st, ok := n.lstatChild(name)
	if errno = n.LoopbackNode.Rmdir(ctx, name); errno == 0 && ok {
		n.fs.recordLocked(removedDirChange(n.rel(name), st))
	}
	return errno
}

// created records a new entry of the running transaction after a creating
// call returned errno.
func (n *node) created(name string, errno syscall.Errno) syscall.Errno {
	if errno == 0 {
		n.fs.recordLocked(change{kind: created, path: n.rel(name)})
	}
	return errno
}

// Mkdir implements fs.NodeMkdirer, charged as a Create.
func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (_ *fs.Inode, errno syscall.Errno) {
	defer n.fs.metrics.begin(opMkdir)(0, &errno)
	if n.hidden(name) {
		return nil, syscall.EEXIST
	}
	if errno = n.fs.charge(models.Create); errno != 0 {
		return nil, errno
	}
	n.fs.lockJournal()
	defer n.fs.unlockJournal()
	in, errno := n.LoopbackNode.Mkdir(ctx, name, mode, out)
	return in, n.createdIfJournaling(name, errno)
}

// createdIfJournaling records a new entry when the journal is on.
func (n *node) createdIfJournaling(name string, errno syscall.Errno) syscall.Errno {
	if !n.fs.journaling() {
		return errno
	}
	return n.created(name, errno)
}

// Mknod implements fs.NodeMknoder, charged as a Create.
func (n *node) Mknod(ctx context.Context, name string, mode, rdev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if n.hidden(name) {
		return nil, syscall.EEXIST
	}
	if errno := n.fs.charge(models.Create); errno != 0 {
		return nil, errno
	}
	n.fs.lockJournal()
	defer n.fs.unlockJournal()
	in, errno := n.LoopbackNode.Mknod(ctx, name, mode, rdev, out)
	return in, n.createdIfJournaling(name, errno)
}

// Symlink implements fs.NodeSymlinker, charged as a Create.
func (n *node) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if n.hidden(name) {
		return nil, syscall.EEXIST
	}
	if errno := n.fs.charge(models.Create); errno != 0 {
		return nil, errno
	}
	n.fs.lockJournal()
	defer n.fs.unlockJournal()
	in, errno := n.LoopbackNode.Symlink(ctx, target, name, out)
	return in, n.createdIfJournaling(name, errno)
}

// Link implements fs.NodeLinker, charged as a Create. The new name is a
// change of the running transaction, like a created file.
func (n *node) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if n.hidden(name) {
		return nil, syscall.EEXIST
	}
	if errno := n.fs.charge(models.Create); errno != 0 {
		return nil, errno
	}
	if t, ok := target.(*node); ok {
		target = t.LoopbackNode
	}
	n.fs.lockJournal()
	defer n.fs.unlockJournal()
	in, errno := n.LoopbackNode.Link(ctx, target, name, out)
	if errno == 0 {
		n.fs.hideHeldLinksLocked(&out.Attr)
	}
	return in, n.createdIfJournaling(name, errno)
}
