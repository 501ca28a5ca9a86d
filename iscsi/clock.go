package iscsi

import (
	"sync"
	"time"

	"github.com/nasemu/nasemu/emu"
)

// StopClock is a volume's clock whose waits end when Stop is called, or
// while a Hold lasts. A target that shuts down (or loses power) drops its
// connections, but a command in flight waits in the volume for the
// model's completion time, which on a slow setup or at a large
// --time-scale can be minutes: with this clock under the volume, Stop
// ends those waits at once (the data has moved; only the pacing is cut
// short), so the process honours a signal promptly.
type StopClock struct {
	emu.Clock

	mu      sync.Mutex
	cut     chan struct{} // closed while stopped or held
	stopped bool
	holds   int
}

// NewStopClock wraps c.
func NewStopClock(c emu.Clock) *StopClock { return &StopClock{Clock: c, cut: make(chan struct{})} }

// Stop ends every wait, now and later.
func (c *StopClock) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.stopped && c.holds == 0 {
		close(c.cut)
	}
	c.stopped = true
}

// Hold ends every wait until release is called: the waits in progress and
// those that begin meanwhile return at once.
func (c *StopClock) Hold() (release func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.stopped && c.holds == 0 {
		close(c.cut)
	}
	c.holds++
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.holds--
			if !c.stopped && c.holds == 0 {
				c.cut = make(chan struct{})
			}
		})
	}
}

// cutChan returns the channel that is closed when waits must end.
func (c *StopClock) cutChan() chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cut
}

// stopPoll is the stretch of a wait that the clock leaves to the wrapped
// clock's precise SleepUntil; longer waits sleep on a timer that Stop
// interrupts until they are this close to the deadline.
const stopPoll = 5 * time.Millisecond

// SleepUntil implements emu.Clock.
func (c *StopClock) SleepUntil(t time.Duration) {
	scale := 1.0
	if s, ok := c.Clock.(interface{ Scale() float64 }); ok {
		scale = s.Scale()
	}
	cut := c.cutChan()
	for {
		select {
		case <-cut:
			return
		default:
		}
		left := time.Duration(float64(t-c.Clock.Now()) * scale)
		if left <= 2*stopPoll {
			c.Clock.SleepUntil(t)
			return
		}
		tm := time.NewTimer(left - stopPoll)
		select {
		case <-tm.C:
		case <-cut:
			tm.Stop()
			return
		}
	}
}
