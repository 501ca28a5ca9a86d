package fusefs

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/emu/extent"
	"github.com/nasemu/nasemu/models"
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

	replacement func(member int) (models.Device, error)
	early       *earlyClock
	probing     atomic.Pointer[probe] // while the compensation is measured
	probeWait   atomic.Int64          // wall nanoseconds (see SetProbeWait)
	// transferEarly is how early a read's or a write's answer goes per MiB
	// it moves, in wall nanoseconds (see SetTransferEarly).
	transferEarly [2]atomic.Int64 // [0] reads, [1] writes
	// fileOpEarly is how early an open's (or create's) and a close's
	// answer goes, in wall nanoseconds (see SetFileOpEarly).
	fileOpEarly  [2]atomic.Int64 // [0] opens and creates, [1] closes
	compensation time.Duration   // as in Options
	front        Front
	splitsSMB    bool // SplitsSMBWrites, for FrontSMB
	spliceReads  bool // the mount splices reads (see splice.go)

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

// entryTimeout is how long the kernel may cache names and attributes: a
// second, as SMB clients cache attributes.
const entryTimeout = time.Second
