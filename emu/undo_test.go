package emu_test

import (
	"bytes"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/emu/storetest"
	"github.com/nasemu/nasemu/models/fixed"
)

func TestUndoStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T, size int64) emu.Store {
		return emu.NewUndoStore(emu.NewMemStore(size), 0, nil)
	})
}

// A power loss undoes exactly the writes and trims since the last Sync,
// through a volume as 'nasemu iscsi' uses it.
func TestUndoStorePowerLoss(t *testing.T) {
	m := newFixed(t, fixed.Config{Capacity: 1 << 20})
	v, _ := emu.NewVolume(m, emu.NewUndoStore(emu.NewMemStore(1<<20), 0, nil), emu.Options{Clock: &emu.VirtualClock{}})
	v.WriteAt([]byte("synced"), 100)
	v.WriteAt([]byte("trimmed later"), 20000)
	if err := v.Sync(); err != nil {
		t.Fatal(err)
	}
	v.WriteAt([]byte("SYNCED, then overwritten"), 100)
	v.WriteAt([]byte("never synced"), 8192)
	v.Trim(16384, 8192)
	if lost := v.PowerLoss(); lost != 24+12+8192 {
		t.Errorf("lost %d bytes, want the 36 bytes written and the 8 KiB trimmed since the sync", lost)
	}
	for _, c := range []struct {
		off  int64
		want string
	}{{100, "synced"}, {8192, "\x00\x00\x00\x00"}, {20000, "trimmed later"}, {106, "\x00\x00\x00"}} {
		p := make([]byte, len(c.want))
		v.ReadAt(p, c.off)
		if string(p) != c.want {
			t.Errorf("at %d after the power loss: %q, want %q", c.off, p, c.want)
		}
	}
	if lost := v.PowerLoss(); lost != 0 {
		t.Errorf("a second power loss lost %d bytes", lost)
	}
}

// Like a page cache, the store writes back when its saved blocks would
// exceed the limit and when its oldest unsynced write is 30 s old: what it
// wrote back survives a power loss.
func TestUndoStoreWritesBack(t *testing.T) {
	clock := &emu.VirtualClock{}
	s := emu.NewUndoStore(emu.NewMemStore(1<<20), 16<<10, clock)
	s.WriteAt(bytes.Repeat([]byte("a"), 12<<10), 0)
	s.WriteAt(bytes.Repeat([]byte("b"), 8<<10), 64<<10) // 20 KiB saved: the first write is written back
	if got := s.Unsynced(); got != 8<<10 {
		t.Errorf("unsynced %d bytes after passing the limit, want the last write's 8 KiB", got)
	}
	clock.SleepUntil(31 * time.Second)
	s.WriteAt([]byte("c"), 128<<10) // the 8 KiB are 31 s old: written back
	if lost := s.PowerLoss(); lost != 1 {
		t.Errorf("lost %d bytes, want only the last byte", lost)
	}
	p := make([]byte, 1)
	for off, want := range map[int64]byte{0: 'a', 64 << 10: 'b', 128 << 10: 0} {
		s.ReadAt(p, off)
		if p[0] != want {
			t.Errorf("at %d: %q, want %q", off, p[0], want)
		}
	}
}

// gatedStore is a store whose first Sync waits until the test opens the
// gate; it counts the Syncs.
type gatedStore struct {
	emu.Store
	syncing chan struct{} // closed when the first Sync has begun
	gate    chan struct{}
	syncs   atomic.Int64
}

func (s *gatedStore) Sync() error {
	if s.syncs.Add(1) == 1 {
		close(s.syncing)
		<-s.gate
	}
	return s.Store.Sync()
}

// A Sync (SYNCHRONIZE CACHE) holds no write while the base syncs, yet what
// it acknowledges survives a power loss, one during the base's sync too:
// writes before the Sync are kept, writes after it began are undone. A
// write-back at the limit does not sync the base; Close does.
func TestUndoStoreSyncsWithoutHoldingWrites(t *testing.T) {
	base := &gatedStore{Store: emu.NewMemStore(1 << 20), syncing: make(chan struct{}), gate: make(chan struct{})}
	s := emu.NewUndoStore(base, 16<<10, nil)
	s.WriteAt([]byte("before"), 0)
	synced := make(chan error, 1)
	go func() { synced <- s.Sync() }()
	<-base.syncing
	wrote := make(chan error, 1)
	go func() {
		_, err := s.WriteAt([]byte("AFTER!"), 4096)
		wrote <- err
	}()
	select {
	case err := <-wrote:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		close(base.gate)
		t.Fatal("a write waited for the base's sync")
	}
	if lost := s.PowerLoss(); lost != 6 {
		t.Errorf("a power loss during the sync lost %d bytes, want the 6 written after it began", lost)
	}
	close(base.gate)
	if err := <-synced; err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 6)
	for off, want := range map[int64]string{0: "before", 4096: "\x00\x00\x00\x00\x00\x00"} {
		s.ReadAt(p, off)
		if string(p) != want {
			t.Errorf("at %d after the power loss: %q, want %q", off, p, want)
		}
	}
	n := base.syncs.Load()
	s.WriteAt(bytes.Repeat([]byte("a"), 12<<10), 0)
	s.WriteAt(bytes.Repeat([]byte("b"), 8<<10), 64<<10) // past the limit: a write-back
	if got := s.Unsynced(); got != 8<<10 {
		t.Errorf("unsynced %d bytes after passing the limit, want the last write's 8 KiB", got)
	}
	if got := base.syncs.Load(); got != n {
		t.Errorf("a write-back synced the base %d times", got-n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := base.syncs.Load(); got != n+1 {
		t.Errorf("Close synced the base %d times, want once", got-n)
	}
}
