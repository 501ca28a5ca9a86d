package cache

import (
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
)

// fakeCPU is a CPU of unlimited cores: work takes its time and never
// queues. It records the work charged.
type fakeCPU struct {
	perIO   time.Duration
	charged time.Duration
}

func (c *fakeCPU) Compute(at, fixed time.Duration, _ int64, _ float64) time.Duration {
	c.charged += fixed
	return at + fixed
}

func (c *fakeCPU) IOCost() time.Duration { return c.perIO }

// TestCPUAndMetadata checks the tier's own work against what flashcache
// does per I/O, on idle devices where every time adds up exactly:
//   - a read hit costs the target's lookup (half a PerIO) before the SSD
//     read, and writes no metadata;
//   - a write that dirties a clean block writes both mirrors (the second
//     issued by the CPU), then the block's metadata on both, and only then
//     completes; rewriting the dirty block skips the metadata;
//   - cleaning charges the lookup and an I/O each for the SSD read and
//     the array write, and marks the block clean on flash later.
func TestCPUAndMetadata(t *testing.T) {
	const perIO = 10 * time.Microsecond
	lookup := time.Duration(float64(perIO) * lookupShare)
	ssdIO := 50*time.Microsecond + time.Duration(4096/500e6*1e9) // the fixed SSD reads and writes alike
	tr, err := New(Config{Mode: ReadWrite, Capacity: models.Bytes(64 * mib), FlushDepth: 1}, []models.Device{ssd(t), ssd(t)}, hddArray(t))
	if err != nil {
		t.Fatal(err)
	}
	cpu := &fakeCPU{perIO: perIO}
	tr.SetCPU(cpu)
	write := func(at time.Duration, off int64) time.Duration {
		t.Helper()
		done, err := tr.Submit(at, models.Request{Op: models.Write, Offset: off, Length: 4096})
		if err != nil {
			t.Fatal(err)
		}
		return done - at
	}
	md := func(want float64) {
		t.Helper()
		if got := own(tr, "cache_metadata_writes"); got != want {
			t.Errorf("%v metadata updates, want %v", got, want)
		}
	}

	// Writes dirtying clean blocks: lookup, data on both mirrors (the
	// second after its I/O cost), metadata on both (each after its cost).
	// The flusher starts cleaning the first while the second arrives.
	dirtying := lookup + perIO + ssdIO + perIO + ssdIO
	for i, off := range []int64{0, 1 << 20} {
		if got := write(time.Second+time.Duration(i)*time.Millisecond, off); got != dirtying {
			t.Errorf("write %d of a clean block: %v, want %v", i, got, dirtying)
		}
	}
	md(2)
	// Rewriting the dirty block (the one lane still busy with the first)
	// skips the metadata.
	if got, want := write(time.Second+2*time.Millisecond, 1<<20), lookup+perIO+ssdIO; got != want {
		t.Errorf("re-dirtying write: %v, want %v", got, want)
	}
	md(2)
	// Cleaning the second: the lane first marks the first clean on flash
	// (an I/O per mirror), then the lookup, the SSD read and the array
	// write.
	before := cpu.charged
	if _, err := tr.flushUntil(10*time.Second, 0); err != nil {
		t.Fatal(err)
	}
	if got, want := cpu.charged-before, 2*perIO+lookup+2*perIO; got != want {
		t.Errorf("cleaning charged %v, want %v", got, want)
	}
	md(3)
	// A read hit: the lookup, then the SSD; no metadata.
	at := 20 * time.Second
	before = cpu.charged
	done, err := tr.Submit(at, models.Request{Op: models.Read, Offset: 0, Length: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if want := at + lookup + ssdIO; done != want {
		t.Errorf("read hit: %v, want %v", done-at, want-at)
	}
	if got := cpu.charged - before; got != lookup {
		t.Errorf("read hit charged %v, want the lookup's %v", got, lookup)
	}
	md(3)
}
