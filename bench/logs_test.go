package bench

import (
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
