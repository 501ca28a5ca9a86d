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
// enough: first come first served among requests that arrive in time
// order, and exactly a busy-until when they do. A gap too short for the
// work stays idle while the work waits behind the reservation after it;
// work that can be split (a message's frames, a CPU core's time slices)
// goes in with ReserveSplit, which fills every idle stretch from its
// arrival and so is work-conserving.
//
// The calendar keeps at most a window of intervals — Window for a
// Timeline, CoreWindow for a Core; adjacent reservations merge, so a
// resource used in time order holds one interval. When the window is full
// the earliest interval is forgotten and its end becomes a floor before
// which nothing is placed. The window bounds how many disjoint stretches
// of work booked ahead a resource can hold at once: a resource that holds
// more than its window of them forgets one that lies in the future, and
// nothing can be placed before it — work arriving earlier waits behind it
// while the resource idles. A Timeline's 32 is ample for resources whose
// bookings come roughly in time order and lie close to their arrival (an
// SSD's die, a client thread, md's stripe thread). A resource that holds a booking ahead
// for each request in flight holds one stretch per request, out of order
// as the requests complete: a CPU core the work a request will do when
// its I/O completes, a crypto engine its decryption, a drive bus and a
// network link's direction its data or response, a cache tier's worker
// its fill. Such a resource is a Core, which keeps enough of them for any
// queue depth a benchmark keeps in flight; with a Timeline's 32 it
// served some 32 requests at once.
package timeline

import (
	"math"
	"time"
)

// Window is the number of disjoint busy intervals a Timeline remembers.
const Window = 32

// CoreWindow is the number of disjoint busy intervals a Core remembers:
// with one stretch of work booked ahead per request in flight, a resource
// holds up to about CoreWindow requests at once.
const CoreWindow = 1024

// ring is the storage of a calendar's intervals: an array whose length,
// the window, is a power of two, as the intervals live in a ring indexed
// modulo its length.
type ring interface {
	[Window]interval | [CoreWindow]interval
}

// Compilation fails here unless each window is a power of two.
var (
	_ [0]struct{} = [Window & (Window - 1)]struct{}{}
	_ [0]struct{} = [CoreWindow & (CoreWindow - 1)]struct{}{}
)

type interval struct{ start, end time.Duration }

// Timeline is one resource's calendar, keeping Window intervals. The zero
// value is an idle resource.
type Timeline = calendar[[Window]interval]

// Core is a calendar keeping CoreWindow intervals, for a resource that
// holds a booking ahead for each request in flight: a CPU core, a crypto
// engine, a bus, a link direction (see the package doc). The zero value
// is an idle resource.
type Core = calendar[[CoreWindow]interval]

// calendar is a resource's calendar keeping len(R) intervals.
//
// The intervals are kept sorted, disjoint and non-adjacent in a ring: the
// k-th earliest (0 ≤ k < n) is iv[(head+k) mod len(iv)]. A ring rather
// than a plain sorted array because the calendar of a busy resource is
// nearly always full (bookings leave small gaps, so they rarely merge):
// each booking then forgets the earliest interval, which in an array means
// shifting all the others and in the ring only advancing head. For the
// same reason a booking in the middle shifts whichever side of it is
// shorter.
//
// A calendar is not safe for concurrent use, not even its queries: they
// update a search hint.
type calendar[R ring] struct {
	iv    R
	head  int // ring position of the earliest interval
	n     int
	floor time.Duration // nothing is placed before this
	hint  int           // ring position of the last search's answer (see firstEndingAfter)
	// booked is the time ever reserved: the resource's busy time, for
	// utilisation accounting (the calendar itself forgets old intervals).
	booked time.Duration
}

// mask reduces a ring position modulo the window.
func (t *calendar[R]) mask() int { return len(t.iv) - 1 }

// at returns the k-th earliest interval (0 ≤ k ≤ n; k == n is the free
// ring position after the last one when n < the window).
func (t *calendar[R]) at(k int) *interval { return &t.iv[(t.head+k)&t.mask()] }

