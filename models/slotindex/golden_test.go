package slotindex

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/nasemu/nasemu/internal/golden"
)

// TestGolden pins the answers of Lookup and Key over a seeded trace
// (testdata/index.golden). The index is a map, so its answers are fixed by
// the operations alone; the table makes a change of layout or probing
// that breaks that visible at once. First recorded with the first
// implementation (slots only in the buckets).
//
// It runs the page cache's pattern — grow to a limit, then give the slots
// round robin to new keys drawn from a huge range, with lookups of keys
// present and absent — plus clears and keys near the ends of the int64
// range, and tabulates per kind of call how many found a slot (hits)
// and hashes every answer.
func TestGolden(t *testing.T) {
	golden.Check(t, "index", goldenTrace(300_000))
}

func goldenTrace(steps int) string {
	tab := golden.NewTable("call", "calls", "hits", "trace")
	type row struct {
		calls, hits int
		h           *golden.Series
	}
	rows := map[string]*row{}
	names := []string{"lookup-held", "lookup", "key"}
	for _, n := range names {
		rows[n] = &row{h: golden.NewSeries()}
	}
	// put records an answer v of a call of the named kind, a hit or not.
	put := func(name string, v int64, hit bool) {
		r := rows[name]
		r.calls++
		if hit {
			r.hits++
		}
		r.h.Hash(v)
	}
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
				v := x.Lookup(k)
				put("lookup-held", int64(v), v >= 0)
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
			v := x.Lookup(key())
			put("lookup", int64(v), v >= 0)
			if x.Slots() > 0 {
				k, ok := x.Key(rng.Int32N(x.Slots()))
				if !ok {
					k = -99
				}
				put("key", k, ok)
			}
		}
	}
	for _, n := range names {
		r := rows[n]
		tab.Row(n, strconv.Itoa(r.calls), strconv.Itoa(r.hits), r.h.Trace())
	}
	return "# slotindex: one seeded trace (golden_test.go); hits are calls that found a slot or a key\n" + tab.String()
}
