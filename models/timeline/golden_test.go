package timeline

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nasemu/nasemu/internal/golden"
)

// TestGolden pins every answer the calendar gives over a long seeded
// trace (testdata/calendar.golden). The calendar's answers are its
// contract with every model built on it (cores, links, dies, buses): a
// change that only makes it faster must leave them bit-identical. The
// trace was first recorded with the straightforward sorted-array
// implementation; rewrite it (-rewrite) only for a deliberate change of
// behaviour, and say so in the commit.
//
// It drives several calendars with the access patterns the models produce
// — arrivals mostly in time order with work booked for the future (a
// read's processing when its data arrives), zero-length bookings, split
// bookings, fitting among several cores, arrivals far in the past — and
// tabulates, per kind of call, the time from each call's arrival to the
// end of its booking, and hashes every value returned.
func TestGolden(t *testing.T) {
	golden.Check(t, "calendar", goldenTrace(400_000))
}

// goldenCalls name the kinds of call of the trace, one row each.
var goldenCalls = []string{"fit-cores", "reserve", "reserve-split", "split-then-reserve", "free-at", "busy-time", "coarse-grid", "reserve-earliest"}

func goldenTrace(steps int) string {
	rows := make([]*golden.Series, len(goldenCalls))
	for i := range rows {
		rows[i] = golden.NewSeries()
	}
	var row *golden.Series
	put := func(vs ...time.Duration) {
		for _, v := range vs {
			row.Hash(int64(v))
		}
	}
	rng := rand.New(rand.NewPCG(17, 1))
	var cores [4]Timeline
	var other [3]Timeline
	// Bookings on a coarse grid, so that they often touch exactly and
	// merge with the intervals before and after them.
	var coarse [2]Timeline
	row = rows[6]
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
			row = rows[0]
			best, bs, bw := -1, time.Duration(0), time.Duration(0)
			for i := range cores {
				s, w := cores[i].Fit(at, d)
				put(s, w)
				if best < 0 || s < bs || (s == bs && w < bw) {
					best, bs, bw = i, s, w
				}
			}
			s, e := cores[best].Reserve(at, d)
			put(s)
			row.Done(step, at, e, nil)
		case op < 12:
			row = rows[1]
			s, e := other[0].Reserve(at, d)
			put(s)
			row.Done(step, at, e, nil)
		case op < 15:
			row = rows[2]
			row.Done(step, at, other[1].ReserveSplit(at, d), nil)
		case op < 16:
			row = rows[3]
			put(other[2].ReserveSplit(at, d))
			s, e := other[2].Reserve(at, d)
			put(s)
			row.Done(step, at, e, nil)
		case op < 17:
			row = rows[4]
			tl := &other[rng.IntN(3)]
			e, f := tl.Earliest(at, d), tl.FreeAt(at)
			put(e, tl.BusyUntil())
			row.Done(step, at, f, nil) // the wait until the resource is free
		case op < 18:
			row = rows[5]
			tl := &cores[rng.IntN(4)]
			busy := tl.Busy(at-time.Duration(rng.IntN(10_000_000)), at)
			put(tl.FreeAt(at - d))
			row.Done(step, 0, busy, nil) // the busy time in the window
		case op < 19:
			row = rows[6]
			const grid = 10_000
			ca, cd := at/grid*grid, d/grid*grid
			put(coarse[0].ReserveSplit(ca, cd))
			s, e := coarse[1].Reserve(ca, cd)
			put(s, coarse[1].ReserveSplit(ca+grid, grid))
			row.Done(step, ca, e, nil)
		default:
			row = rows[7]
			tl := &other[rng.IntN(2)]
			s, e := tl.Reserve(at, d)
			put(s, tl.Earliest(at, d))
			row.Done(step, at, e, nil)
		}
		if step%1024 == 0 {
			// A resource left idle for a long time: its calendar
			// empties of everything relevant.
			now += time.Duration(rng.IntN(1_000_000_000))
		}
	}
	tab := golden.NewTable(append([]string{"call"}, golden.Header...)...)
	for i, r := range rows {
		tab.Row(append([]string{goldenCalls[i]}, r.Cells()...)...)
	}
	return "# timeline: one seeded trace over several calendars (golden_test.go); times from arrival to the booking's end, in exact µs\n" + tab.String()
}