// Reserve books the resource for d from the earliest time ≥ at when it is
// free for that long, and returns the start and end of the booking. A zero
// d books nothing and returns at (or the floor) twice.
func (t *calendar[R]) Reserve(at, d time.Duration) (start, end time.Duration) {
	if d <= 0 {
		start = max(at, t.floor)
		return start, start
	}
	t.booked += d
	if t.n == len(t.iv) {
		t.forgetFirst()
	}
	start = max(at, t.floor)
	end = start + d
	// The common case, written out: the booking goes after everything
	// booked, extending the last interval if it touches it.
	if t.n == 0 || t.at(t.n-1).end < start {
		*t.at(t.n) = interval{start, end}
		t.n++
		return start, end
	}
	if last := t.at(t.n - 1); last.end == start {
		last.end = end
		return start, end
	}
	start, i := t.search(start, d)
	end = start + d
	t.insert(i, interval{start, end})
	return start, end
}

// forgetFirst drops the earliest interval of a full calendar; nothing is
// placed before its end from now on.
func (t *calendar[R]) forgetFirst() {
	t.floor = t.iv[t.head].end
	t.head = (t.head + 1) & t.mask()
	t.n--
}

// ReserveSplit books d of time that may start at at and may be split over
// idle gaps — work made of small independent pieces, such as a message's
// frames interleaving on a wire with frames booked before it — filling
// idle stretches from at in time order. It returns when the last piece
// ends.
func (t *calendar[R]) ReserveSplit(at, d time.Duration) (end time.Duration) {
	cursor := max(at, t.floor)
	if d <= 0 {
		return cursor
	}
	t.booked += d
	if t.n == len(t.iv) {
		t.forgetFirst()
		cursor = max(cursor, t.floor)
	}
	// The common case, written out: everything booked ends by cursor, so
	// the work goes after it in one piece, extending the last interval if
	// it touches it.
	if t.n == 0 || t.at(t.n-1).end < cursor {
		*t.at(t.n) = interval{cursor, cursor + d}
		t.n++
		return cursor + d
	}
	if last := t.at(t.n - 1); last.end == cursor {
		last.end = cursor + d
		return cursor + d
	}
	i := t.firstEndingAfter(cursor)
	start, left := cursor, d
	k := i
	for ; k < t.n; k++ {
		iv := t.at(k)
		if gap := iv.start - cursor; gap > 0 {
			if gap >= left {
				break
			}
			left -= gap
		}
		cursor = max(cursor, iv.end)
	}
	end = cursor + left
	// Every idle instant in [start, end) is now busy: intervals i..k-1 and
	// the new time become one interval, joined by touching neighbours.
	if i < t.n && t.at(i).start < start {
		start = t.at(i).start
	}
	last := end
	if k < t.n && t.at(k).start == end {
		last = t.at(k).end
		k++
	}
	if i > 0 && t.at(i-1).end == start {
		i--
		start = t.at(i).start
	}
	// Replace intervals i..k-1 with [start, last).
	switch removed := k - i; {
	case removed == 0:
		t.open(i)
	case removed > 1:
		t.remove(i+1, k)
	}
	*t.at(i) = interval{start, last}
	return end
}

// Earliest returns when a reservation of d arriving at at would start,
// without booking it.
func (t *calendar[R]) Earliest(at, d time.Duration) time.Duration {
	start, _ := t.earliest(at, d)
	return start
}

// Fit returns when a reservation of d arriving at at would start and the
// idle time it would leave in front of it (since the end of the busy
// interval before it). Callers choosing among several resources that can
// start the work at the same time pick the least idle time left, so short
// tasks do not scatter gaps over every resource (Snuggest does that).
func (t *calendar[R]) Fit(at, d time.Duration) (start, idleBefore time.Duration) {
	// The common case — the work goes after everything booked — is
	// written out here, without the calls of the general path.
	start = max(at, t.floor)
	if t.n == 0 {
		return start, start - t.floor
	}
	if last := t.at(t.n - 1).end; last <= start {
		return start, start - last
	}
	return t.fitBetween(start, d)
}

