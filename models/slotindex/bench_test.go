package slotindex

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkMissEvict is the page cache's path for a random read that
// misses a full cache: look the page up (absent), take the clock hand's
// slot for it (evicting the key there), look it up again. With tables
// far larger than the CPU caches it measures memory accesses per miss.
func BenchmarkMissEvict(b *testing.B) {
	for _, slots := range []int32{1 << 12, 400_000} {
		b.Run(fmt.Sprintf("slots=%d", slots), func(b *testing.B) {
			var x Index
			rng := rand.New(rand.NewPCG(1, 2))
			for range slots {
				x.Assign(x.Grow(), rng.Int64N(1<<40))
			}
			hand := int32(0)
			b.ReportAllocs()
			for b.Loop() {
				k := rng.Int64N(1 << 40)
				if x.Lookup(k) >= 0 {
					continue
				}
				x.Assign(hand, k)
				if x.Lookup(k) != hand {
					b.Fatal("lost a key")
				}
				if hand++; hand == slots {
					hand = 0
				}
			}
		})
	}
}

// BenchmarkSequential is the page cache's path for a sequential write
// larger than the cache: each new page is looked up (absent), takes the
// clock hand's slot and is looked up again by the writeback that follows.
func BenchmarkSequential(b *testing.B) {
	for _, slots := range []int32{1 << 12, 400_000} {
		b.Run(fmt.Sprintf("slots=%d", slots), func(b *testing.B) {
			var x Index
			k := int64(0)
			for range slots {
				x.Assign(x.Grow(), k)
				k++
			}
			hand := int32(0)
			b.ReportAllocs()
			for b.Loop() {
				if x.Lookup(k) >= 0 {
					b.Fatal("found a new key")
				}
				x.Assign(hand, k)
				if x.Lookup(k) != hand {
					b.Fatal("lost a key")
				}
				k++
				if hand++; hand == slots {
					hand = 0
				}
			}
		})
	}
}
