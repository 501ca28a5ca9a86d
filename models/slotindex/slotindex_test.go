package slotindex

import (
	"math/rand/v2"
	"testing"
)

// The index against a map under random grows, assigns and clears, with
// keys drawn from a small range so probe runs collide and wrap. Every
// lookup is prefetched first, which must change nothing.
func TestAgainstMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var x Index
	ref := map[int64]int32{} // key → slot
	held := map[int32]int64{}
	for op := range 300_000 {
		switch r := rng.IntN(10); {
		case r == 0 && x.Slots() < 5000:
			x.Grow()
		case r < 6 && x.Slots() > 0:
			s := rng.Int32N(x.Slots())
			k := rng.Int64N(20_000)
			if _, taken := ref[k]; taken {
				continue
			}
			if old, ok := held[s]; ok {
				delete(ref, old)
			}
			x.Assign(s, k)
			ref[k], held[s] = s, k
		case r < 8 && x.Slots() > 0:
			s := rng.Int32N(x.Slots())
			if old, ok := held[s]; ok {
				delete(ref, old)
				delete(held, s)
			}
			x.Clear(s)
		default:
			k := rng.Int64N(20_000)
			want, ok := ref[k]
			if !ok {
				want = -1
			}
			x.Prefetch(k)
			if got := x.Lookup(k); got != want {
				t.Fatalf("op %d: Lookup(%d) = %d, want %d", op, k, got, want)
			}
		}
	}
	for s := range x.Slots() {
		k, ok := x.Key(s)
		if want, wok := held[s]; ok != wok || (ok && k != want) {
			t.Fatalf("Key(%d) = %d, %v; want %d, %v", s, k, ok, want, wok)
		}
	}
	var empty Index
	empty.Prefetch(3)
	if empty.Lookup(3) != -1 {
		t.Fatal("empty index found a key")
	}
}

// Stale buckets (see Lazy deletion) are rebuilt away, not grown into: a
// cache that evicts forever keeps its table size, and a key given again to
// the slot that holds it stays found until the slot is cleared.
func TestStaleBuckets(t *testing.T) {
	var x Index
	const slots = 5000
	for range slots {
		x.Grow()
	}
	size := len(x.index)
	for i := range int64(50 * slots) {
		s := int32(i % slots)
		x.Assign(s, i)
		if got := x.Lookup(i); got != s {
			t.Fatalf("Lookup(%d) = %d after Assign to %d", i, got, s)
		}
		if old := i - slots; old >= 0 && x.Lookup(old) != -1 {
			t.Fatalf("evicted key %d still found", old)
		}
	}
	if len(x.index) != size || x.used > len(x.index)/maxLoadDen*maxLoadNum {
		t.Fatalf("%d buckets (%d used), want %d", len(x.index), x.used, size)
	}
	x.Assign(7, 1<<40)
	x.Assign(7, 1<<40)
	if x.Lookup(1<<40) != 7 {
		t.Fatal("a key assigned twice to its slot was lost")
	}
	x.Clear(7)
	if x.Lookup(1<<40) != -1 {
		t.Fatal("a cleared key is still found")
	}
}