// fitBetween is Fit for work that arrives (at start, not before the
// floor) before the last booking ends: search, written out because the
// call would cost as much as its short loop.
func (t *calendar[R]) fitBetween(start, d time.Duration) (time.Duration, time.Duration) {
	i := t.firstEndingAfter(start)
	for ; i < t.n; i++ {
		iv := t.at(i)
		if iv.start >= start+d {
			break // fits in the gap before interval i
		}
		start = iv.end
	}
	prev := t.floor
	if i > 0 {
		prev = t.at(i - 1).end
	}
	return start, start - prev
}

// Snuggest returns which of the resources ts (at least one) a reservation
// of d arriving at at should go to: among those that can start it
// first, the one it fits most snugly (least idle time left in front of
// it, as Fit reports), the lowest index among equals. It is Fit on each
// in turn — written out, as a NAS asks every core several times per
// simulated request — except that it stops at a resource that can start
// at at with no idle time in front: no start is earlier than at and no
// idle time is negative, so only a resource of a lower index could tie,
// and the scan has passed those.
func Snuggest[R ring](ts []calendar[R], at, d time.Duration) int {
	best, bestStart, bestIdle := 0, time.Duration(0), time.Duration(0)
	for i := range ts {
		t := &ts[i]
		start := max(at, t.floor)
		var idle time.Duration
		switch {
		case t.n == 0:
			idle = start - t.floor
		case t.at(t.n-1).end <= start:
			idle = start - t.at(t.n-1).end
		default:
			start, idle = t.fitBetween(start, d)
		}
		if i == 0 || start < bestStart || (start == bestStart && idle < bestIdle) {
			best, bestStart, bestIdle = i, start, idle
			if start == at && idle == 0 {
				break
			}
		}
	}
	return best
}

// earliest finds the first gap ≥ at of length d and the index of the
// interval it precedes.
func (t *calendar[R]) earliest(at, d time.Duration) (start time.Duration, i int) {
	start = max(at, t.floor)
	// Most bookings arrive after everything booked so far ends (a resource
	// used roughly in time order): they go at the end, with no search.
	// (Reserve and Fit write this case out themselves.)
	if t.n == 0 || t.at(t.n-1).end <= start {
		return start, t.n
	}
	return t.search(start, d)
}

// search is earliest past its fast path: from the first interval that
// ends after start, the first gap long enough.
func (t *calendar[R]) search(start, d time.Duration) (time.Duration, int) {
	i := t.firstEndingAfter(start)
	for ; i < t.n; i++ {
		iv := t.at(i)
		if iv.start >= start+d {
			break // fits in the gap before interval i
		}
		start = iv.end
	}
	return start, i
}

// FreeAt returns the earliest time ≥ at at which the resource is free (it
// may be busy again later).
func (t *calendar[R]) FreeAt(at time.Duration) time.Duration {
	at = max(at, t.floor)
	// Intervals that end by at cannot delay it: start after them.
	for i := t.firstEndingAfter(at); i < t.n; i++ {
		iv := t.at(i)
		if iv.start > at {
			break
		}
		at = max(at, iv.end)
	}
	return at
}

// Booked returns the time ever reserved on the resource (all of
// Reserve's and ReserveSplit's durations): its busy time since it was made,
// which utilisation accounting divides by elapsed time.
func (t *calendar[R]) Booked() time.Duration { return t.booked }

// BookedBy returns the time reserved on the resource that lies before at:
// Booked less the reservations after at (the latest ones, which the
// calendar still holds unless more than its window of them lie beyond
// at).
func (t *calendar[R]) BookedBy(at time.Duration) time.Duration {
	return t.booked - t.Busy(at, math.MaxInt64)
}

