package fusefs

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// node is a file or directory of the share: go-fuse's loopback node with
// every operation charged to the model and the allocator kept in step.
type node struct {
	*fs.LoopbackNode
	fs *FS

	dirsMu sync.Mutex
	dirs   []*dirHandle // a directory's open handles (see openDir)

	undone atomic.Bool // a power loss undid its create (see Open)
}

var (
	_ fs.InodeEmbedder      = (*node)(nil)
	_ fs.NodeWrapChilder    = (*node)(nil)
	_ fs.NodeLookuper       = (*node)(nil)
	_ fs.NodeGetattrer      = (*node)(nil)
	_ fs.NodeSetattrer      = (*node)(nil)
	_ fs.NodeCreater        = (*node)(nil)
	_ fs.NodeOpener         = (*node)(nil)
	_ fs.NodeUnlinker       = (*node)(nil)
	_ fs.NodeRmdirer        = (*node)(nil)
	_ fs.NodeMkdirer        = (*node)(nil)
	_ fs.NodeMknoder        = (*node)(nil)
	_ fs.NodeSymlinker      = (*node)(nil)
	_ fs.NodeLinker         = (*node)(nil)
	_ fs.NodeRenamer        = (*node)(nil)
	_ fs.NodeOpendirHandler = (*node)(nil)
	_ fs.NodeStatfser       = (*node)(nil)
	_ fs.NodeCopyFileRanger = (*node)(nil)
)

// WrapChild implements fs.NodeWrapChilder: every node of the tree is a
// charged node.
func (n *node) WrapChild(ctx context.Context, ops fs.InodeEmbedder) fs.InodeEmbedder {
	if ln, ok := ops.(*fs.LoopbackNode); ok {
		return &node{LoopbackNode: ln, fs: n.fs}
	}
	return ops
}

// path returns the node's path in the backing directory.
func (n *node) path() string { return filepath.Join(n.fs.backing, n.Path(nil)) }

// rel returns the path of the child name relative to the backing
// directory: how the journal names it.
func (n *node) rel(name string) string { return filepath.Join(n.Path(nil), name) }

// hidden reports whether name, in this directory, is the allocator's or
// the arrays' state file or the journal's holding directory, which the
// share does not show.
func (n *node) hidden(name string) bool { return n.IsRoot() && hiddenName(name) }

// hiddenName reports whether a name at the root of the backing directory
// is one of the emulator's own.
func hiddenName(name string) bool {
	return strings.HasPrefix(name, StateFile) || strings.HasPrefix(name, ArrayStateFile) || name == HoldDir
}

// ProbePrefix starts the names of the files 'nasemu nas' times the host's
// SMB path with (smb.ProbeName; FS.ProbeName) in the share's root. The root's
// listing leaves them out, but lookups find them: the prober opens them by
// name through smbd.
const ProbePrefix = ".nasemu-probe-"

// probeName is this process's probe file's name: ProbePrefix, the process
// id and 16 random hex digits. Only it, and it followed by "-f", are timed
// without a charge and have their writes discarded; a client cannot guess
// it (it is not listed), so no client's file is ever taken for a probe
// and loses its bytes, and the prober never truncates or removes one.
var probeName = func() string {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return ProbePrefix + strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b[:])
}()

// ProbeName returns the name, in the share's root, of the share's probe
// file (smb.NewProber's name); the prober's second file is that name
// followed by "-f".
func (f *FS) ProbeName() string { return probeName }

// isProbeName reports whether name is one of this process's probe files.
func isProbeName(name string) bool { return name == probeName || name == probeName+"-f" }

// unlisted reports whether the root's listing leaves a name out.
func unlisted(name string) bool { return hiddenName(name) || strings.HasPrefix(name, ProbePrefix) }

// Lookup implements fs.NodeLookuper, charged as a Stat (see chargeAttr).
func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (_ *fs.Inode, errno syscall.Errno) {
	defer n.fs.metrics.begin(opLookup)(0, &errno)
	if n.hidden(name) {
		return nil, syscall.ENOENT
	}
	if errno = n.fs.chargeAttr(); errno != 0 {
		return nil, errno
	}
	n.fs.journal.mu.RLock()
	defer n.fs.journal.mu.RUnlock()
	in, errno := n.LoopbackNode.Lookup(ctx, name, out)
	if errno == 0 {
		n.fs.hideHeldLinksLocked(&out.Attr)
	}
	return in, errno
}

// Getattr implements fs.NodeGetattrer, charged as a Stat (see chargeAttr).
func (n *node) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) (errno syscall.Errno) {
	defer n.fs.metrics.begin(opGetattr)(0, &errno)
	if errno = n.fs.chargeAttr(); errno != 0 {
		return errno
	}
	fh = n.attrHandle(fh)
	if f, ok := fh.(*file); ok && f.stale() {
		// The kernel sends no handle with a getattr, not even for an
		// fstat: go-fuse passes the file's first open handle, and one
		// opened before a power loss would fail every stat of the file,
		// by anyone, with EIO. Its path answers instead.
		fh = nil
	}
	n.fs.journal.mu.RLock()
	defer n.fs.journal.mu.RUnlock()
	if errno = n.LoopbackNode.Getattr(ctx, fh, out); errno == 0 {
		n.fs.hideHeldLinksLocked(&out.Attr)
	}
	return errno
}

