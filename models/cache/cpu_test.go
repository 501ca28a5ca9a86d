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
//   - a write that dirties a clean block writes both mirrors (one I/O to
//     the CPU: the mirror is software RAID below the target), then the
//     block's metadata on both (one I/O), and only then completes;
//     rewriting the dirty block skips the metadata;
//   - cleaning charges the lookup and an I/O each for the SSD read and
//     the array write, and marks the block clean on flash later.
func TestCPUAndMetadata(t *testing.T) {
	const perIO = 10 * time.Microsecond
	lookup := time.Duration(float64(perIO) * lookupShare)
	ssdIO := 50*time.Microsecond + time.Duration(4096/500e6*1e9) // the fixed SSD reads and writes alike
	tr, err := New(Config{Mode: ReadWrite, Capacity: models.Bytes(64 * models.MiB), FlushDepth: 1}, []models.Device{ssd(t), ssd(t)}, hddArray(t))
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

	// Writes dirtying clean blocks: lookup, data on both mirrors,
	// metadata on both after its I/O cost. The flusher starts cleaning
	// the first while the second arrives.
	dirtying := lookup + ssdIO + perIO + ssdIO
	for i, off := range []int64{0, 1 << 20} {
		if got := write(time.Second+time.Duration(i)*time.Millisecond, off); got != dirtying {
			t.Errorf("write %d of a clean block: %v, want %v", i, got, dirtying)
		}
	}
	md(2)
	// Rewriting the dirty block (the one lane still busy with the first)
	// skips the metadata.
	if got, want := write(time.Second+2*time.Millisecond, 1<<20), lookup+ssdIO; got != want {
		t.Errorf("re-dirtying write: %v, want %v", got, want)
	}
	md(2)
	// Cleaning the second: the lane first marks the first clean on flash
	// (one I/O), then the lookup, the SSD read and the array write.
	before := cpu.charged
	if _, err := tr.flushUntil(10*time.Second, 0); err != nil {
		t.Fatal(err)
	}
	if got, want := cpu.charged-before, perIO+lookup+2*perIO; got != want {
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

// TestMetadataBatching checks flashcache's batching of metadata updates:
// a metadata block has one write in flight at a time, and the updates
// that arrive meanwhile share the next write, which starts when it ends.
// Blocks 0 and 1 (64 KiB each) have their entries in one metadata block;
// block 256 in the next.
func TestMetadataBatching(t *testing.T) {
	tr, err := New(Config{Mode: ReadWrite, Capacity: models.Bytes(64 * models.MiB), FlushDepth: 1}, []models.Device{ssd(t), ssd(t)}, hddArray(t))
	if err != nil {
		t.Fatal(err)
	}
	update := func(at time.Duration, block int64) time.Duration {
		t.Helper()
		s, err := tr.allocate(at, block)
		if err != nil {
			t.Fatal(err)
		}
		done, err := tr.updateMetadata(at, s)
		if err != nil {
			t.Fatal(err)
		}
		return done
	}
	at := time.Second
	first := update(at, 0)
	// Two updates while the first write is in flight: one more write,
	// from when the first ends, carries both.
	second := update(at+time.Microsecond, 1)
	third := update(at+2*time.Microsecond, 2)
	if second <= first || third != second {
		t.Errorf("updates during a write end at %v and %v, want both at the next write's end, after %v", second-at, third-at, first-at)
	}
	// Another metadata block is not held up.
	if other := update(at+3*time.Microsecond, 256); other >= second {
		t.Errorf("an update of another metadata block ends at %v, want before the queued write's %v", other-at, second-at)
	}
	if got, want := own(tr, "cache_metadata_writes"), 3.0; got != want {
		t.Errorf("%v metadata writes, want %v (one batched)", got, want)
	}
	if got := own(tr, "cache_metadata_batched"); got != 1 {
		t.Errorf("%v updates batched, want 1", got)
	}
}

// TestWorkerThread checks where the tier's work runs: the deferred work
// (metadata writes, fills, cleaning) queues on one worker thread, as
// flashcache's single work item runs it, while a request's own lookup runs
// in the submitting context, on any core, whatever the worker has queued.
// Two metadata updates of different metadata blocks at the same instant:
// the second is issued a PerIO after the first, when the worker has
// issued the first; a read hit meanwhile takes only its lookup and the SSD.
func TestWorkerThread(t *testing.T) {
	const perIO = 10 * time.Microsecond
	tr, err := New(Config{Mode: ReadWrite, Capacity: models.Bytes(64 * models.MiB), FlushDepth: 1}, []models.Device{ssd(t), ssd(t)}, hddArray(t))
	if err != nil {
		t.Fatal(err)
	}
	tr.SetCPU(&fakeCPU{perIO: perIO})
	at := time.Second
	var done [2]time.Duration
	for i, block := range []int64{0, 256} {
		s, err := tr.allocate(at, block)
		if err != nil {
			t.Fatal(err)
		}
		if done[i], err = tr.updateMetadata(at, s); err != nil {
			t.Fatal(err)
		}
	}
	if got := done[1] - done[0]; got != perIO {
		t.Errorf("second metadata write of the same instant ends %v after the first, want one PerIO (%v) on the one worker", got, perIO)
	}
	if got, want := own(tr, "cache_metadata_writes"), 2.0; got != want {
		t.Errorf("%v metadata writes, want %v", got, want)
	}
	if _, err := tr.Submit(at, models.Request{Op: models.Write, Offset: 512 << 16, Length: 4096}); err != nil {
		t.Fatal(err)
	}
	// With the worker booked for a millisecond more (cleanings queued), a
	// read hit of the block just written does not wait for it.
	ssdIO := 50*time.Microsecond + time.Duration(4096/500e6*1e9)
	rd := done[1] + time.Millisecond
	tr.worker.Reserve(rd, time.Millisecond)
	got, err := tr.Submit(rd, models.Request{Op: models.Read, Offset: 512 << 16, Length: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if want := rd + time.Duration(float64(perIO)*lookupShare) + ssdIO; got != want {
		t.Errorf("read hit took %v, want the lookup and the SSD's %v", got-rd, want-rd)
	}
	res := tr.Resources(rd)
	if len(res) != 1 || res[0].Name != "worker thread" || res[0].Busy < 3*perIO {
		t.Errorf("resources %+v, want the worker thread busy at least 3 PerIO (two metadata writes and the write's) by then", res)
	}
}
