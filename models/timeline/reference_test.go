package timeline

import (
	"math/rand/v2"
	"testing"
	"time"
)

// refTimeline is the first implementation of the calendar: a sorted array
// searched by bisection, shifted with copy. It is kept as the reference the
// faster ring implementation must agree with on every answer (see
// TestAgainstReference); it is not used by the models. The zero value is
// an idle resource.
type refTimeline struct {
	iv    [Window]interval // sorted, disjoint, non-adjacent: iv[:n]
	n     int
	floor time.Duration // nothing is placed before this
}

// Reserve books the resource for d from the earliest time ≥ at when it is
// free for that long, and returns the start and end of the booking. A zero
// d books nothing and returns at (or the floor) twice.
func (t *refTimeline) Reserve(at, d time.Duration) (start, end time.Duration) {
	if d <= 0 {
		start = max(at, t.floor)
		return start, start
	}
	if t.n == Window {
		// Forget the earliest interval; nothing goes before its end.
		t.floor = t.iv[0].end
		copy(t.iv[:t.n-1], t.iv[1:t.n])
		t.n--
	}
	start, i := t.earliest(at, d)
	end = start + d
	t.insert(i, interval{start, end})
	return start, end
}

// ReserveSplit books d of time that may start at at and may be split over
// idle gaps — work made of small independent pieces, such as a message's
// frames interleaving on a wire with frames booked before it — filling
// idle stretches from at in time order. It returns when the last piece
// ends.
func (t *refTimeline) ReserveSplit(at, d time.Duration) (end time.Duration) {
	cursor := max(at, t.floor)
	if d <= 0 {
		return cursor
	}
	if t.n == Window {
		t.floor = t.iv[0].end
		copy(t.iv[:t.n-1], t.iv[1:t.n])
		t.n--
		cursor = max(cursor, t.floor)
	}
	i := t.firstEndingAfter(cursor)
	start, left := cursor, d
	k := i
	for ; k < t.n; k++ {
		if gap := t.iv[k].start - cursor; gap > 0 {
			if gap >= left {
				break
			}
			left -= gap
		}
		cursor = max(cursor, t.iv[k].end)
	}
	end = cursor + left
	// Every idle instant in [start, end) is now busy: intervals i..k-1 and
	// the new time become one interval, joined by touching neighbours.
	if i < t.n && t.iv[i].start < start {
		start = t.iv[i].start
	}
	last := end
	if k < t.n && t.iv[k].start == end {
		last = t.iv[k].end
		k++
	}
	if i > 0 && t.iv[i-1].end == start {
		i--
		start = t.iv[i].start
	}
	// Replace iv[i:k] with [start, last).
	switch removed := k - i; {
	case removed == 0:
		copy(t.iv[i+1:t.n+1], t.iv[i:t.n])
		t.n++
	case removed > 1:
		copy(t.iv[i+1:], t.iv[k:t.n])
		t.n -= removed - 1
	}
	t.iv[i] = interval{start, last}
	return end
}

// Earliest returns when a reservation of d arriving at at would start,
// without booking it.
func (t *refTimeline) Earliest(at, d time.Duration) time.Duration {
	start, _ := t.earliest(at, d)
	return start
}

// Fit returns when a reservation of d arriving at at would start and the
// idle time it would leave in front of it (since the end of the busy
// interval before it). Callers choosing among several resources that can
// start the work at the same time pick the least idle time left, so short
// tasks do not scatter gaps over every resource.
func (t *refTimeline) Fit(at, d time.Duration) (start, idleBefore time.Duration) {
	start, i := t.earliest(at, d)
	prev := t.floor
	if i > 0 {
		prev = t.iv[i-1].end
	}
	return start, start - prev
}

// earliest finds the first gap ≥ at of length d and the index of the
// interval it precedes.
func (t *refTimeline) earliest(at, d time.Duration) (start time.Duration, i int) {
	start = max(at, t.floor)
	for i = t.firstEndingAfter(start); i < t.n; i++ {
		if t.iv[i].start >= start+d {
			break // fits in the gap before interval i
		}
		start = t.iv[i].end
	}
	return start, i
}

// FreeAt returns the earliest time ≥ at at which the resource is free (it
// may be busy again later).
func (t *refTimeline) FreeAt(at time.Duration) time.Duration {
	at = max(at, t.floor)
	for i := 0; i < t.n; i++ {
		if t.iv[i].start > at {
			break
		}
		if t.iv[i].end > at {
			at = t.iv[i].end
		}
	}
	return at
}

