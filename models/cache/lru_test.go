package cache

import (
	"math/rand/v2"
	"testing"
)

// The block table against a map and a list: random lookups, assignments
// and evictions keep the index, the LRU order and the reference in step.
func TestBlockTableAgainstMap(t *testing.T) {
	const max = 500
	tb := newBlockTable(max)
	ref := map[int64]int32{} // block -> slot
	var order []int64        // LRU order of the reference, most recent first
	touch := func(b int64) {
		for i, x := range order {
			if x == b {
				order = append(order[:i], order[i+1:]...)
				break
			}
		}
		order = append([]int64{b}, order...)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200000; i++ {
		b := rng.Int64N(2000) * 7 // collide in the hash now and then
		s := tb.lookup(b)
		want, ok := ref[b]
		if ok != (s >= 0) || (ok && s != want) {
			t.Fatalf("step %d: lookup(%d) = %d, reference %d %v", i, b, s, want, ok)
		}
		if ok {
			tb.touch(s)
			touch(b)
			continue
		}
		s = tb.grow()
		if s < 0 {
			s = tb.victim() // nothing is dirty: the LRU tail
			old := tb.block(s)
			if old != order[len(order)-1] {
				t.Fatalf("step %d: evicted %d, LRU is %d", i, old, order[len(order)-1])
			}
			delete(ref, old)
			order = order[:len(order)-1]
		}
		tb.assign(s, b)
		ref[b] = s
		touch(b)
	}
	if len(ref) != max || int(tb.len()) != max {
		t.Errorf("%d blocks in the reference, %d slots", len(ref), tb.len())
	}
}
