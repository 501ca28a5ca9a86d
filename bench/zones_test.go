package bench

import (
	"math/rand/v2"
	"testing"
)

// TestZoneResetThreshold: with zone_reset_threshold=0.5 and
// zone_reset_frequency=0.25, writes fill the zones until their valid data
// reach half the range, and from then every fourth write first resets
// its zone, so the valid data stay near the threshold instead of
// filling the zones.
func TestZoneResetThreshold(t *testing.T) {
	const zone, n, bs = 1 << 20, 4, 64 << 10
	for _, tc := range []struct {
		freq      float64
		lo, hi    int64 // valid data after the writes
		wantReset bool
	}{{0, 4 * zone, 4 * zone, false}, {0.25, 2 * zone, 3 * zone, true}} {
		z := newZoneSet(n*zone, zone, 0)
		z.setReset(0.5, tc.freq)
		rng := rand.New(rand.NewPCG(1, 2))
		resets := 0
		for range n * zone / bs {
			before := z.valid()
			if _, _, ok := z.adjust(DirWrite, rng.Int64N(n*zone), bs, 0, n*zone, rng); !ok {
				t.Fatal("a write found no zone")
			}
			if z.valid() < before+bs {
				resets++
			}
		}
		if v := z.valid(); v < tc.lo || v > tc.hi || (resets > 0) != tc.wantReset {
			t.Errorf("frequency %g: %d bytes valid after writing the range once, %d resets", tc.freq, v, resets)
		}
	}
}

// valid is the data below the zones' write pointers.
func (z *zoneSet) valid() int64 {
	var v int64
	for i, wp := range z.wp {
		v += wp - z.start(i)
	}
	return v
}
