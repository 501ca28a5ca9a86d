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
			if r := float64(p50) / float64(lat); r < 0.9 {
				return fmt.Errorf("%w: model latency %v: p50 %v (ratio %.3f)", errEarly, lat, p50, r)
			} else if r > 1.1 {
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
			took := time.Since(start)
			if r := float64(took) / float64(want); r < 0.95 {
				return fmt.Errorf("%w: units=%d: %v for %d reads, want ≈ %v", errEarly, units, took, readers*each, want)
			} else if r > 1.15 {
				return fmt.Errorf("units=%d: %v for %d reads, want ≈ %v", units, took, readers*each, want)
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
		took := time.Since(start)
		if r := float64(took) / float64(want); r < 0.95 {
			return fmt.Errorf("%w: 50 reads at scale 4 took %v, want ≈ %v", errEarly, took, want)
		} else if r > 1.15 {
			return fmt.Errorf("50 reads at scale 4 took %v, want ≈ %v", took, want)
		}
		return nil
	})
}

// timing runs a wall-clock measurement up to three times and fails if
// every attempt misses, or at once if one is early (errEarly). A shared,
// loaded machine can only make a paced request late, never early, so a
// single good attempt shows the pacing is right, an early one that it is
// not, and three late ones that it is not either.
func timing(t *testing.T, attempt func() error) {
	t.Helper()
	var err error
	for range 3 {
		if err = attempt(); err == nil {
			return
		}
		if errors.Is(err, errEarly) {
			break
		}
		t.Logf("attempt missed: %v", err)
	}
	t.Error(err)
}

// errEarly marks a timing attempt that answered before the model's time,
// which no load on the host explains.
var errEarly = errors.New("early")

// manualClock is a clock that the test moves: SleepUntil jumps to the
// deadline (a VirtualClock), Advance stands for a client's own time
// between requests.
// Only the test's goroutine moves it.
type manualClock struct{ emu.VirtualClock }

func (c *manualClock) Advance(d time.Duration) { c.SleepUntil(c.Now() + d) }

// With ClosedLoop, a queue-depth-1 client's own time between requests is
// not the model's, up to the limit: the model sees its requests back to
// back, as the sim: target's client issues them. Longer pauses are kept.
func TestClosedLoop(t *testing.T) {
	const service, limit = time.Millisecond, 500 * time.Microsecond
	for _, tc := range []struct {
		name              string
		think, closedLoop time.Duration
		wantGap           time.Duration // between a read's arrival in the model and the previous completion
	}{
		{"back to back", 0, limit, 0},
		{"short think absorbed", 200 * time.Microsecond, limit, 0},
		{"short think without closed loop", 200 * time.Microsecond, 0, 200 * time.Microsecond},
		{"long think kept", 800 * time.Microsecond, limit, 800 * time.Microsecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &manualClock{}
			rec := &recorder{Device: newFixed(t, fixed.Config{Capacity: 1 << 20, Read: service})}
			v, err := emu.NewVolume(rec, emu.NewMemStore(1<<20), emu.Options{Clock: clock, ClosedLoop: tc.closedLoop})
			if err != nil {
				t.Fatal(err)
			}
			clock.Advance(time.Second) // a first request long after the start
			for range 4 {
				if _, err := v.ReadAt(make([]byte, 512), 0); err != nil {
					t.Fatal(err)
				}
				clock.Advance(tc.think)
			}
			for i := 1; i < len(rec.at); i++ {
				if gap := rec.at[i] - (rec.at[i-1] + service); gap != tc.wantGap {
					t.Errorf("read %d arrived %v after the previous completed, want %v", i, gap, tc.wantGap)
				}
			}
			if rec.at[0] != time.Second {
				t.Errorf("first read charged at %v, want its arrival (1s)", rec.at[0])
			}
		})
	}
}

// recorder records the arrival times the model sees.
type recorder struct {
	models.Device
	at []time.Duration
}

