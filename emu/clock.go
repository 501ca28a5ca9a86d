package emu

import (
	"runtime"
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
type WallClock struct {
	start time.Time
	scale float64
	spin  time.Duration
}

// DefaultSpin returns how long before a deadline a WallClock stops sleeping
// and spins. The OS wakes a sleeper late — tens of microseconds on a kernel
// with high-resolution timers, about a millisecond on some virtual machines
// — so the spin is calibrated once from this host's sleep overshoot; the
// spin makes deadlines precise to a few microseconds.
func DefaultSpin() time.Duration {
	spinOnce.Do(func() {
		var worst time.Duration
		for range 5 {
			const nap = 50 * time.Microsecond
			start := time.Now()
			time.Sleep(nap)
			worst = max(worst, time.Since(start)-nap)
		}
		defaultSpin = min(max(worst+worst/4+20*time.Microsecond, 100*time.Microsecond), 3*time.Millisecond)
	})
	return defaultSpin
}

var (
	spinOnce    sync.Once
	defaultSpin time.Duration
)

// NewWallClock returns a clock whose model time starts now. scale is the
// time scale: with scale F, one model second lasts F wall seconds, so a
// setup faster than this host can carry is still emulated faithfully (0
// means 1). spin is the stretch before a deadline spent spinning instead of
// sleeping (negative means DefaultSpin(); 0 never spins, which tests running
// under testing/synctest need).
func NewWallClock(scale float64, spin time.Duration) *WallClock {
	if scale <= 0 {
		scale = 1
	}
	if spin < 0 {
		spin = DefaultSpin()
	}
	return &WallClock{start: time.Now(), scale: scale, spin: spin}
}

// Scale returns the clock's time scale (wall seconds per model second).
func (c *WallClock) Scale() float64 { return c.scale }

// Now implements Clock.
func (c *WallClock) Now() time.Duration {
	return time.Duration(float64(time.Since(c.start)) / c.scale)
}

// SleepUntil implements Clock: it sleeps until spin before the deadline,
// then yields the processor until the deadline has passed.
func (c *WallClock) SleepUntil(t time.Duration) {
	wall := c.start.Add(time.Duration(float64(t) * c.scale))
	for {
		left := time.Until(wall)
		if left <= 0 {
			return
		}
		if left > c.spin {
			time.Sleep(left - c.spin)
			continue
		}
		runtime.Gosched()
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
