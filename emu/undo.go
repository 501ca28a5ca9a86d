package emu

import (
	"errors"
	"sync"
	"time"
)

// Write-back limits of an UndoStore, after a NAS's page cache (Linux's
// defaults, as fusefs's undo log): dirty data is written back once it is
// dirtyExpire old (dirty_expire_centisecs, 30 s) or when it exceeds the
// store's limit.
const (
	// DefaultUndoLimit is an UndoStore's limit when none is given: the
	// same 64 MiB of unsynced data as a mounted share's undo log.
	DefaultUndoLimit = 64 << 20
	dirtyExpire      = 30 * time.Second
	undoBlock        = 4096
)

// PowerLosser is implemented by stores that lose what was not synced when
// the power goes (VolatileStore, UndoStore): PowerLoss returns the bytes
// lost.
type PowerLosser interface {
	PowerLoss() int64
}

// UndoStore is a store whose unsynced writes a power loss undoes, the way a
// NAS's page cache loses the dirty pages of a file-backed LUN. Writes go to
// the base store at once (so that the emulator killed keeps them, as a NAS
// that wrote everything back before it stopped); before a block is first
// overwritten since the last Sync, its synced contents are saved, and
// PowerLoss puts them back. Like a page cache it writes back (forgets the
// saved blocks: a power loss keeps those writes) when the saved bytes would
// exceed its limit and when its oldest unsynced write is 30 s old by the
// clock. A write-back does not sync the base: the bytes are in it already,
// and the host writes them to its disk in its own time, as it does a stock
// server's; a sync under the lock made every write wait for the host's
// disk, which the modelled NAS never does. Sync and Close sync the base.
//
// Writes, trims and PowerLoss exclude each other, so that a loss either
// undoes a whole write or comes after it. Sync excludes them only while it
// drops the saved blocks, not during the base's sync.
type UndoStore struct {
	base  Store
	clock Clock
	limit int64

	power sync.RWMutex // writes and trims hold it shared, PowerLoss alone
	mu    sync.Mutex   // guards what follows
	saved map[int64][]byte
	bytes int64         // of saved blocks
	since time.Duration // model time of the first unsynced write
	dirty int64         // bytes written since the last sync
}

var (
	_ Store       = (*UndoStore)(nil)
	_ Trimmer     = (*UndoStore)(nil)
	_ PowerLosser = (*UndoStore)(nil)
)

// NewUndoStore wraps base. limit bounds the saved bytes (0 means
// DefaultUndoLimit); clock times the 30 s write-back (nil: none).
func NewUndoStore(base Store, limit int64, clock Clock) *UndoStore {
	if limit <= 0 {
		limit = DefaultUndoLimit
	}
	return &UndoStore{base: base, clock: clock, limit: limit, saved: map[int64][]byte{}}
}

// Unwrap returns the store below.
func (s *UndoStore) Unwrap() Store { return s.base }

// Size implements Store.
func (s *UndoStore) Size() int64 { return s.base.Size() }

// ReadAt implements io.ReaderAt.
func (s *UndoStore) ReadAt(p []byte, off int64) (int, error) { return s.base.ReadAt(p, off) }

// Close implements Store. It syncs the base first: what was written back
// is on the host's disk after a clean stop.
func (s *UndoStore) Close() error { return errors.Join(s.base.Sync(), s.base.Close()) }

// WriteAt implements io.WriterAt.
func (s *UndoStore) WriteAt(p []byte, off int64) (int, error) {
	if err := checkRange(off, int64(len(p)), s.Size()); err != nil {
		return 0, err
	}
	s.power.RLock()
	defer s.power.RUnlock()
	if err := s.save(off, int64(len(p))); err != nil {
		return 0, err
	}
	return s.base.WriteAt(p, off)
}

// Trim implements Trimmer. A trim larger than the limit is not kept: the
// store writes back first and the trim is durable at once.
func (s *UndoStore) Trim(off, n int64) error {
	if err := checkRange(off, n, s.Size()); err != nil {
		return err
	}
	s.power.RLock()
	defer s.power.RUnlock()
	if err := s.save(off, n); err != nil {
		return err
	}
	return trimOrZero(s.base, off, n)
}

// save keeps the synced contents of the blocks of [off, off+n) not saved
// yet, writing back first when they would not fit.
func (s *UndoStore) save(off, n int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := time.Duration(0)
	if s.clock != nil {
		now = s.clock.Now()
	}
	first, last := off/undoBlock, (off+n-1)/undoBlock
	if n == 0 {
		return nil
	}
	if s.bytes+(last-first+1)*undoBlock > s.limit || s.dirty > 0 && s.clock != nil && now-s.since >= dirtyExpire {
		s.writeBackLocked()
	}
	if n > s.limit {
		return nil // written back above; the caller's change is durable at once
	}
	if s.dirty == 0 {
		s.since = now
	}
	s.dirty += n
	for b := first; b <= last; b++ {
		if _, ok := s.saved[b]; ok {
			continue
		}
		old := make([]byte, min(undoBlock, s.Size()-b*undoBlock))
		if _, err := s.base.ReadAt(old, b*undoBlock); err != nil {
			return err
		}
		s.saved[b] = old
		s.bytes += int64(len(old))
	}
	return nil
}

// writeBackLocked makes what was written durable for the modelled NAS —
// a power loss no longer undoes it — by forgetting the saved blocks.
func (s *UndoStore) writeBackLocked() {
	clear(s.saved)
	s.bytes, s.dirty = 0, 0
}

// Sync implements Store: every write completed before it survives a power
// loss, and is on the base's storage when Sync returns. The saved blocks
// are dropped first, under the lock, so that a loss from then on keeps
// those writes; the base is synced after, without the lock, so that
// writes and trims go on meanwhile (a loss undoes those, as they came
// after the sync began). A failed sync of the base is reported, and the
// writes stay kept by a power loss, as a real flush that fails may have
// written any part of them.
func (s *UndoStore) Sync() error {
	s.mu.Lock()
	s.writeBackLocked()
	s.mu.Unlock()
	return s.base.Sync()
}

// PowerLoss implements PowerLosser: every write since the last sync (or
// write-back) is undone. It returns the bytes of those writes.
func (s *UndoStore) PowerLoss() int64 {
	s.power.Lock()
	defer s.power.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	lost := s.dirty
	for b, old := range s.saved {
		// A block that cannot be put back stays as written: the loss is
		// then smaller than it should be, never larger.
		s.base.WriteAt(old, b*undoBlock)
	}
	clear(s.saved)
	s.bytes, s.dirty = 0, 0
	s.base.Sync()
	return lost
}

// Unsynced returns the bytes written since the last sync: what a power loss
// would undo now.
func (s *UndoStore) Unsynced() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dirty
}
