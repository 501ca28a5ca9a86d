package fusefs

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/models/fixed"
)

// TestPacing checks fidelity: with a model that serves a read in exactly
// 1 ms on one unit, a 4 KiB O_DIRECT read through the mount takes 1 ms
// (median within 10 %), and four concurrent readers share the unit: 1000
// reads per second in total, as the queueing model says.
func TestPacing(t *testing.T) {
	// The client and the emulator share this process's Go scheduler; a
	// real client is another process. With few Ps, a client thread
	// blocked in read(2) holds one until the runtime retakes it, delaying
	// the emulator's answer by the retake period. More Ps than CPUs
	// remove that artefact of the test.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 8)
	backing := t.TempDir()
	const size = 8 << 20
	if err := os.WriteFile(filepath.Join(backing, "data"), randBytes(40, size), 0o644); err != nil {
		t.Fatal(err)
	}
	model, err := fixed.New(fixed.Config{Capacity: 1 << 30, Read: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// Each read is paced on its own: without ClosedLoop, which charges a
	// read that follows the last answer closely at that answer's
	// completion, so that a client's own time between requests is not
	// the model's (and the read then answers that much sooner).
	mount := func() *share {
		return mountShare(t, model, emu.NewWallClock(1, -1), backing, Options{ClosedLoop: -1})
	}
	s := mount()
	open := func() *os.File {
		fh, err := os.OpenFile(s.path("data"), os.O_RDONLY|syscall.O_DIRECT, 0)
		if err != nil {
			t.Fatal(err)
		}
		return fh
	}

	// Other processes can only delay answers; on a shared host a run may be
	// disturbed, so the median of three runs must meet the target.
	// Compensation answers a round trip early, never much more; but it is
	// measured when the share is mounted, and a round trip measured while
	// other tenants load the host is too long for a quieter moment after
	// it: a run with a read far below the model's time mounts the share
	// afresh for the next, and the median run's fastest read must not be.
	var p50s, fastests []time.Duration
	for attempt := range 3 {
		lat := readLatencies(t, open(), size, 300, uint64(attempt))
		p50, fastest := lat[len(lat)/2], lat[0]
		p50s, fastests = append(p50s, p50), append(fastests, fastest)
		t.Logf("4 KiB random read through the mount, model 1 ms: p50 %v, p90 %v, min %v (compensation %v at 1 ms)", p50, lat[len(lat)*9/10], fastest, s.fs.CompensationAt(time.Millisecond))
		if fastest < 850*time.Microsecond && attempt < 2 {
			s.unmount(t) // the backing directory is locked to one share at a time
			s = mount()
		}
	}
	if fastest := medianDuration(fastests); fastest < 850*time.Microsecond {
		t.Errorf("fastest read %v in the median run, far below the model's 1 ms", fastest)
	}
	if p50 := medianDuration(p50s); p50 < 900*time.Microsecond || p50 > 1100*time.Microsecond {
		t.Errorf("p50 %v in the median run, want 1 ms ± 10%%", p50)
	}

	// Four readers on a one-unit device: total IOPS = 1 / service time
	// (the median of three runs, for the same reason as above).
	var iops []float64
	for attempt := range 3 {
		n := concurrentIOPS(t, open, size, 4, 400*time.Millisecond, uint64(attempt))
		t.Logf("QD4 on one unit: %.0f IOPS (model: 1000)", n)
		iops = append(iops, n)
	}
	slices.Sort(iops)
	if iops[1] < 900 || iops[1] > 1100 {
		t.Errorf("QD4 IOPS %.0f in the median run, want 1000 ± 10%%", iops[1])
	}
}

// medianDuration returns the median of three durations.
func medianDuration(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// concurrentIOPS runs readers random 4 KiB readers for window and returns
// their total reads per second.
func concurrentIOPS(t *testing.T, open func() *os.File, size int64, readers int, window time.Duration, seed uint64) float64 {
	var wg sync.WaitGroup
	counts := make([]int, readers)
	stop := time.Now().Add(window)
	for r := range readers {
		wg.Go(func() {
			fh := open()
			defer fh.Close()
			buf := make([]byte, 4096)
			rng := rand.New(rand.NewPCG(uint64(r), seed))
			for time.Now().Before(stop) {
				if _, err := fh.ReadAt(buf, rng.Int64N(size/4096)*4096); err != nil {
					t.Error(err)
					return
				}
				counts[r]++
			}
		})
	}
	wg.Wait()
	var total int
	for _, c := range counts {
		total += c
	}
	return float64(total) / window.Seconds()
}

// readLatencies times n random 4 KiB reads of fh (closed on return), sorted.
func readLatencies(t *testing.T, fh *os.File, size int64, n int, seed uint64) []time.Duration {
	t.Helper()
	defer fh.Close()
	buf := make([]byte, 4096)
	rng := rand.New(rand.NewPCG(seed, 1))
	lat := make([]time.Duration, n)
	for i := range lat {
		off := rng.Int64N(size/4096) * 4096
		start := time.Now()
		if _, err := fh.ReadAt(buf, off); err != nil {
			t.Fatal(err)
		}
		lat[i] = time.Since(start)
	}
	slices.Sort(lat)
	return lat
}

// TestTimeScale checks that with a time scale of 2 a 1 ms read takes 2 ms.
func TestTimeScale(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 8)
	backing := t.TempDir()
	const size = 1 << 20
	if err := os.WriteFile(filepath.Join(backing, "data"), randBytes(41, size), 0o644); err != nil {
		t.Fatal(err)
	}
	model, err := fixed.New(fixed.Config{Capacity: 1 << 30, Read: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s := mountShare(t, model, emu.NewWallClock(2, -1), backing, Options{})
	var p50 time.Duration
	for attempt := range 3 {
		fh, err := os.OpenFile(s.path("data"), os.O_RDONLY|syscall.O_DIRECT, 0)
		if err != nil {
			t.Fatal(err)
		}
		lat := readLatencies(t, fh, size, 100, uint64(attempt))
		if p50 = lat[len(lat)/2]; p50 >= 1800*time.Microsecond && p50 <= 2200*time.Microsecond {
			break
		}
	}
	t.Logf("time scale 2, model 1 ms: p50 %v", p50)
	if p50 < 1800*time.Microsecond || p50 > 2200*time.Microsecond {
		t.Errorf("p50 %v, want 2 ms ± 10%%", p50)
	}
}
