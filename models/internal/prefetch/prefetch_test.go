package prefetch

import "testing"

// A prefetch of any element of a slice leaves every value as it was.
func TestUint64ChangesNothing(t *testing.T) {
	xs := make([]uint64, 1<<16)
	for i := range xs {
		xs[i] = uint64(i) * 3
	}
	for i := range xs {
		Uint64(&xs[i])
	}
	for i, x := range xs {
		if x != uint64(i)*3 {
			t.Fatalf("xs[%d] = %d after prefetching, want %d", i, x, i*3)
		}
	}
}
