package nas

import (
	"math/rand/v2"
	"testing"
)

// The page cache's index against a map under random inserts, evictions
// and drops; dirty pages are never evicted and the dirty count matches.
func TestPageCacheAgainstMap(t *testing.T) {
	const max = 300
	pc := newPageCache(max)
	ref := map[int64]int32{}
	dirty := map[int64]bool{}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 200000; i++ {
		p := rng.Int64N(1500) * 13
		s := pc.lookup(p)
		want, ok := ref[p]
		if ok != (s >= 0) || (ok && s != want) {
			t.Fatalf("step %d: lookup(%d) = %d, reference %d %v", i, p, s, want, ok)
		}
		switch op := rng.IntN(10); {
		case ok && op == 0:
			pc.drop(s)
			delete(ref, p)
			delete(dirty, p)
		case ok && op < 3:
			pc.markDirty(s)
			dirty[p] = true
		case ok && op < 5:
			pc.clean(s)
			delete(dirty, p)
		case !ok:
			if len(dirty) == len(ref) && len(ref) == max {
				continue // all dirty: the caller would write one back first
			}
			s = pc.slot()
			if pg, held := pc.page(s); held {
				if dirty[pg] {
					t.Fatalf("step %d: evicted dirty page %d", i, pg)
				}
				delete(ref, pg)
			}
			pc.assign(s, p, 0)
			ref[p] = s
		}
		if pc.dirty != int64(len(dirty)) {
			t.Fatalf("step %d: %d dirty, reference %d", i, pc.dirty, len(dirty))
		}
	}
	// Writeback order: one pass returns every dirty page once, by address.
	last := int64(-1)
	n := 0
	for s := pc.nextDirty(); s >= 0; s = pc.nextDirty() {
		p := pc.mustPage(s)
		if p <= last && n > 0 {
			t.Fatalf("pass not in address order: %d after %d", p, last)
		}
		last = p
		pc.clean(s)
		n++
		if n > len(dirty) {
			break
		}
	}
	if n != len(dirty) {
		t.Errorf("writeback pass found %d dirty pages, reference %d", n, len(dirty))
	}
}
