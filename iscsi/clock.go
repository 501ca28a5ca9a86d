package iscsi

import (
	"sync"
	"time"

	"github.com/nasemu/nasemu/emu"
)

// StopClock is a volume's clock whose waits end when Stop is called. A
// target that shuts down drops its connections, but a command in flight
// waits in the volume for the model's completion time, which on a slow
// setup or at a large --time-scale can be minutes: with this clock under
// the volume, Stop ends those waits at once (the data has moved; only the
// pacing is cut short), so the process honours a signal promptly.
type StopClock struct {
	emu.Clock
	stop chan struct{}
	once sync.Once
}

// NewStopClock wraps c.
func NewStopClock(c emu.Clock) *StopClock { return &StopClock{Clock: c, stop: make(chan struct{})} }

// Stop ends every wait, now and later.
func (c *StopClock) Stop() { c.once.Do(func() { close(c.stop) }) }

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
	for {
		select {
		case <-c.stop:
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
		case <-c.stop:
			tm.Stop()
			return
		}
	}
}