// BusyUntil returns the end of the last reservation.
func (t *calendar[R]) BusyUntil() time.Duration {
	if t.n == 0 {
		return t.floor
	}
	return t.at(t.n - 1).end
}

// Busy returns the reserved time within [from, to).
func (t *calendar[R]) Busy(from, to time.Duration) time.Duration {
	var sum time.Duration
	// Intervals that end by from, or start at or after to, add nothing.
	for i := t.firstEndingAfter(from); i < t.n; i++ {
		iv := t.at(i)
		if iv.start >= to {
			break
		}
		s, e := max(iv.start, from), min(iv.end, to)
		if e > s {
			sum += e - s
		}
	}
	return sum
}

// firstEndingAfter returns the index of the first interval that ends
// after tm.
//
// A resource's bookings tend to land at the same place in its calendar
// time after time (a core's new work goes just after the work already
// done, before the work booked for the future), so it first tries the
// previous answer and the index after it, kept as a ring position so
// that forgetting the earliest interval does not move it; that settles
// three searches in four on the built-in setups. Otherwise it bisects:
// intervals are disjoint and sorted, so their ends are sorted too. The
// bisection has no branches on its comparisons (lo moves by half or by
// nothing through a mask), because which half tm falls in is a coin toss
// that a branch predictor gets wrong half the time. The hint only saves
// time; the answer is the same.
func (t *calendar[R]) firstEndingAfter(tm time.Duration) int {
	if k := (t.hint - t.head) & t.mask(); k <= t.n && (k == 0 || t.at(k-1).end <= tm) {
		if k == t.n || t.at(k).end > tm {
			return k
		}
		if k+1 == t.n || t.at(k+1).end > tm {
			t.hint = (t.hint + 1) & t.mask()
			return k + 1
		}
	}
	if t.n == 0 {
		return 0
	}
	// The answer is in [lo, lo+n]; each step halves n.
	lo, n := 0, t.n
	for n > 1 {
		half := n >> 1
		lo += half & -b2i(t.at(lo+half-1).end <= tm)
		n -= half
	}
	lo += b2i(t.at(lo).end <= tm)
	t.hint = (t.head + lo) & t.mask()
	return lo
}

// b2i is 1 for true and 0 for false, compiled to a flag set rather than a
// branch.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// insert places v before index i (interval i-1 ends ≤ v.start, v.end ≤
// interval i's start), merging with touching neighbours.
func (t *calendar[R]) insert(i int, v interval) {
	joinPrev := i > 0 && t.at(i-1).end == v.start
	joinNext := i < t.n && t.at(i).start == v.end
	switch {
	case joinPrev && joinNext:
		t.at(i - 1).end = t.at(i).end
		t.remove(i, i+1)
	case joinPrev:
		t.at(i - 1).end = v.end
	case joinNext:
		t.at(i).start = v.start
	default: // Reserve made room: t.n < len(t.iv)
		t.open(i)
		*t.at(i) = v
	}
}

// open makes room for one interval at index i (t.n < len(t.iv)), moving the
// intervals before i one place towards the front of the ring or those
// from i one place towards the back, whichever are fewer.
func (t *calendar[R]) open(i int) {
	if i < t.n-i {
		t.head = (t.head - 1) & t.mask()
		for k := 0; k < i; k++ {
			*t.at(k) = *t.at(k + 1)
		}
	} else {
		for k := t.n; k > i; k-- {
			*t.at(k) = *t.at(k - 1)
		}
	}
	t.n++
}

// remove deletes intervals lo..hi-1, closing the hole from whichever side
// has fewer intervals to move.
func (t *calendar[R]) remove(lo, hi int) {
	m := hi - lo
	if lo < t.n-hi {
		for k := lo - 1; k >= 0; k-- {
			*t.at(k + m) = *t.at(k)
		}
		t.head = (t.head + m) & t.mask()
	} else {
		for k := hi; k < t.n; k++ {
			*t.at(k - m) = *t.at(k)
		}
	}
	t.n -= m
}
