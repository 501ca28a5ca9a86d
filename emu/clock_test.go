package emu_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/nasemu/nasemu/emu"
)

// TestWallClockDeadlines checks that SleepUntil returns just after its
// deadline, near or far. Go's timers alone end a sleep up to a millisecond
// late when the process is idle, as this test's process is; a clock that
// trusted them would miss by that much.
func TestWallClockDeadlines(t *testing.T) {
	for _, ahead := range []time.Duration{150 * time.Microsecond, 700 * time.Microsecond, 2500 * time.Microsecond, 6 * time.Millisecond} {
		timing(t, func() error {
			c := emu.NewWallClock(1, -1)
			late := make([]time.Duration, 0, 60)
			for range cap(late) {
				at := c.Now() + ahead
				c.SleepUntil(at)
				late = append(late, c.Now()-at)
			}
			slices.Sort(late)
			p50, p90 := late[len(late)/2], late[len(late)*9/10]
			t.Logf("%v ahead: late p50 %v, p90 %v, max %v", ahead, p50, p90, late[len(late)-1])
			if late[0] < 0 {
				return fmt.Errorf("%w: %v ahead: returned %v early", errEarly, ahead, -late[0])
			}
			// On an idle host the p50 is a few microseconds (the kernel
			// timer's and the scheduler's wake-up); a busy one delays a
			// wake-up now and then, which only a bound on the median
			// tolerates.
			if p50 > 50*time.Microsecond {
				return fmt.Errorf("%v ahead: late p50 %v (p90 %v); want ≤ 50 µs", ahead, p50, p90)
			}
			return nil
		})
	}
}

// A clock that never spins (spin 0) sleeps on Go's timers only (as tests under
// testing/synctest need) and still never returns early.
func TestWallClockNoSpin(t *testing.T) {
	c := emu.NewWallClock(1, 0)
	for range 20 {
		at := c.Now() + 300*time.Microsecond
		c.SleepUntil(at)
		if now := c.Now(); now < at {
			t.Fatalf("returned %v early", at-now)
		}
	}
	if c.Precise() {
		t.Error("a clock that never spins waits on the pacer")
	}
}
