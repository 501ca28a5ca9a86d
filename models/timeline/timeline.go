// Package timeline is the reservation calendar of one resource (a NAND
// die, a channel, a disk head, a link direction, a CPU core).
//
// A plain "busy until" time serves requests in the order they are
// submitted. Composite devices submit parts of a request at future times
// (the write phase of a RAID 5 read-modify-write starts when its reads
// complete); with a plain busy-until, such a future reservation would keep
// every request submitted after it — even one arriving much earlier — from
// using the idle time before it, and the resource would sit idle while work
// waits. A Timeline instead keeps the reserved intervals and places each
// new reservation in the earliest gap at or after its arrival that is long
// enough: work-conserving, first come first served among requests that
// arrive in time order, and exactly a busy-until when they do.
//
// The calendar keeps at most Window intervals; adjacent reservations merge,
// so a resource used in time order holds one interval. When the window is
// full the earliest interval is forgotten and its end becomes a floor
// before which nothing is placed.
package timeline

import "time"

// Window is the number of disjoint busy intervals a Timeline remembers.
const Window = 32

type interval struct{ start, end time.Duration }

// Timeline is one resource's calendar. The zero value is an idle resource.
type Timeline struct {
	iv    [Window]interval // sorted, disjoint, non-adjacent: iv[:n]
	n     int
	floor time.Duration // nothing is placed before this
}

// Reserve books the resource for d from the earliest time ≥ at when it is
// free for that long, and returns the start and end of the booking. A zero
// d books nothing and returns at (or the floor) twice.
func (t *Timeline) Reserve(at, d time.Duration) (start, end time.Duration) {
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
func (t *Timeline) ReserveSplit(at, d time.Duration) (end time.Duration) {
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
func (t *Timeline) Earliest(at, d time.Duration) time.Duration {
	start, _ := t.earliest(at, d)
	return start
}

// Fit returns when a reservation of d arriving at at would start and the
// idle time it would leave in front of it (since the end of the busy
// interval before it). Callers choosing among several resources that can
// start the work at the same time pick the least idle time left, so short
// tasks do not scatter gaps over every resource.
func (t *Timeline) Fit(at, d time.Duration) (start, idleBefore time.Duration) {
	start, i := t.earliest(at, d)
	prev := t.floor
	if i > 0 {
		prev = t.iv[i-1].end
	}
	return start, start - prev
}

// earliest finds the first gap ≥ at of length d and the index of the
// interval it precedes.
func (t *Timeline) earliest(at, d time.Duration) (start time.Duration, i int) {
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
func (t *Timeline) FreeAt(at time.Duration) time.Duration {
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
func (t *Timeline) BusyUntil() time.Duration {
	if t.n == 0 {
		return t.floor
	}
	return t.iv[t.n-1].end
}

// Busy returns the reserved time within [from, to).
func (t *Timeline) Busy(from, to time.Duration) time.Duration {
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
func (t *Timeline) firstEndingAfter(tm time.Duration) int {
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
func (t *Timeline) insert(i int, v interval) {
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
