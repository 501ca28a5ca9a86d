package fusefs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/emu/extent"
	"github.com/nasemu/nasemu/models"
	"golang.org/x/sys/unix"
)

// BlockSize is the allocation unit of the share's extent allocator, the
// block size of common NAS filesystems (ext4, btrfs).
const BlockSize = 4096

// Options are a filesystem's optional settings. The zero value is valid.
type Options struct {
	// Logger receives events worth a person's attention; nil is quiet.
	Logger *slog.Logger
	// Metrics, when set, records the filesystem's operations.
	Metrics *Metrics
	// UndoLimit bounds the undo log kept for PowerLoss (see the package
	// documentation); 0 means 64 MiB.
	UndoLimit int64
	// Replacement builds the new drive that "replace N" puts in the place
	// of failed array member N; nil makes replacing an error.
	Replacement func(member int) (models.Device, error)
	// Debug logs every FUSE request (go-fuse's debug output).
	Debug bool
	// Compensation is how much earlier than the model's completion time
	// a request is answered, to make up for the time a request spends in
	// the kernel and in FUSE before it reaches the model and after it is
	// answered: with it, the latency a client measures is the model's.
	// 0 means to measure it at mount (the round trip of an uncharged
	// request); negative means none. It is wall time: with a time scale,
	// it is scaled into model time.
	Compensation time.Duration
	// Front is what serves the mount to its clients; it decides which
	// FUSE calls are client requests that the model charges.
	Front Front
	// JournalInterval is how often the running transaction of namespace
	// changes (creates, deletes, renames, truncations) commits, in model
	// time (with a time scale, it is scaled into wall time); a power loss
	// undoes the changes since the last commit (see the package
	// documentation). Pass the setup's nas.Config.JournalInterval. 0 means
	// DefaultJournalInterval (ext4's 5 s); negative commits every change at
	// once, so that a power loss keeps the namespace.
	JournalInterval time.Duration
	// ClosedLoop is the longest gap (wall time) between a request's
	// answer and the next request that the model does not see when
	// nothing else is in flight: the client's own time between requests
	// and FUSE's round trip, which the sim: target's clients do not take
	// (see emu.Options.ClosedLoop). 0 means DefaultClosedLoop; negative
	// charges every request at its arrival.
	ClosedLoop time.Duration
}

// DefaultClosedLoop is the default Options.ClosedLoop: several times the
// FUSE round trip of a paced request on a quiet host, and short next to
// the think time of an application that computes between its requests,
// which stays the client's.
const DefaultClosedLoop = 500 * time.Microsecond

// Front is what stands between the mount and the clients of the share.
type Front int

const (
	// FrontDirect: the clients use the mount directly, so every FUSE call
	// is a client's request; lookups, getattrs and setattrs are charged as
	// the protocol's stat.
	FrontDirect Front = iota
	// FrontSMB: smbd serves the mount. It makes several FUSE calls for one
	// SMB request (a client's create-write-close of a file costs smbd two
	// lookups, a getattr, two setattrs, the create and the release), and
	// the name and attribute calls among them are part of the client's
	// CREATE, QUERY_INFO or CLOSE, which the create, open and close
	// charge. So lookups, getattrs and setattrs are not charged: the model
	// charges each client request once, as it does in virtual time. The
	// close is charged when smbd closes its descriptor (FLUSH), which the
	// client's SMB CLOSE waits for, not at RELEASE, which nobody waits for
	// (see closeAtFlush); files opened for writing are direct I/O with
	// parallel writes, so that a client's queue depth reaches the model
	// (see frontOpenFlags).
	FrontSMB
)

// FS is an emulated share: a backing directory, served through FUSE, whose
// operations are charged to a volume.
type FS struct {
	backing string
	vol     *emu.Volume
	log     *slog.Logger
	metrics *Metrics
	debug   bool

	replacement  func(member int) (models.Device, error)
	early        *earlyClock
	probing      atomic.Pointer[probe] // while the compensation is measured
	compensation time.Duration         // as in Options
	front        Front
	splitsSMB    bool // SplitsSMBWrites, for FrontSMB

	mu    sync.Mutex // guards alloc
	alloc *extent.Allocator

	undo    undoLog
	journal journal
	reboot  reboot

	lock       *os.File  // the backing directory, flocked for the share's life
	root       *fs.Inode // the mount's root node, once mounted
	server     *fuse.Server
	mountpoint string
	unmount    sync.Once
	unmountErr error
}

