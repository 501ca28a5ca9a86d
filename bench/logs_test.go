package bench

import (
	"runtime"
	"testing"
	"time"
)

// TestPlatPercentileRank checks that a percentile's rank is a fraction,
// as in fio's calc_clat_percentiles: of 1500 I/Os, 1498 at 10 µs and two
// at 5 ms, the 99.9th percentile (rank 1498.5) is 5 ms; a rank cut to a
// whole 1498 would give 10 µs.
func TestPlatPercentileRank(t *testing.T) {
	var h platHist
	for range 1498 {
		h.add(10 * time.Microsecond)
	}
	h.add(5 * time.Millisecond)
	h.add(5 * time.Millisecond)
	slow := platValue(platIndex(uint64(5 * time.Millisecond)))
	fast := platValue(platIndex(uint64(10 * time.Microsecond)))
	for _, c := range []struct {
		p    float64
		want uint64
	}{{50, fast}, {99.8, fast}, {99.9, slow}, {100, slow}, {0, fast}} {
		if got := h.percentile(1500, c.p); got != c.want {
			t.Errorf("p%v = %d ns, want %d", c.p, got, c.want)
		}
	}
}

// TestPreparedCollector checks that a direction prepared before the clock
// starts costs its first I/O no histogram allocation (a few hundred KiB,
// which held up that I/O on fast storage), and that a prepared direction
// without I/O is not reported.
func TestPreparedCollector(t *testing.T) {
	j := &Job{Name: "x", RW: RandRead, BS: 4096}
	c := newCollector(0)
	c.prepare(DirRead, true, true)
	c.prepare(DirWrite, true, true)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	c.record(DirRead, time.Microsecond, 10*time.Microsecond, 11*time.Microsecond, 4096, 20*time.Microsecond)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 16<<10 {
		t.Errorf("first I/O of a prepared direction allocated %d bytes", n)
	}
	r := c.result(j)
	if r.Read == nil || r.Read.IOs != 1 || r.Read.Slat.Mean != 1 {
		t.Errorf("read result %+v", r.Read)
	}
	if r.Write != nil || r.Trim != nil {
		t.Errorf("a direction without I/O is reported: write %+v, trim %+v", r.Write, r.Trim)
	}
	// Unprepared, the first I/O makes its histogram: the test's measure
	// sees it.
	c = newCollector(0)
	runtime.ReadMemStats(&before)
	c.record(DirRead, time.Microsecond, 10*time.Microsecond, 11*time.Microsecond, 4096, 20*time.Microsecond)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n < 64<<10 {
		t.Errorf("unprepared first I/O allocated only %d bytes: the test measures nothing", n)
	}
}

// TestMergeLat checks that merging a direction whose lat is its clat with
// one that has its own lat keeps both sides' latencies.
func TestMergeLat(t *testing.T) {
	a := &dirStats{clat: newHist()}
	_ = a.clat.RecordValue(int64(time.Millisecond))
	b := &dirStats{clat: newHist(), lat: newHist()}
	_ = b.clat.RecordValue(int64(10 * time.Microsecond))
	_ = b.lat.RecordValue(int64(20 * time.Microsecond))
	for _, order := range [][2]*dirStats{{a, b}, {b, a}} {
		m := &dirStats{clat: newHist()}
		m.merge(order[0])
		m.merge(order[1])
		if m.lat == nil || m.lat.TotalCount() != 2 || m.lat.Max() < int64(time.Millisecond)*999/1000 {
			t.Errorf("merged lat lost a side: %v", m.lat)
		}
		if m.clat.TotalCount() != 2 {
			t.Errorf("merged clat has %d values", m.clat.TotalCount())
		}
	}
}
