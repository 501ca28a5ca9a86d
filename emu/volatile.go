package emu

import (
	"sync"
)

// volatileBlock is the granularity at which a VolatileStore tracks
// unsynced data.
const volatileBlock = 4096

// VolatileStore models a volatile write cache in front of a durable store:
// writes are acknowledged from the cache and reach the store only on Sync;
// PowerLoss drops what was not synced, as a drive or controller without
// power-loss protection does. It is the crash clone of pebble's
// NewCrashableMem: what survives a crash is exactly what was synced.
type VolatileStore struct {
	base Store

	mu    sync.RWMutex
	dirty map[int64]*[volatileBlock]byte // block index → unsynced contents
}

var (
	_ Store   = (*VolatileStore)(nil)
	_ Trimmer = (*VolatileStore)(nil)
)

// NewVolatileStore puts a volatile write cache in front of base.
func NewVolatileStore(base Store) *VolatileStore {
	return &VolatileStore{base: base, dirty: map[int64]*[volatileBlock]byte{}}
}

// Unwrap returns the durable store below the cache.
func (s *VolatileStore) Unwrap() Store { return s.base }

// Size implements Store.
func (s *VolatileStore) Size() int64 { return s.base.Size() }

// ReadAt implements io.ReaderAt: unsynced blocks come from the cache, the
// rest from the store.
func (s *VolatileStore) ReadAt(p []byte, off int64) (int, error) {
	if err := checkRange(off, int64(len(p)), s.Size()); err != nil {
		return 0, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if _, err := s.base.ReadAt(p, off); err != nil {
		return 0, err
	}
	for done := 0; done < len(p); {
		pos := off + int64(done)
		idx, in := pos/volatileBlock, int(pos%volatileBlock)
		n := min(len(p)-done, volatileBlock-in)
		if b := s.dirty[idx]; b != nil {
			copy(p[done:done+n], b[in:])
		}
		done += n
	}
	return len(p), nil
}

// WriteAt implements io.WriterAt: the data stays in the cache until Sync.
func (s *VolatileStore) WriteAt(p []byte, off int64) (int, error) {
	if err := checkRange(off, int64(len(p)), s.Size()); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for done := 0; done < len(p); {
		pos := off + int64(done)
		idx, in := pos/volatileBlock, int(pos%volatileBlock)
		n := min(len(p)-done, volatileBlock-in)
		b := s.dirty[idx]
		if b == nil {
			b = new([volatileBlock]byte)
			if n < volatileBlock {
				// Keep the block's other bytes: read them from the store.
				end := min(int64(volatileBlock), s.Size()-idx*volatileBlock)
				if _, err := s.base.ReadAt(b[:end], idx*volatileBlock); err != nil {
					return done, err
				}
			}
			s.dirty[idx] = b
		}
		copy(b[in:], p[done:done+n])
		done += n
	}
	return len(p), nil
}

// Sync implements Store: the cache is written to the store, which is then
// synced. Data is dropped from the cache only once the store holds it.
func (s *VolatileStore) Sync() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for idx, b := range s.dirty {
		end := min(int64(volatileBlock), s.Size()-idx*volatileBlock)
		if _, err := s.base.WriteAt(b[:end], idx*volatileBlock); err != nil {
			return err
		}
	}
	if err := s.base.Sync(); err != nil {
		return err
	}
	clear(s.dirty)
	return nil
}

// Trim implements Trimmer: cached blocks in the range are dropped and the
// store's range trimmed (or zeroed).
func (s *VolatileStore) Trim(off, n int64) error {
	if err := checkRange(off, n, s.Size()); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for idx := off / volatileBlock; idx*volatileBlock < off+n; idx++ {
		b := s.dirty[idx]
		if b == nil {
			continue
		}
		lo := max(off, idx*volatileBlock) - idx*volatileBlock
		hi := min(off+n, (idx+1)*volatileBlock) - idx*volatileBlock
		clear(b[lo:hi])
	}
	return trimOrZero(s.base, off, n)
}

// PowerLoss drops every write that was not synced and returns how many
// bytes (in whole cache blocks) were lost.
func (s *VolatileStore) PowerLoss() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	lost := int64(len(s.dirty)) * volatileBlock
	clear(s.dirty)
	return lost
}

// Unsynced returns the bytes (in whole cache blocks) a power loss would lose
// now.
func (s *VolatileStore) Unsynced() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return int64(len(s.dirty)) * volatileBlock
}

// Close implements Store. Unsynced data is lost, as it is when a drive with
// a volatile cache loses power.
func (s *VolatileStore) Close() error { return s.base.Close() }

// trimOrZero trims a range of st, or writes zeros when st cannot trim.
func trimOrZero(st Store, off, n int64) error {
	if t, ok := st.(Trimmer); ok {
		return t.Trim(off, n)
	}
	return writeZeros(st, off, n)
}
