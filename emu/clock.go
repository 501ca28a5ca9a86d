package emu

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Clock maps model time (a duration since the clock's start) onto the time
// that callers experience.
type Clock interface {
	// Now returns the current model time.
	Now() time.Duration
	// SleepUntil returns once Now() >= t.
	SleepUntil(t time.Duration)
}

// WallClock is model time on the wall clock, optionally slowed down.
//
// A deadline is met in three stages. Far from it, the goroutine sleeps on
// Go's timers; they are cheap but coarse: the runtime waits for its next
// timer in epoll, whose timeout has a resolution of a millisecond, so when
// the process has nothing else to do a sleep ends up to about a
// millisecond late. Within coarseSlack of the deadline, the goroutine's
// thread sleeps in the kernel instead (nanosleep, which high-resolution
// timers end a few tens of microseconds late); within the spin margin,
// the goroutine spins, yielding the processor, until the deadline has
// passed. The margin adapts to how late the kernel's sleeps have been
// ending, so a loaded host spins longer and an idle one hardly at all; a
// deadline is met to a few microseconds unless the host preempts the
// spinning thread.
//
// A goroutine sleeping in the kernel or spinning holds a processor of the
// Go runtime (a P) — a thread in a system call keeps its P until the
// runtime's monitor takes it back, which can take milliseconds — and a
// spinning one burns a real processor. With many requests in flight they
// would starve the filesystem's own goroutines, so one P is always left to
// them (at most GOMAXPROCS-1 goroutines wait in the kernel at a time, the
// others wait on Go's timers), and at most one goroutine per two real
// processors spins (the others sleep in the kernel up to the deadline and
// answer a few tens of microseconds late, a small part of a request's
// time when that many are in flight). A process serving many requests
// therefore wants more Ps than processors (nasemu mount runs with 8 or
// more).
type WallClock struct {
	start time.Time
	scale float64
	spin  time.Duration // fixed margin; < 0: adaptive (margin)

	margin   atomic.Int64 // adaptive spin margin, nanoseconds
	holding  atomic.Int64 // goroutines sleeping in the kernel or spinning now
	spinners atomic.Int64 // goroutines spinning now
}

// coarseSlack is how far ahead of a deadline a sleep on Go's timers must
// end: a millisecond of epoll resolution and scheduling slack.
const coarseSlack = 2 * time.Millisecond

// Bounds of the adaptive spin margin. The floor covers the usual lateness
// of a kernel sleep on an idle host; the ceiling bounds the processor time
// one request may spin on a host too loaded to keep time anyway.
const (
	minMargin = 40 * time.Microsecond
	maxMargin = 2 * time.Millisecond
)

// DefaultSpin returns the initial spin margin of a WallClock: how late a
// kernel sleep ends on this host, measured once, with room to spare. The
// margin then follows the lateness of the clock's own sleeps.
func DefaultSpin() time.Duration {
	spinOnce.Do(func() {
		var worst time.Duration
		for range 8 {
			const nap = 100 * time.Microsecond
			if over := nanosleep(nap) - nap; over > worst {
				worst = over
			}
		}
		defaultSpin = clampMargin(worst + worst/4 + 20*time.Microsecond)
	})
	return defaultSpin
}

var (
	spinOnce    sync.Once
	defaultSpin time.Duration
)

func clampMargin(d time.Duration) time.Duration { return min(max(d, minMargin), maxMargin) }

// NewWallClock returns a clock whose model time starts now. scale is the
// time scale: with scale F, one model second lasts F wall seconds, so a
// setup faster than this host can carry is still emulated faithfully (0
// means 1). spin is the stretch before a deadline spent spinning instead of
// sleeping: negative means adaptive (starting at DefaultSpin()); 0 never
// spins nor sleeps in the kernel, only on Go's timers, which tests running
// under testing/synctest need.
func NewWallClock(scale float64, spin time.Duration) *WallClock {
	if scale <= 0 {
		scale = 1
	}
	c := &WallClock{start: time.Now(), scale: scale, spin: spin}
	if spin < 0 {
		c.margin.Store(int64(DefaultSpin()))
	}
	return c
}

// Scale returns the clock's time scale (wall seconds per model second).
func (c *WallClock) Scale() float64 { return c.scale }

// Now implements Clock.
func (c *WallClock) Now() time.Duration {
	return time.Duration(float64(time.Since(c.start)) / c.scale)
}

// Spin returns the current spin margin.
func (c *WallClock) Spin() time.Duration {
	if c.spin >= 0 {
		return c.spin
	}
	return time.Duration(c.margin.Load())
}

// SleepUntil implements Clock: it sleeps on Go's timers, then in the
// kernel, then spins until the deadline has passed (see WallClock).
func (c *WallClock) SleepUntil(t time.Duration) {
	wall := c.start.Add(time.Duration(float64(t) * c.scale))
	if c.spin == 0 {
		for left := time.Until(wall); left > 0; left = time.Until(wall) {
			time.Sleep(left)
		}
		return
	}
	for {
		left := time.Until(wall)
		if left <= 0 {
			return
		}
		margin := c.Spin()
		switch {
		case left > margin+coarseSlack:
			time.Sleep(left - margin - coarseSlack)
		case !c.hold():
			// Enough goroutines hold a P already: wait on Go's timers, up
			// to the margin (then try again) or the deadline.
			if left > margin {
				left -= margin
			}
			time.Sleep(left)
		case left > margin:
			want := left - margin
			if over := nanosleep(want) - want; c.spin < 0 && over >= 0 {
				c.adapt(over)
			}
			c.holding.Add(-1)
		case c.spinners.Add(1) > int64(max(1, runtime.NumCPU()/2)):
			c.spinners.Add(-1)
			nanosleep(left)
			c.holding.Add(-1)
		default:
			for time.Until(wall) > 0 {
				runtime.Gosched()
			}
			c.spinners.Add(-1)
			c.holding.Add(-1)
		}
	}
}

// hold reports whether the caller may hold its P to wait (see WallClock);
// if so, the caller releases it with holding.Add(-1).
func (c *WallClock) hold() bool {
	if c.holding.Add(1) <= int64(max(1, runtime.GOMAXPROCS(0)-1)) {
		return true
	}
	c.holding.Add(-1)
	return false
}

// adapt moves the spin margin towards the lateness of the latest kernel
// sleep: at once when a sleep ended later than the margin allows, slowly
// (by 1/32 of the difference) when sleeps end earlier. A margin below a
// sleep's lateness makes an answer late; one above it only spins longer.
func (c *WallClock) adapt(over time.Duration) {
	want := clampMargin(over + over/4 + 20*time.Microsecond)
	cur := time.Duration(c.margin.Load())
	if want < cur {
		want = cur - (cur-want)/32
	}
	c.margin.Store(int64(want)) // a lost update between requests is harmless
}

// VirtualClock is model time that only moves when a caller waits: it is the
// clock of tests that want an emulated volume to answer at once while still
// accounting the model's time.
type VirtualClock struct {
	mu  sync.Mutex
	now time.Duration
}

// Now implements Clock.
func (c *VirtualClock) Now() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// SleepUntil implements Clock: it advances the clock to t at once.
func (c *VirtualClock) SleepUntil(t time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = max(c.now, t)
}
