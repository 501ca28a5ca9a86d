package serve

import (
	"sync/atomic"
	"time"

	"github.com/nasemu/nasemu/emu"
)

// CompClock is a share's clock behind smbd: wall-clock model time whose
// SleepUntil returns before the deadline by the part of the host's round
// trip that FUSE's own compensation leaves (SMBCompensator keeps it up to
// date), a figure for each wait (emu.EarlyTable); fusefs answers earlier
// still by FUSE's own part.
type CompClock struct {
	*emu.WallClock
	table atomic.Pointer[emu.EarlyTable] // wall times; nil: on time
}

var _ emu.Clock = (*CompClock)(nil)

// NewCompClock wraps wall, answering on time until SetEarly.
func NewCompClock(wall *emu.WallClock) *CompClock { return &CompClock{WallClock: wall} }

// SetEarly sets how early to answer, in wall time, whatever the wait.
func (c *CompClock) SetEarly(d time.Duration) { c.table.Store(emu.FlatEarly(d)) }

// SetEarlyTable sets how early to answer as a function of the client's
// wait (wall times).
func (c *CompClock) SetEarlyTable(t *emu.EarlyTable) { c.table.Store(t) }

// early returns how much earlier than t (model time) to answer, in model
// time.
func (c *CompClock) early(t time.Duration) time.Duration {
	wait := time.Duration(float64(t-c.Now()) * c.Scale())
	return time.Duration(float64(c.table.Load().At(wait)) / c.Scale())
}

// SleepUntil implements emu.Clock.
func (c *CompClock) SleepUntil(t time.Duration) {
	c.WallClock.SleepUntil(t - c.early(t))
}
