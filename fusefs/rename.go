package fusefs

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/nasemu/nasemu/models"
)

// Flags of renameat2(2).
const (
	renameNoReplace = 0x1
	renameExchange  = 0x2
	renameWhiteout  = 0x4
)

// Rename implements fs.NodeRenamer, charged as an Open and a Close (a
// protocol renames an open handle). A replaced file's blocks are freed
// when the journal commits.
func (n *node) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) (errno syscall.Errno) {
	defer n.fs.metrics.begin(opRename)(0, &errno)
	np, ok := newParent.(*node)
	if !ok {
		return syscall.EXDEV
	}
	if n.hidden(name) || np.hidden(newName) {
		return syscall.EPERM
	}
	src, _ := n.lstatChild(name)
	charge := func(op models.Op) syscall.Errno {
		if src.Mode&syscall.S_IFMT == syscall.S_IFREG {
			return n.fs.chargeFile(op, src.Ino, src.Size)
		}
		return n.fs.charge(op)
	}
	if errno = charge(models.Open); errno != 0 {
		return errno
	}
	if n.fs.journaling() {
		errno = n.renameJournaled(ctx, name, np, newName, flags)
	} else {
		dst, replaced := np.lstatChild(newName)
		if errno = n.LoopbackNode.Rename(ctx, name, np.LoopbackNode, newName, flags); errno == 0 &&
			replaced && flags&renameExchange == 0 && dst.Ino != src.Ino && lastLink(dst) {
			n.fs.remove(dst.Ino)
		}
	}
	if errno != 0 {
		return errno
	}
	return charge(models.Close)
}

// renameJournaled renames as a change of the running transaction. A
// replaced non-directory is hard-linked into the holding directory first
// (the rename itself stays atomic, and a crash between the two leaves only
// a spare link); a replaced (empty) directory is recorded to be made
// again.
func (n *node) renameJournaled(ctx context.Context, name string, np *node, newName string, flags uint32) syscall.Errno {
	f := n.fs
	f.lockJournal()
	defer f.unlockJournal()
	from, to := n.rel(name), np.rel(newName)
	rename := func() syscall.Errno { return n.LoopbackNode.Rename(ctx, name, np.LoopbackNode, newName, flags) }
	src, ok := n.lstatChild(name)
	if !ok || flags&renameWhiteout != 0 {
		return rename() // its error, or a whiteout, which is overlayfs's business
	}
	if flags&renameExchange != 0 {
		errno := rename()
		if errno == 0 {
			f.recordLocked(change{kind: exchanged, from: from, path: to})
		}
		return errno
	}
	dst, replaced := np.lstatChild(newName)
	switch {
	case !replaced || flags&renameNoReplace != 0:
	case dst.Ino == src.Ino && dst.Dev == src.Dev:
		return rename() // two links of one file: rename(2) does nothing
	case isDir(src) && !isDir(dst):
		return syscall.ENOTDIR
	case !isDir(src) && isDir(dst):
		return syscall.EISDIR
	case isDir(dst):
		if empty, err := emptyDir(f.abs(to)); err != nil || !empty {
			if err != nil {
				return toErrno(err)
			}
			return syscall.ENOTEMPTY
		}
		errno := rename()
		if errno == 0 {
			f.recordLocked(removedDirChange(to, dst))
			f.recordLocked(change{kind: renamed, from: from, path: to})
		}
		return errno
	default:
		c, held, errno := f.hold(to, dst, true)
		if errno != 0 {
			return errno
		}
		if errno = rename(); errno != 0 {
			if held {
				f.unhold(c)
			}
			return errno
		}
		if held {
			f.recordHeldLocked(c, dst)
		} else if lastLink(dst) {
			f.remove(dst.Ino)
		}
		f.recordLocked(change{kind: renamed, from: from, path: to})
		return 0
	}
	errno := rename()
	if errno == 0 {
		f.recordLocked(change{kind: renamed, from: from, path: to})
	}
	return errno
}