// attrHandle returns the handle through which to get or set the node's
// attributes, given the one the call came with. The kernel sends none for
// a directory (go-fuse passes its first open handle to a getattr, which
// may be stale): the newest handle of this boot that has the directory
// open answers for it (see openDir), else its path.
func (n *node) attrHandle(fh fs.FileHandle) fs.FileHandle {
	if d, ok := fh.(*dirHandle); fh != nil && (!ok || !d.stale()) {
		return fh
	}
	n.dirsMu.Lock()
	defer n.dirsMu.Unlock()
	for i := len(n.dirs) - 1; i >= 0; i-- {
		if d := n.dirs[i]; !d.stale() {
			return d
		}
	}
	return nil
}

// hideHeldLinksLocked takes the links that wait in the holding directory
// out of a file's link count: they are names the client deleted, so an
// unlinked file that is still open has none (st_nlink 0, as POSIX and
// every local filesystem have it).
func (f *FS) hideHeldLinksLocked(a *fuse.Attr) {
	if a.Mode&syscall.S_IFMT == syscall.S_IFDIR {
		return
	}
	if held := f.journal.heldLinks[a.Ino]; held > 0 {
		a.Nlink -= min(a.Nlink, held)
	}
}

// Setattr implements fs.NodeSetattrer, charged as a Stat (SMB's set-info
// costs what a query does; see chargeAttr); a truncation frees the blocks
// past the new size, and keeps what it cuts off in the undo log until the
// journal commits.
func (n *node) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) (errno syscall.Errno) {
	defer n.fs.metrics.begin(opSetattr)(0, &errno)
	if h, ok := fh.(*file); ok && h.stale() {
		return staleErrno
	}
	fh = n.attrHandle(fh)
	if errno = n.fs.chargeAttr(); errno != 0 {
		return errno
	}
	size, truncating := in.GetSize()
	if !truncating {
		if errno = n.LoopbackNode.Setattr(ctx, fh, in, out); errno == 0 {
			n.fs.journal.mu.RLock()
			n.fs.hideHeldLinksLocked(&out.Attr)
			n.fs.journal.mu.RUnlock()
		}
		return errno
	}
	if n.fs.journaling() {
		n.fs.lockJournal()
		defer n.fs.unlockJournal()
		if h, ok := fh.(*file); ok && h.stale() { // a loss while it was charged
			return staleErrno
		}
		if errno = n.saveCut(fh, int64(size)); errno != 0 {
			return errno
		}
	}
	if errno = n.LoopbackNode.Setattr(ctx, fh, in, out); errno != 0 {
		return errno
	}
	n.fs.truncate(out.Ino, int64(size))
	if n.fs.journaling() { // locked above
		n.fs.hideHeldLinksLocked(&out.Attr)
	}
	return 0
}

// saveCut keeps in the undo log what truncating the node's file to size
// cuts off (through the open file h, or a descriptor of its own).
func (n *node) saveCut(fh fs.FileHandle, size int64) syscall.Errno {
	fd := -1
	if h, ok := fh.(*file); ok && h.fd >= 0 {
		fd = h.fd
	} else {
		var err error
		fd, err = syscall.Open(n.path(), syscall.O_RDWR|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
		if err != nil {
			return 0 // not a file we can restore through: the truncation fails or is durable at once
		}
		defer syscall.Close(fd)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return toErrno(err)
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG || size >= st.Size {
		return 0
	}
	n.fs.beginLocked()
	return n.fs.undo.cut(fd, st.Ino, n.EmbeddedInode(), size)
}

// Statfs implements fs.NodeStatfser: the modelled usable capacity and the
// allocator's free space; inode figures come from the backing filesystem.
func (n *node) Statfs(ctx context.Context, out *fuse.StatfsOut) (errno syscall.Errno) {
	defer n.fs.metrics.begin(opStatfs)(0, &errno)
	n.fs.probeDelay()
	var s syscall.Statfs_t
	if err := syscall.Statfs(n.fs.backing, &s); err != nil {
		return toErrno(err)
	}
	out.FromStatfsT(&s)
	capacity, free := n.fs.Usage()
	out.Bsize, out.Frsize = BlockSize, BlockSize
	out.Blocks = uint64(capacity / BlockSize)
	out.Bfree = uint64(free / BlockSize)
	out.Bavail = out.Bfree
	return 0
}

// CopyFileRange implements fs.NodeCopyFileRanger by declining: the kernel
// then copies with reads and writes, which are charged.
func (n *node) CopyFileRange(ctx context.Context, fhIn fs.FileHandle, offIn uint64, out *fs.Inode, fhOut fs.FileHandle, offOut uint64, length uint64, flags uint64) (uint32, syscall.Errno) {
	return 0, syscall.ENOTSUP
}
