package emu

import (
	"sync"
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
// A deadline is met by the pacer (pacer.go): the waiting goroutine parks,
// holding no thread, on a kernel timer armed for its deadline, which wakes
// it once, a few microseconds late on an idle host (a request waiting
// alone is woken a little early and spins the rest). The cost of pacing a
// request is one timer and one wake-up, not several sleeps in the kernel
// and a spin: on a host shared with other work, pacing does not take the
// processors that the emulated requests themselves need. Go's own timers,
// by contrast, end a sleep up to a millisecond late when
// the process is idle (the runtime waits for its next timer in epoll,
// whose timeout has a resolution of a millisecond).
type WallClock struct {
	start   time.Time
	scale   float64
	precise bool // wait on alarms (else on Go's timers)
}

// NewWallClock returns a clock whose model time starts now. scale is the
// time scale: with scale F, one model second lasts F wall seconds, so a
// setup faster than this host can carry is still emulated faithfully (0
// means 1). spin 0 waits on Go's timers only, which tests running under
// testing/synctest need; any other value waits on the pacer's kernel
// timers (the value once set how long a waiting request spun; the pacer
// sets its own margin now).
func NewWallClock(scale float64, spin time.Duration) *WallClock {
	if scale <= 0 {
		scale = 1
	}
	c := &WallClock{start: time.Now(), scale: scale}
	c.precise = spin != 0
	return c
}

// Scale returns the clock's time scale (wall seconds per model second).
func (c *WallClock) Scale() float64 { return c.scale }

// Now implements Clock.
func (c *WallClock) Now() time.Duration {
	return time.Duration(float64(time.Since(c.start)) / c.scale)
}

// Precise reports whether the clock waits on the pacer's kernel timer
// (else on Go's timers).
func (c *WallClock) Precise() bool { return c.precise }

// SleepUntil implements Clock: it returns once the wall clock has reached
// the deadline (see WallClock).
func (c *WallClock) SleepUntil(t time.Duration) {
	wall := c.start.Add(time.Duration(float64(t) * c.scale))
	if c.precise && sleepAlarm(wall) {
		return
	}
	for left := time.Until(wall); left > 0; left = time.Until(wall) {
		time.Sleep(left)
	}
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