// New returns a filesystem serving the backing directory, charging its
// operations to a volume built on model with the given clock (nil means
// real time). The allocator's state is loaded from the backing directory
// and reconciled with its files. The filesystem holds an exclusive lock on
// the backing directory until Unmount: a directory that another share (of
// this process or another) serves is an *emu.InUseError naming the
// holder.
func New(model models.Device, clock emu.Clock, backing string, opts Options) (*FS, error) {
	st, err := os.Stat(backing)
	if err != nil {
		return nil, fmt.Errorf("backing directory: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("backing directory %s: %w", backing, syscall.ENOTDIR)
	}
	backing, err = filepath.Abs(backing)
	if err != nil {
		return nil, err
	}
	// One share at a time serves a backing directory: two would allocate
	// its blocks twice and undo each other's files.
	lock, err := lockBacking(backing)
	if err != nil {
		return nil, err
	}
	f, err := newFS(model, clock, backing, opts)
	if err != nil {
		lock.Close()
		return nil, err
	}
	f.lock = lock
	return f, nil
}

// lockBacking takes the exclusive lock of a backing directory (see
// emu.Lock), held while the returned directory stays open.
func lockBacking(backing string) (*os.File, error) {
	d, err := os.OpenFile(backing, os.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("backing directory: %w", err)
	}
	if err := emu.Lock(d, backing); err != nil {
		d.Close()
		return nil, fmt.Errorf("backing directory: %w", err)
	}
	return d, nil
}

// newFS is New for a locked backing directory.
func newFS(model models.Device, clock emu.Clock, backing string, opts Options) (*FS, error) {
	var err error
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.UndoLimit == 0 {
		opts.UndoLimit = 64 << 20
	}
	if clock == nil {
		clock = emu.NewWallClock(1, -1)
	}
	early := &earlyClock{Clock: clock}
	if opts.ClosedLoop == 0 {
		opts.ClosedLoop = DefaultClosedLoop
	}
	closedLoop := time.Duration(float64(max(0, opts.ClosedLoop)) / early.scale())
	vol, err := emu.NewVolume(model, chargeStore{size: model.Capacity()}, emu.Options{Clock: early, Logger: opts.Logger, ClosedLoop: closedLoop})
	if err != nil {
		return nil, err
	}
	f := &FS{backing: backing, vol: vol, early: early, compensation: opts.Compensation, replacement: opts.Replacement, front: opts.Front, splitsSMB: opts.Front == FrontSMB && SplitsSMBWrites(), log: opts.Logger, metrics: opts.Metrics, debug: opts.Debug}
	f.undo.limit = opts.UndoLimit
	f.undo.files = map[uint64]*undoFile{}
	if opts.JournalInterval == 0 {
		opts.JournalInterval = DefaultJournalInterval
	}
	f.journal.interval = -1
	if opts.JournalInterval > 0 {
		f.journal.interval = time.Duration(float64(opts.JournalInterval) * early.scale())
	}
	f.journal.heldLinks = map[uint64]uint32{}
	f.journal.free = map[uint64]bool{}
	if err := recoverHeld(backing, f.log); err != nil {
		return nil, err
	}
	if f.alloc, err = loadState(backing, model.Capacity(), f.log); err != nil {
		return nil, err
	}
	if err := f.loadArrays(); err != nil {
		return nil, err
	}
	if f.metrics != nil {
		f.metrics.attach(f)
	}
	return f, nil
}

// Volume returns the volume the filesystem charges: its model, clock and
// statistics.
func (f *FS) Volume() *emu.Volume { return f.vol }

// Backing returns the absolute path of the backing directory.
func (f *FS) Backing() string { return f.backing }

// Usage returns the modelled usable capacity and the bytes still free.
// The blocks of files deleted in the running transaction count as free,
// as ext4's statfs counts them, though a write reuses them only after the
// commit (which a write that does not fit forces).
func (f *FS) Usage() (capacity, free int64) {
	f.lockJournal()
	defer f.unlockJournal()
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.alloc.Capacity(), f.alloc.Free() + f.pendingFree()
}

// Layout returns the number of extents of the file at path (relative to
// the backing directory) and of free runs on the volume: the file's and the
// volume's fragmentation.
func (f *FS) Layout(path string) (fileExtents, freeRuns int, err error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(filepath.Join(f.backing, path), &st); err != nil {
		return 0, 0, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.alloc.Extents(st.Ino), f.alloc.FreeRuns(), nil
}

// charge submits a file operation to the model and waits for it.
func (f *FS) charge(op models.Op) syscall.Errno {
	return toErrno(f.vol.Charge(models.Request{Op: op}))
}

// chargeFile charges a file operation on the regular file ino of the
// given size. The request names the file as the sim target does: by the
// volume address of its first byte, with its size as the length. Layers of
// the model key state on that range (a NAS's inode page, an SMB client's
// read-ahead and write-behind within the open file), so a share whose file
// ops named no range would cost a sequential reader what a random one
// pays. A file without blocks yet is named by where its first block will
// go.
func (f *FS) chargeFile(op models.Op, ino uint64, size int64) syscall.Errno {
	f.mu.Lock()
	start, ok := f.alloc.Start(ino)
	if !ok {
		start = f.alloc.Next()
	}
	f.mu.Unlock()
	return f.chargeRange(op, start, size)
}

// chargeRange charges a file operation on the file at start (a volume
// address) of size bytes, the size cut to the volume's end.
func (f *FS) chargeRange(op models.Op, start, size int64) syscall.Errno {
	size = max(0, min(size, f.vol.Capacity()-start))
	return toErrno(f.vol.Charge(models.Request{Op: op, Offset: start, Length: size}))
}

// chargeCreate charges the creation of a regular file. Its size is not
// known yet (the client writes it after the create): the request names the
// file by where its first block will go and reaches to the volume's end, so
// that the client's writes into the new file are writes within it, as in
// the sim target, where a job's file has its size from the start.
func (f *FS) chargeCreate() syscall.Errno {
	f.mu.Lock()
	start := f.alloc.Next()
	f.mu.Unlock()
	return f.chargeRange(models.Create, start, f.vol.Capacity())
}

// chargeAttr charges a name or attribute call (lookup, getattr, setattr)
// as a stat, unless the front folds such calls into the client request
// that made them (see Front).
func (f *FS) chargeAttr() syscall.Errno {
	if f.front == FrontSMB {
		return 0
	}
	return f.charge(models.Stat)
}

// mapRange returns the extents of [off, off+n) of a file, allocating holes
// when alloc is set.
// A range that does not fit is retried after a commit (see retryAlloc).
func (f *FS) mapRange(ino uint64, off, n int64, alloc bool, dst []extent.Extent) ([]extent.Extent, syscall.Errno) {
	f.mu.Lock()
	ext, err := f.alloc.Map(ino, off, n, alloc, dst)
	f.mu.Unlock()
	if alloc && errors.Is(err, extent.ErrNoSpace) && f.retryAlloc() {
		f.mu.Lock()
		ext, err = f.alloc.Map(ino, off, n, alloc, dst)
		f.mu.Unlock()
	}
	return ext, toErrno(err)
}

// mapWrite allocates and returns the extents of a write of n bytes at off,
// cut short to what fits when the volume is nearly full; it returns the
// bytes that will be written.
// The blocks of deletes not yet committed are reused after a commit that
// a write which does not fit forces (see retryAlloc).
func (f *FS) mapWrite(ino uint64, off, n int64, dst []extent.Extent) ([]extent.Extent, int64, syscall.Errno) {
	f.mu.Lock()
	k := f.alloc.Fit(ino, off, n)
	if k < n {
		f.mu.Unlock()
		f.retryAlloc()
		f.mu.Lock()
		k = f.alloc.Fit(ino, off, n)
	}
	defer f.mu.Unlock()
	if k == 0 && n > 0 {
		return dst, 0, syscall.ENOSPC
	}
	ext, err := f.alloc.Map(ino, off, k, true, dst)
	return ext, k, toErrno(err)
}

// truncate frees a file's blocks at or beyond size.
func (f *FS) truncate(ino uint64, size int64) {
	f.mu.Lock()
	f.alloc.Truncate(ino, size)
	f.mu.Unlock()
}

// remove frees every block of a file.
func (f *FS) remove(ino uint64) {
	f.mu.Lock()
	f.alloc.Remove(ino)
	f.mu.Unlock()
	f.undo.forget(ino)
}

// chargeIO serves a read or write of a file whose range maps to the
// extents ext: the mapped parts (holes are free) are charged to the volume
// together, as a filesystem issues the parts of a fragmented request, so an
// array serves them in parallel; data moves the bytes between the client
// and the backing file while the modelled time runs, so that the backing
// file's own time is hidden inside the model's (unless it is longer); the
// call returns when the model says the last part completes.
func (f *FS) chargeIO(op models.Op, ext []extent.Extent, data func() error) syscall.Errno {
	var buf [4]models.Request
	rs := buf[:0]
	for _, e := range ext {
		if e.Physical >= 0 {
			rs = append(rs, models.Request{Op: op, Offset: e.Physical, Length: e.Length})
		}
	}
	return toErrno(f.vol.Access(rs, data))
}

// chargeStore is the volume's store: it keeps no bytes (they live in the
// backing files) and leaves read buffers alone, so the volume only paces
// and counts. It is deliberately not a conforming emu.Store.
type chargeStore struct{ size int64 }

func (s chargeStore) ReadAt(p []byte, _ int64) (int, error)  { return len(p), nil }
func (s chargeStore) WriteAt(p []byte, _ int64) (int, error) { return len(p), nil }
func (s chargeStore) Sync() error                            { return nil }
func (s chargeStore) Size() int64                            { return s.size }
func (s chargeStore) Close() error                           { return nil }

// node is a file or directory of the share: go-fuse's loopback node with
// every operation charged to the model and the allocator kept in step.
type node struct {
	*fs.LoopbackNode
	fs *FS

	dirsMu sync.Mutex
	dirs   []*dirHandle // a directory's open handles (see openDir)
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

// ProbePrefix starts the name of the file 'nasemu nas' times the host's
// SMB round trip with (smb.ProbeName, followed by its process id) in the
// share's root. The root's listing leaves it out, but lookups find it:
// the prober opens it by name through smbd.
const ProbePrefix = ".nasemu-probe-"

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
	if errno = n.fs.chargeCreate(); errno != 0 {
		return nil, nil, 0, errno
	}
	if !n.fs.journaling() {
		boot := n.fs.reboot.boot.Load()
		inode, lfh, _, errno := n.LoopbackNode.Create(ctx, name, backingFlags(flags), mode, out)
		if errno != 0 {
			return nil, nil, 0, errno
		}
		ino := out.Attr.Ino // the backing inode number, before go-fuse renumbers it
		if flags&syscall.O_TRUNC != 0 {
			n.fs.truncate(ino, 0)
		}
		h := n.fs.newFile(lfh.(*fs.LoopbackFile), ino, inode, boot)
		return inode, h, n.fs.frontOpenFlags(flags), 0
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
	h := n.fs.newFile(lfh.(*fs.LoopbackFile), ino, inode, boot)
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
	if errno = n.fs.chargeFile(models.Open, out.Ino, int64(out.Size)); errno != 0 {
		lf.Release(ctx)
		return nil, 0, errno
	}
	if flags&syscall.O_TRUNC != 0 && !trunc {
		n.fs.truncate(out.Ino, 0)
	}
	return n.fs.newFile(lf, out.Ino, n.EmbeddedInode(), boot), n.fs.frontOpenFlags(flags), 0
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
	if ok && st.Mode&syscall.S_IFMT == syscall.S_IFREG {
		errno = n.fs.chargeFile(models.Remove, st.Ino, st.Size)
	} else {
		errno = n.fs.charge(models.Remove)
	}
	if errno != 0 {
		return errno
	}
	if !n.fs.journaling() {
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

// entryTimeout is how long the kernel may cache names and attributes: a
// second, as SMB clients cache attributes.
const entryTimeout = time.Second
