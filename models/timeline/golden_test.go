package timeline

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models/internal/digest"
)

// goldenDigest pins every answer the calendar gives over a long seeded
// trace. The calendar's answers are its contract with every model built
// on it (cores, links, dies, buses): a change that only makes it faster
// must leave them bit-identical, and this digest proves it. It was
// recorded with the straightforward sorted-array implementation; update it
// only for a deliberate change of behaviour, and say so in the commit.
const goldenDigest = 0x51f32f6a68e80292

// TestGoldenDigest drives several calendars with the access patterns the
// models produce — arrivals mostly in time order with work booked for the
// future (a read's processing when its data arrives), zero-length
// bookings, split bookings, fitting among several cores, arrivals far in
// the past — and hashes every value returned.
func TestGoldenDigest(t *testing.T) {
	if got := goldenTrace(400_000); got != goldenDigest {
		t.Errorf("digest %#x, want %#x: the calendar's answers changed", got, uint64(goldenDigest))
	}
}

func goldenTrace(steps int) uint64 {
	h := digest.New()
	put := func(vs ...time.Duration) {
		for _, v := range vs {
			h.Int(int64(v))
		}
	}
	rng := rand.New(rand.NewPCG(17, 1))
	var cores [4]Timeline
	var other [3]Timeline
	// Bookings on a coarse grid, so that they often touch exactly and
	// merge with the intervals before and after them.
	var coarse [2]Timeline
	put(coarse[0].BusyUntil(), coarse[0].FreeAt(5))
	now := time.Duration(0)
	for step := range steps {
		// The clock mostly advances; sometimes a burst arrives at once.
		if rng.IntN(4) > 0 {
			now += time.Duration(rng.IntN(40_000))
		}
		at := now
		switch r := rng.IntN(100); {
		case r < 20: // work booked for when a device completes
			at += time.Duration(rng.IntN(20_000_000))
		case r < 25: // an arrival from the past (a part submitted late)
			at -= time.Duration(rng.IntN(5_000_000))
		case r < 27: // the same instant as a recent one
			at = now
		}
		d := time.Duration(rng.IntN(60_000))
		switch rng.IntN(12) {
		case 0:
			d = 0
		case 1:
			d = time.Duration(rng.IntN(3_000_000))
		case 2:
			d = 1
		}
		switch op := rng.IntN(20); {
		case op < 8: // pick the core that starts first and fits best
			best, bs, bw := -1, time.Duration(0), time.Duration(0)
			for i := range cores {
				s, w := cores[i].Fit(at, d)
				put(s, w)
				if best < 0 || s < bs || (s == bs && w < bw) {
					best, bs, bw = i, s, w
				}
			}
			s, e := cores[best].Reserve(at, d)
			put(s, e)
		case op < 12:
			s, e := other[0].Reserve(at, d)
			put(s, e)
		case op < 15:
			put(other[1].ReserveSplit(at, d))
		case op < 16:
			put(other[2].ReserveSplit(at, d))
			s, e := other[2].Reserve(at, d)
			put(s, e)
		case op < 17:
			tl := &other[rng.IntN(3)]
			put(tl.Earliest(at, d), tl.FreeAt(at), tl.BusyUntil())
		case op < 18:
			tl := &cores[rng.IntN(4)]
			put(tl.Busy(at-time.Duration(rng.IntN(10_000_000)), at), tl.FreeAt(at-d))
		case op < 19:
			const grid = 10_000
			ca, cd := at/grid*grid, d/grid*grid
			put(coarse[0].ReserveSplit(ca, cd))
			s, e := coarse[1].Reserve(ca, cd)
			put(s, e, coarse[1].ReserveSplit(ca+grid, grid))
		default:
			tl := &other[rng.IntN(2)]
			s, e := tl.Reserve(at, d)
			put(s, e, tl.Earliest(at, d))
		}
		if step%1024 == 0 {
			// A resource left idle for a long time: its calendar
			// empties of everything relevant.
			now += time.Duration(rng.IntN(1_000_000_000))
		}
	}
	return h.Sum()
}
