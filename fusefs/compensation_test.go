package fusefs

import (
	"testing"
	"time"

	"github.com/nasemu/nasemu/emu"
)

// The compensation is interpolated between the measured waits, held
// beyond them, and scaled into model time with the clock's time scale.
func TestCompensationTable(t *testing.T) {
	us := time.Microsecond
	c := &emu.EarlyTable{Wait: []time.Duration{0, 1000 * us, 4000 * us}, Early: []time.Duration{20 * us, 60 * us, 120 * us}}
	for _, tc := range []struct{ wait, want time.Duration }{
		{-5 * us, 20 * us}, {0, 20 * us}, {500 * us, 40 * us}, {1000 * us, 60 * us},
		{2500 * us, 90 * us}, {4000 * us, 120 * us}, {time.Second, 120 * us},
	} {
		if got := c.At(tc.wait); got != tc.want {
			t.Errorf("at(%v) = %v, want %v", tc.wait, got, tc.want)
		}
	}
	// At time scale 2, a request of 500 µs of model time keeps its client
	// waiting 1 ms: answered 60 µs of wall time early, 30 µs of model time.
	e := &earlyClock{Clock: &emu.VirtualClock{}}
	e.Clock = scaled{e.Clock}
	e.set(c)
	if got := e.early(500 * us); got != 30*us {
		t.Errorf("at time scale 2, 500 µs of model time: %v early, want 30µs", got)
	}
}

// scaled is a clock with a time scale of 2.
type scaled struct{ emu.Clock }

func (scaled) Scale() float64 { return 2 }