// BusyUntil returns the end of the last reservation.
func (t *refTimeline) BusyUntil() time.Duration {
	if t.n == 0 {
		return t.floor
	}
	return t.iv[t.n-1].end
}

// Busy returns the reserved time within [from, to).
func (t *refTimeline) Busy(from, to time.Duration) time.Duration {
	var sum time.Duration
	for i := 0; i < t.n; i++ {
		s, e := max(t.iv[i].start, from), min(t.iv[i].end, to)
		if e > s {
			sum += e - s
		}
	}
	return sum
}

// firstEndingAfter returns the index of the first interval that ends
// after tm, by binary search: intervals are disjoint and sorted, so their
// ends are sorted too.
func (t *refTimeline) firstEndingAfter(tm time.Duration) int {
	lo, hi := 0, t.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t.iv[m].end <= tm {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// insert places v before index i (iv[i-1].end ≤ v.start, v.end ≤ iv[i].start),
// merging with touching neighbours.
func (t *refTimeline) insert(i int, v interval) {
	joinPrev := i > 0 && t.iv[i-1].end == v.start
	joinNext := i < t.n && t.iv[i].start == v.end
	switch {
	case joinPrev && joinNext:
		t.iv[i-1].end = t.iv[i].end
		copy(t.iv[i:t.n-1], t.iv[i+1:t.n])
		t.n--
	case joinPrev:
		t.iv[i-1].end = v.end
	case joinNext:
		t.iv[i].start = v.start
	default: // Reserve made room: t.n < Window
		copy(t.iv[i+1:t.n+1], t.iv[i:t.n])
		t.iv[i] = v
		t.n++
	}
}

// TestAgainstReference runs the ring implementation and the reference side
// by side through random bookings of every kind — in time order, ahead,
// late, touching, zero-length, split — on calendars that fill, overflow
// and empty, and demands the same answer to every call.
func TestAgainstReference(t *testing.T) {
	for seed := range uint64(40) {
		rng := rand.New(rand.NewPCG(seed, 11))
		var got Timeline
		var want refTimeline
		// Small seeds use a coarse grid, so bookings touch and merge.
		grid := time.Duration(1 + rng.IntN(3)*int(seed%4)*500)
		now := time.Duration(0)
		for step := range 20_000 {
			now += time.Duration(rng.IntN(3000)) / grid * grid
			at := now
			switch rng.IntN(6) {
			case 0:
				at += time.Duration(rng.IntN(200_000)) / grid * grid
			case 1:
				at -= time.Duration(rng.IntN(100_000)) / grid * grid
			}
			d := time.Duration(rng.IntN(4000)) / grid * grid
			var g, w [3]time.Duration
			switch op := rng.IntN(8); op {
			case 0, 1, 2:
				g[0], g[1] = got.Reserve(at, d)
				w[0], w[1] = want.Reserve(at, d)
			case 3, 4:
				g[0] = got.ReserveSplit(at, d)
				w[0] = want.ReserveSplit(at, d)
			case 5:
				g[0], g[1] = got.Fit(at, d)
				w[0], w[1] = want.Fit(at, d)
				g[2], w[2] = got.Earliest(at, d), want.Earliest(at, d)
			case 6:
				g[0], w[0] = got.FreeAt(at), want.FreeAt(at)
				g[1], w[1] = got.BusyUntil(), want.BusyUntil()
			default:
				from := at - time.Duration(rng.IntN(300_000))
				g[0], w[0] = got.Busy(from, at), want.Busy(from, at)
				g[1], w[1] = got.Busy(at, from), want.Busy(at, from)
			}
			if g != w {
				t.Fatalf("seed %d step %d (at %v, d %v): got %v, reference %v", seed, step, at, d, g, w)
			}
			if got.n != want.n || got.floor != want.floor {
				t.Fatalf("seed %d step %d: %d intervals, floor %v; reference %d, %v", seed, step, got.n, got.floor, want.n, want.floor)
			}
			for k := range got.n {
				if *got.at(k) != want.iv[k] {
					t.Fatalf("seed %d step %d: interval %d is %v, reference %v", seed, step, k, *got.at(k), want.iv[k])
				}
			}
		}
	}
}
