package slotindex

import (
	"math/rand/v2"
	"testing"

	"github.com/nasemu/nasemu/models/internal/digest"
)

// goldenDigest pins the answers of Lookup and Key over a seeded trace. The
// index is a map, so its answers are fixed by the operations alone; the
// digest makes a change of layout or probing that breaks that visible at
// once. Recorded with the first implementation (slots only in the buckets).
const goldenDigest = 0x9b2085b4d0eeed89

// TestGoldenDigest runs the page cache's pattern — grow to a limit, then
// give the slots round robin to new keys drawn from a huge range, with
// lookups of keys present and absent — plus clears and keys near the ends
// of the int64 range, and hashes every answer.
func TestGoldenDigest(t *testing.T) {
	if got := goldenTrace(300_000); got != goldenDigest {
		t.Errorf("digest %#x, want %#x: the index's answers changed", got, uint64(goldenDigest))
	}
}

func goldenTrace(steps int) uint64 {
	h := digest.New()
	put := h.Int
	rng := rand.New(rand.NewPCG(5, 6))
	var x Index
	held := map[int64]bool{}
	var recent []int64
	const limit = 40_000
	hand := int32(0)
	key := func() int64 {
		switch rng.IntN(10) {
		case 0: // a key seen recently, to hit
			if len(recent) > 0 {
				return recent[rng.IntN(len(recent))]
			}
		case 1: // the edges of the range (-1 is no key: it is stored as 0)
			return [...]int64{0, 1, -2, 1<<63 - 1, -1 << 63}[rng.IntN(5)]
		case 2: // a dense cluster, so probe runs collide
			return rng.Int64N(5000)
		}
		return rng.Int64N(1 << 40)
	}
	for range steps {
		switch r := rng.IntN(10); {
		case r < 4:
			k := key()
			if held[k] {
				put(int64(x.Lookup(k)))
				continue
			}
			var s int32
			if x.Slots() < limit {
				s = x.Grow()
			} else {
				s, hand = hand, (hand+1)%limit
				if old, ok := x.Key(s); ok {
					delete(held, old)
				}
			}
			x.Assign(s, k)
			held[k] = true
			if len(recent) < 1000 {
				recent = append(recent, k)
			} else {
				recent[rng.IntN(len(recent))] = k
			}
		case r < 5 && x.Slots() > 0:
			s := rng.Int32N(x.Slots())
			if old, ok := x.Key(s); ok {
				delete(held, old)
			}
			x.Clear(s)
		default:
			put(int64(x.Lookup(key())))
			if x.Slots() > 0 {
				k, ok := x.Key(rng.Int32N(x.Slots()))
				if !ok {
					k = -99
				}
				put(k)
			}
		}
	}
	return h.Sum()
}
