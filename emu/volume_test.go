package emu_test

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fixed"
)

func newFixed(t *testing.T, cfg fixed.Config) *fixed.Device {
	t.Helper()
	d, err := fixed.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Requests return when the model says, to within 10 % at the median for
// modelled latencies of 100 µs and more.
func TestPacing(t *testing.T) {
	for _, lat := range []time.Duration{200 * time.Microsecond, time.Millisecond} {
		timing(t, func() error {
			m := newFixed(t, fixed.Config{Capacity: 1 << 20, Read: lat})
			v, err := emu.NewVolume(m, emu.NewMemStore(1<<20), emu.Options{})
			if err != nil {
				t.Fatal(err)
			}
			p := make([]byte, 4096)
			var got []time.Duration
			for range 200 {
				start := time.Now()
				if _, err := v.ReadAt(p, 0); err != nil {
					t.Fatal(err)
				}
				got = append(got, time.Since(start))
			}
			slices.Sort(got)
			p50 := got[len(got)/2]
			t.Logf("model %v: p50 %v p90 %v", lat, p50, got[len(got)*9/10])
			if r := float64(p50) / float64(lat); r < 0.9 || r > 1.1 {
				return fmt.Errorf("model latency %v: p50 %v (ratio %.3f)", lat, p50, r)
			}
			return nil
		})
	}
}

// Concurrent requests share the model: four readers on a one-unit device
// of service time s take 4·s per round, on two units 2·s.
func TestConcurrentShareModel(t *testing.T) {
	const s = 2 * time.Millisecond
	for _, units := range []int{1, 2} {
		timing(t, func() error {
			m := newFixed(t, fixed.Config{Capacity: 1 << 20, Units: units, Read: s})
			clock := emu.NewWallClock(1, -1)
			v, _ := emu.NewVolume(m, emu.NewMemStore(1<<20), emu.Options{Clock: clock})
			const readers, each = 4, 25
			start := time.Now()
			var wg sync.WaitGroup
			for range readers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					p := make([]byte, 512)
					for range each {
						if _, err := v.ReadAt(p, 0); err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			want := time.Duration(readers*each/units) * s
			if r := float64(time.Since(start)) / float64(want); r < 0.95 || r > 1.15 {
				return fmt.Errorf("units=%d: %v for %d reads, want ≈ %v", units, time.Since(start), readers*each, want)
			}
			return nil
		})
	}
}

// failing is a model whose every request fails, like an array that lost
// more members than it tolerates.
type failing struct{ capacity int64 }

func (f failing) Capacity() int64 { return f.capacity }
func (f failing) Submit(at time.Duration, r models.Request) (time.Duration, error) {
	return at, models.ErrFailed
}

func TestModelFailureLeavesDataAlone(t *testing.T) {
	store := emu.NewMemStore(1 << 20)
	store.WriteAt([]byte("precious"), 0)
	v, _ := emu.NewVolume(failing{1 << 20}, store, emu.Options{Clock: &emu.VirtualClock{}})
	if _, err := v.WriteAt([]byte("garbage!"), 0); !errors.Is(err, models.ErrFailed) {
		t.Fatalf("WriteAt on a failed model = %v, want ErrFailed", err)
	}
	if _, err := v.ReadAt(make([]byte, 8), 0); !errors.Is(err, models.ErrFailed) {
		t.Fatalf("ReadAt on a failed model = %v, want ErrFailed", err)
	}
	p := make([]byte, 8)
	store.ReadAt(p, 0)
	if string(p) != "precious" {
		t.Fatalf("a failed write changed the store: %q", p)
	}
	if st := v.Stats(); len(st.Ops) != 2 || st.Ops[0].Errors != 1 {
		t.Errorf("stats %+v: want one failed read and one failed write", st)
	}
}

// A power loss of a volatile write cache loses exactly the writes after the
// last Sync.
func TestPowerLossKeepsSyncedData(t *testing.T) {
	m := newFixed(t, fixed.Config{Capacity: 1 << 20})
	v, _ := emu.NewVolume(m, emu.NewVolatileStore(emu.NewMemStore(1<<20)), emu.Options{Clock: &emu.VirtualClock{}})
	v.WriteAt([]byte("synced"), 100)
	if err := v.Sync(); err != nil {
		t.Fatal(err)
	}
	v.WriteAt([]byte("SYNCED, then overwritten"), 100)
	v.WriteAt([]byte("never synced"), 8192)
	if lost := v.PowerLoss(); lost != 2*4096 {
		t.Errorf("lost %d bytes, want two 4 KiB cache blocks", lost)
	}
	p := make([]byte, 6)
	v.ReadAt(p, 100)
	if string(p) != "synced" {
		t.Errorf("after power loss: %q, want the synced data", p)
	}
	q := make([]byte, 12)
	v.ReadAt(q, 8192)
	if !bytes.Equal(q, make([]byte, 12)) {
		t.Errorf("unsynced write survived the power loss: %q", q)
	}
}

// A FileStore keeps its data across a restart of the emulator.
func TestFileStorePersists(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lun")
	s, err := emu.OpenFileStore(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	s.WriteAt([]byte("persist"), 4096)
	s.Sync()
	s.Close()
	s, err = emu.OpenFileStore(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p := make([]byte, 7)
	s.ReadAt(p, 4096)
	if string(p) != "persist" {
		t.Fatalf("after reopen: %q", p)
	}
	if _, err := emu.OpenFileStore(path, 1<<19); err == nil {
		t.Fatal("a backing file larger than the volume was accepted (and would be truncated)")
	}
}

// The virtual clock advances to each completion, so model time is kept
// without waiting.
func TestVirtualClockAccountsModelTime(t *testing.T) {
	m := newFixed(t, fixed.Config{Capacity: 1 << 20, Write: time.Second})
	clock := &emu.VirtualClock{}
	v, _ := emu.NewVolume(m, emu.NewMemStore(1<<20), emu.Options{Clock: clock})
	for range 3 {
		v.WriteAt([]byte{1}, 0)
	}
	if clock.Now() != 3*time.Second {
		t.Errorf("virtual clock at %v after three 1 s writes", clock.Now())
	}
	if err := v.Charge(models.Request{Op: models.Read}); err == nil {
		t.Error("Charge accepted a data operation")
	}
	if err := v.Charge(models.Request{Op: models.Create}); err != nil {
		t.Error(err)
	}
}

func TestShortStoreRefused(t *testing.T) {
	m := newFixed(t, fixed.Config{Capacity: 1 << 20})
	if _, err := emu.NewVolume(m, emu.NewMemStore(1<<19), emu.Options{}); !errors.Is(err, emu.ErrShortStore) {
		t.Fatalf("got %v, want ErrShortStore", err)
	}
}

// A time scale of F makes every request last F times its model latency.
func TestTimeScale(t *testing.T) {
	timing(t, func() error {
		m := newFixed(t, fixed.Config{Capacity: 1 << 20, Read: 500 * time.Microsecond})
		v, _ := emu.NewVolume(m, emu.NewMemStore(1<<20), emu.Options{Clock: emu.NewWallClock(4, -1)})
		start := time.Now()
		for range 50 {
			v.ReadAt(make([]byte, 1), 0)
		}
		want := 50 * 4 * 500 * time.Microsecond
		if r := float64(time.Since(start)) / float64(want); r < 0.95 || r > 1.15 {
			return fmt.Errorf("50 reads at scale 4 took %v, want ≈ %v", time.Since(start), want)
		}
		return nil
	})
}

// timing runs a wall-clock measurement up to three times and fails only if
// every attempt misses. A shared, loaded machine can only make a paced
// request late, never early, so a single good attempt shows the pacing is
// right; three bad ones show it is not.
func timing(t *testing.T, attempt func() error) {
	t.Helper()
	var err error
	for range 3 {
		if err = attempt(); err == nil {
			return
		}
		t.Logf("attempt missed: %v", err)
	}
	t.Error(err)
}