func (r *recorder) Submit(at time.Duration, q models.Request) (time.Duration, error) {
	r.at = append(r.at, at)
	return r.Device.Submit(at, q)
}

// A request that arrives while another is in flight is charged at its
// arrival: with more than one request outstanding the client is not
// waiting for a completion to issue it.
func TestClosedLoopOnlyWhenIdle(t *testing.T) {
	const service = time.Millisecond
	clock := &manualClock{}
	rec := &recorder{Device: newFixed(t, fixed.Config{Capacity: 1 << 20, Read: service, Units: 2})}
	v, _ := emu.NewVolume(rec, emu.NewMemStore(1<<20), emu.Options{Clock: clock, ClosedLoop: 500 * time.Microsecond})
	clock.Advance(time.Second)
	v.ReadAt(make([]byte, 512), 0) // completes at 1.001 s
	clock.Advance(200 * time.Microsecond)
	err := v.Access([]models.Request{{Op: models.Read, Length: 512}}, func() error {
		_, err := v.ReadAt(make([]byte, 512), 0) // issued while the first is in flight
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{time.Second, time.Second + service, time.Second + service + 200*time.Microsecond}
	if !slices.Equal(rec.at, want) {
		t.Errorf("arrivals %v, want %v", rec.at, want)
	}
}

// Access charges the parts of one client request together (an array with
// two units serves two parts in one service time), moves the data once,
// and does not move it when the model fails the request.
func TestAccess(t *testing.T) {
	clock := &manualClock{}
	v, _ := emu.NewVolume(newFixed(t, fixed.Config{Capacity: 1 << 20, Read: time.Millisecond, Units: 2}), emu.NewMemStore(1<<20), emu.Options{Clock: clock})
	moved := 0
	parts := []models.Request{{Op: models.Read, Offset: 0, Length: 4096}, {Op: models.Read, Offset: 1 << 19, Length: 4096}}
	if err := v.Access(parts, func() error { moved++; return nil }); err != nil {
		t.Fatal(err)
	}
	if moved != 1 || clock.Now() != time.Millisecond {
		t.Errorf("data moved %d times, done at %v; want once, at 1ms (two parts on two units)", moved, clock.Now())
	}
	if st := v.Stats(); len(st.Ops) != 1 || st.Ops[0].Count != 2 || st.Ops[0].Bytes != 8192 {
		t.Errorf("stats %+v, want 2 reads of 8192 bytes", st.Ops)
	}
	f, _ := emu.NewVolume(failing{1 << 20}, emu.NewMemStore(1<<20), emu.Options{Clock: clock})
	if err := f.Access(parts, func() error { moved++; return nil }); !errors.Is(err, models.ErrFailed) || moved != 1 {
		t.Errorf("Access on a failed model: %v, data moved %d times; want ErrFailed and no move", err, moved-1)
	}
}

// AccessEarly answers early by what it is told, never before the request
// arrived, and counts the model's own time.
func TestAccessEarly(t *testing.T) {
	clock := &manualClock{}
	v, _ := emu.NewVolume(newFixed(t, fixed.Config{Capacity: 1 << 20, Read: time.Millisecond, Units: 1}), emu.NewMemStore(1<<20), emu.Options{Clock: clock})
	read := []models.Request{{Op: models.Read, Offset: 0, Length: 4096}}
	if err := v.AccessEarly(read, 300*time.Microsecond, nil); err != nil {
		t.Fatal(err)
	}
	if got := clock.Now(); got != 700*time.Microsecond {
		t.Errorf("a 1 ms read answered 300 µs early at %v, want 700µs", got)
	}
	start := clock.Now()
	if err := v.AccessEarly(read, time.Hour, nil); err != nil {
		t.Fatal(err)
	}
	if got := clock.Now(); got != start {
		t.Errorf("a read answered an hour early at %v, want at its arrival %v", got, start)
	}
	if st := v.Stats(); len(st.Ops) != 1 || st.Ops[0].Count != 2 {
		t.Errorf("stats %+v, want 2 reads", st.Ops)
	}
}
