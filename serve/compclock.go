package serve

import (
	"sync/atomic"
	"time"

	"github.com/nasemu/nasemu/emu"
)

// CompClock is a share's clock behind smbd: wall-clock model time whose
// SleepUntil returns a set wall time before the deadline, the host's SMB
// round trip without FUSE (SMBCompensator keeps it up to date); fusefs
// answers earlier still by FUSE's own round trip.
type CompClock struct {
	*emu.WallClock
	early atomic.Int64 // nanoseconds of model time
}

var _ emu.Clock = (*CompClock)(nil)

// NewCompClock wraps wall, answering on time until SetEarly.
func NewCompClock(wall *emu.WallClock) *CompClock { return &CompClock{WallClock: wall} }

// SetEarly sets how early to answer, in wall time.
func (c *CompClock) SetEarly(d time.Duration) {
	c.early.Store(int64(float64(d) / c.Scale()))
}

// SleepUntil implements emu.Clock.
func (c *CompClock) SleepUntil(t time.Duration) {
	c.WallClock.SleepUntil(t - time.Duration(c.early.Load()))
}
