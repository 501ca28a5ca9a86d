package timeline

import (
	"math/rand/v2"
	"testing"
	"time"
)

// In time order a Timeline is exactly a busy-until.
func TestInOrderIsBusyUntil(t *testing.T) {
	var tl Timeline
	var busy time.Duration
	rng := rand.New(rand.NewPCG(1, 2))
	at := time.Duration(0)
	for range 10000 {
		at += time.Duration(rng.IntN(100)) * time.Microsecond
		d := time.Duration(rng.IntN(150)+1) * time.Microsecond
		s, e := tl.Reserve(at, d)
		want := max(at, busy)
		if s != want || e != want+d {
			t.Fatalf("Reserve(%v, %v) = %v..%v, want start %v", at, d, s, e, want)
		}
		busy = e
	}
	if tl.n > 2 {
		t.Errorf("in-order use left %d intervals", tl.n)
	}
}

// A reservation arriving before a future one uses the gap when it fits, and
// goes after it when it does not.
func TestGapFilling(t *testing.T) {
	var tl Timeline
	tl.Reserve(10*time.Millisecond, time.Millisecond) // a future write phase
	if s, _ := tl.Reserve(0, time.Millisecond); s != 0 {
		t.Errorf("fitting request started at %v, want 0", s)
	}
	if s, _ := tl.Reserve(9*time.Millisecond+500*time.Microsecond, time.Millisecond); s != 11*time.Millisecond {
		t.Errorf("non-fitting request started at %v, want 11ms", s)
	}
	if got := tl.FreeAt(10 * time.Millisecond); got != 12*time.Millisecond {
		t.Errorf("FreeAt(10ms) = %v, want 12ms", got)
	}
}

// Reservations never overlap and each starts at the earliest moment a
// brute-force search over a fine grid finds (while the window is not full).
func TestAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		var tl Timeline
		var booked []interval
		for range Window / 2 {
			at := time.Duration(rng.IntN(1000))
			d := time.Duration(rng.IntN(50) + 1)
			s, e := tl.Reserve(at, d)
			// Brute force: earliest start ≥ at with [s, s+d) free.
			want := at
			for {
				clash := false
				for _, b := range booked {
					if want < b.end && b.start < want+d {
						want, clash = b.end, true
					}
				}
				if !clash {
					break
				}
			}
			if s != want || e != s+d {
				t.Fatalf("trial %d: Reserve(%d, %d) = [%d, %d), brute force %d", trial, at, d, s, e, want)
			}
			booked = append(booked, interval{s, e})
		}
	}
}

// When more than Window disjoint intervals are kept, the earliest are
// forgotten and nothing is placed before them.
func TestWindowFloor(t *testing.T) {
	var tl Timeline
	for i := range Window + 5 {
		tl.Reserve(time.Duration(i)*10, 1)
	}
	if tl.n != Window {
		t.Fatalf("%d intervals kept, want %d", tl.n, Window)
	}
	if s, _ := tl.Reserve(0, 1); s < tl.floor || s == 0 {
		t.Errorf("reservation at 0 placed at %d, before the floor %d", s, tl.floor)
	}
}

func BenchmarkReserve(b *testing.B) { benchReserve(b, new(Timeline)) }

// BenchmarkReserveCore is BenchmarkReserve on a Core, whose calendar
// fills to CoreWindow intervals.
func BenchmarkReserveCore(b *testing.B) { benchReserve(b, new(Core)) }

// benchReserve books tl in time order, every fourth booking a little
// ahead (a future phase).
func benchReserve[R ring](b *testing.B, tl *calendar[R]) {
	b.ReportAllocs()
	at := time.Duration(0)
	for i := 0; b.Loop(); i++ {
		at += 7
		if i%4 == 0 {
			tl.Reserve(at+100, 5) // a future phase
		} else {
			tl.Reserve(at, 5)
		}
	}
}

func TestFitIdleBefore(t *testing.T) {
	var tl Timeline
	tl.Reserve(0, 10)
	tl.Reserve(30, 10)
	if s, idle := tl.Fit(12, 5); s != 12 || idle != 2 {
		t.Errorf("Fit(12, 5) = %d, %d; want 12, 2", s, idle)
	}
	if s, idle := tl.Fit(12, 25); s != 40 || idle != 0 {
		t.Errorf("Fit(12, 25) = %d, %d; want 40, 0", s, idle)
	}
}

// ReserveSplit against a brute-force reference: a per-nanosecond bitmap
// filled greedily from the arrival time; intervals stay sorted and never
// touch.
func TestReserveSplitReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		var tl Timeline
		busy := make([]bool, 4000)
		for i := range 20 {
			at := time.Duration(rng.IntN(1500))
			d := time.Duration(rng.IntN(60) + 1)
			if rng.IntN(4) == 0 { // mix in whole reservations
				s, e := tl.Reserve(at, d)
				for c := s; c < e; c++ {
					if busy[c] {
						t.Fatalf("trial %d step %d: Reserve double-booked %d", trial, i, c)
					}
					busy[c] = true
				}
				continue
			}
			got := tl.ReserveSplit(at, d)
			left, want := d, at
			for c := at; left > 0; c++ {
				if !busy[c] {
					busy[c] = true
					left--
					want = c + 1
				}
			}
			if got != want {
				t.Fatalf("trial %d step %d: ReserveSplit(%v, %v) = %v, want %v", trial, i, at, d, got, want)
			}
			for j := 1; j < tl.n; j++ {
				if tl.at(j).start <= tl.at(j-1).end {
					t.Fatalf("intervals %d and %d touch: %v and %v", j-1, j, *tl.at(j - 1), *tl.at(j))
				}
			}
		}
	}
}

