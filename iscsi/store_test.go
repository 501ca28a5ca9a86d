package iscsi

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/emu/storetest"
	"github.com/nasemu/nasemu/iscsi/scsi"
	"github.com/nasemu/nasemu/models"
)

// lunStore is an emu.Store over an iSCSI LUN, reached through this
// package's initiator: what a block layer gives the users of a disk. The
// LUN moves whole blocks, so a write that starts or ends inside a block
// reads the block first and writes it whole (read-modify-write); such a
// write excludes every other write while it runs, so that it cannot undo
// one into the same block. The end of the LUN is the target's to enforce:
// a command past it fails with LOGICAL BLOCK ADDRESS OUT OF RANGE, which
// the initiator's StatusError matches as models.ErrOutOfRange (only what
// no CDB can carry, a negative offset, is refused here). An access of more
// than one command (beyond the LUN's maximum transfer length, 32 MiB on
// nasemu's target) that runs past the end may be done in part; the suite's
// accesses are far smaller. Trim unmaps the whole blocks of its range and
// writes zeros over the partial ones at its edges (the LUN reads unmapped
// blocks as zeros: LBPRZ).
type lunStore struct {
	lun  *LUN
	size int64
	bs   int64
	mu   sync.RWMutex // held shared by whole-block writes, exclusively by the others
}

var (
	_ emu.Store   = (*lunStore)(nil)
	_ emu.Trimmer = (*lunStore)(nil)
)

// openLUNStore logs in to a target's LUN 0 and returns it as a store.
func openLUNStore(ctx context.Context, addr string) (*lunStore, error) {
	lun, err := OpenLUN(ctx, addr, SessionConfig{Addr: addr, Target: testIQN}, 0)
	if err != nil {
		return nil, err
	}
	if !lun.cap.Thin {
		lun.Close()
		return nil, fmt.Errorf("LUN at %s is not thin: no Trim", addr)
	}
	return &lunStore{lun: lun, size: lun.size(), bs: int64(lun.cap.BlockSize)}, nil
}

// check refuses an access of n bytes at off that no CDB can carry.
func (s *lunStore) check(off, n int64) error {
	if off < 0 || n < 0 || off+n < off {
		return fmt.Errorf("%w: [%d, +%d) on a LUN", models.ErrOutOfRange, off, n)
	}
	return nil
}

// blocks returns the whole-block range [lo, hi) that holds [off, off+n).
func (s *lunStore) blocks(off, n int64) (lo, hi int64) {
	return off / s.bs * s.bs, (off + n + s.bs - 1) / s.bs * s.bs
}

// Size implements emu.Store.
func (s *lunStore) Size() int64 { return s.size }

// ReadAt implements io.ReaderAt.
func (s *lunStore) ReadAt(p []byte, off int64) (int, error) {
	if err := s.check(off, int64(len(p))); err != nil || len(p) == 0 {
		return 0, err
	}
	lo, hi := s.blocks(off, int64(len(p)))
	if lo == off && hi == off+int64(len(p)) {
		if err := s.lun.transfer(context.Background(), false, uint64(lo/s.bs), p); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	buf := make([]byte, hi-lo)
	if err := s.lun.transfer(context.Background(), false, uint64(lo/s.bs), buf); err != nil {
		return 0, err
	}
	return copy(p, buf[off-lo:]), nil
}

// WriteAt implements io.WriterAt.
func (s *lunStore) WriteAt(p []byte, off int64) (int, error) {
	if err := s.check(off, int64(len(p))); err != nil || len(p) == 0 {
		return 0, err
	}
	ctx := context.Background()
	lo, hi := s.blocks(off, int64(len(p)))
	if lo == off && hi == off+int64(len(p)) {
		s.mu.RLock()
		defer s.mu.RUnlock()
		if err := s.lun.transfer(ctx, true, uint64(lo/s.bs), p); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	buf := make([]byte, hi-lo)
	// The first and last blocks keep the bytes the write does not cover.
	if err := s.lun.transfer(ctx, false, uint64(lo/s.bs), buf[:s.bs]); err != nil {
		return 0, err
	}
	if last := hi - s.bs; last > lo {
		if err := s.lun.transfer(ctx, false, uint64(last/s.bs), buf[last-lo:]); err != nil {
			return 0, err
		}
	}
	copy(buf[off-lo:], p)
	if err := s.lun.transfer(ctx, true, uint64(lo/s.bs), buf); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Trim implements emu.Trimmer.
func (s *lunStore) Trim(off, n int64) error {
	if err := s.check(off, n); err != nil {
		return err
	}
	// The whole blocks inside the range, [first, end).
	first, end := (off+s.bs-1)/s.bs*s.bs, (off+n)/s.bs*s.bs
	if first >= end {
		_, err := s.WriteAt(make([]byte, n), off)
		return err
	}
	if first > off {
		if _, err := s.WriteAt(make([]byte, first-off), off); err != nil {
			return err
		}
	}
	if off+n > end {
		if _, err := s.WriteAt(make([]byte, off+n-end), end); err != nil {
			return err
		}
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.lun.deallocate(context.Background(), uint64(first/s.bs), uint64((end-first)/s.bs))
}

// Sync implements emu.Store with SYNCHRONIZE CACHE.
func (s *lunStore) Sync() error { return s.lun.s.SyncCache(context.Background(), s.lun.lun) }

// Close implements emu.Store: it syncs and logs out.
func (s *lunStore) Close() error { return s.lun.Close() }

// TestStoreConformance runs emu/storetest over iSCSI: each store is LUN 0
// of a target on 127.0.0.1 whose volume keeps its bytes in a file (as
// 'nasemu iscsi --backing' does), read and written through this package's
// initiator, at both block sizes a LUN offers.
func TestStoreConformance(t *testing.T) {
	for _, bs := range []int{512, 4096} {
		t.Run(fmt.Sprintf("bs=%d", bs), func(t *testing.T) {
			storetest.Run(t, func(t *testing.T, size int64) emu.Store {
				file, err := emu.OpenFileStore(filepath.Join(t.TempDir(), "lun.img"), size)
				if err != nil {
					t.Fatal(err)
				}
				tt := startTargetLU(t, freeModel(t, size), file, scsi.Config{BlockSize: bs}, TargetConfig{})
				s, err := openLUNStore(ctxT(t, 30*time.Second), tt.addr)
				if err != nil {
					t.Fatal(err)
				}
				return s
			})
		})
	}
}
