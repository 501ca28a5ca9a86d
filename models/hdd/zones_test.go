package hdd

import (
	"math/rand/v2"
	"testing"
)

// zoneOf's bucket shortcut gives the binary search's answer at every zone
// boundary, next to it and at random offsets, for the catalog-like drives,
// a scaled-down one, the most zones allowed and a drive of a few bytes.
func TestZoneOfMatchesSearch(t *testing.T) {
	many := wdRed1TB()
	many.Zones = maxZones
	small, err := wdRed1TB().ScaleTo(8 << 30)
	if err != nil {
		t.Fatal(err)
	}
	tiny := wdRed1TB()
	tiny.Capacity = 100
	rng := rand.New(rand.NewPCG(1, 1))
	for _, c := range []Config{wdRed1TB(), exosX18(), many, small, tiny} {
		_, g, _, err := c.build(0)
		if err != nil {
			t.Fatal(err)
		}
		check := func(b int64) {
			if got, want := g.zoneOf(b), g.searchZone(b); got != want {
				t.Fatalf("capacity %d, %d zones: zoneOf(%d) = %d, binary search %d", g.capacity, len(g.zones), b, got, want)
			}
		}
		for _, z := range g.zones {
			for _, b := range []int64{z.start - 1, z.start, z.start + 1, z.end - 1, z.end, z.end + 1} {
				check(max(b, 0))
			}
		}
		for k := range int64(len(g.bucketZone)) {
			check(k << g.bucketShift)
			check(max(k<<g.bucketShift-1, 0))
		}
		for range 10000 {
			check(rng.Int64N(g.capacity + 1))
		}
		check(g.capacity + 4096)
	}
}