// Snuggest picks what a full scan of Fit over every resource picks:
// earliest start, then least idle time in front, then lowest index. The
// calendars are random, with bookings ahead of time, so starts, idle
// times and exact ties (work chained at a booking's end) all vary.
func TestSnuggestIsFullScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{1, 2, 4, 7} {
		ts := make([]Timeline, n)
		now := time.Duration(0)
		stops := 0
		for range 20000 {
			now += time.Duration(rng.IntN(3000))
			at := now
			switch rng.IntN(4) {
			case 0: // booked ahead
				at += time.Duration(rng.IntN(200_000))
			case 1: // chained at the end of a booking
				k := &ts[rng.IntN(n)]
				if k.n > 0 {
					at = k.at(rng.IntN(k.n)).end
				}
			}
			d := time.Duration(1 + rng.IntN(5000))
			want, wantStart, wantIdle := -1, time.Duration(0), time.Duration(0)
			for i := range ts {
				s, idle := ts[i].Fit(at, d)
				if want < 0 || s < wantStart || (s == wantStart && idle < wantIdle) {
					want, wantStart, wantIdle = i, s, idle
				}
			}
			if wantStart == at && wantIdle == 0 && want < n-1 {
				stops++
			}
			if got := Snuggest(ts, at, d); got != want {
				t.Fatalf("%d resources, %v for %v: Snuggest %d, full scan %d", n, at, d, got, want)
			}
			ts[want].Reserve(at, d)
		}
		if n > 1 && stops < 100 {
			t.Errorf("%d resources: only %d choices a perfect fit settles early; the test misses the shortcut", n, stops)
		}
	}
}

// Booked sums every reservation, those the calendar has forgotten too;
// BookedBy leaves out what lies after its time.
func TestBooked(t *testing.T) {
	var tl Timeline
	var want time.Duration
	for i := range 3 * Window {
		// Disjoint bookings, so the calendar forgets the earliest.
		tl.Reserve(time.Duration(i)*10*time.Microsecond, 4*time.Microsecond)
		want += 4 * time.Microsecond
	}
	tl.ReserveSplit(0, 3*time.Microsecond) // fills gaps among the remembered intervals
	want += 3 * time.Microsecond
	if got := tl.Booked(); got != want {
		t.Errorf("Booked %v, want %v", got, want)
	}
	end := tl.BusyUntil()
	if got := tl.BookedBy(end); got != want {
		t.Errorf("BookedBy(end) %v, want all %v", got, want)
	}
	// The last booking, [end-4µs, end), is half after end-2µs.
	if got := tl.BookedBy(end - 2*time.Microsecond); got != want-2*time.Microsecond {
		t.Errorf("BookedBy(end-2µs) %v, want %v", got, want-2*time.Microsecond)
	}
}

// A Core remembers CoreWindow intervals: with hundreds of stretches of
// work booked ahead (a core's post-I/O work, one per request in flight),
// work arriving before them still fills the idle time among them, as the
// brute-force bitmap does, where a Timeline would have forgotten the
// earliest and placed nothing before its end.
func TestCoreWindow(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	var c Core
	const span = 200_000
	busy := make([]bool, 8*span)
	// 600 bookings ahead, disjoint: each 10 ns at a distinct multiple of 300.
	for _, k := range rng.Perm(600) {
		at := time.Duration(span/2 + k*300)
		got := c.ReserveSplit(at, 10)
		for i := at; i < at+10; i++ {
			busy[i] = true
		}
		if got != at+10 {
			t.Fatalf("booking ahead at %v ended at %v, want %v", at, got, at+10)
		}
	}
	if c.n != 600 || c.floor != 0 {
		t.Fatalf("%d intervals kept, floor %v: want 600 and none", c.n, c.floor)
	}
	// Work arriving earlier fills the gaps in time order.
	for step := range 2000 {
		at := time.Duration(rng.IntN(span))
		d := time.Duration(rng.IntN(400) + 1)
		got := c.ReserveSplit(at, d)
		left, want := d, at
		for i := at; left > 0; i++ {
			if !busy[i] {
				busy[i] = true
				left--
				want = i + 1
			}
		}
		if got != want {
			t.Fatalf("step %d: ReserveSplit(%v, %v) = %v, want %v", step, at, d, got, want)
		}
	}
	for i := range CoreWindow + 5 {
		c.Reserve(time.Duration(8*span+i*10), 1)
	}
	if c.n != CoreWindow || c.floor <= 0 {
		t.Errorf("%d intervals kept, floor %v: want %d and a floor", c.n, c.floor, CoreWindow)
	}
}
