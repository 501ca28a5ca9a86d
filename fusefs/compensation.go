package fusefs

import (
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nasemu/nasemu/emu"
)

// A request spends time outside the model: the kernel passes it to the
// filesystem, and the answer back to the client, whose thread has to be
// woken. The share answers that much before the model's completion time,
// so that the latency a client measures is the model's.
//
// That time grows with the wait. A client thread that has waited a few
// microseconds is woken on a processor that is still running; one that
// has waited milliseconds sleeps on a processor that has gone idle (on a
// virtual machine, one whose virtual CPU the host has descheduled), and
// waking it takes up to a few hundred microseconds more. On this kind of
// host the extra round-trip time of a 4 KiB read measured through a paced
// mount grew from ~20 µs at 100 µs of modelled latency to ~100 µs at 3 ms.
// A single figure would answer short requests too early or long ones too
// late, so the compensation is measured at several waits and interpolated
// at each request's.

// compensation is how early to answer (wall time) as a function of how
// long the client waits (wall time): points sorted by wait, interpolated
// linearly between them and held constant beyond them.
type compensation struct {
	wait, early []time.Duration
}

// flatCompensation answers every request d early.
func flatCompensation(d time.Duration) *compensation {
	return &compensation{wait: []time.Duration{0}, early: []time.Duration{d}}
}

// at returns the compensation for a wait.
func (c *compensation) at(wait time.Duration) time.Duration {
	i, _ := slices.BinarySearch(c.wait, wait)
	switch {
	case i == 0:
		return c.early[0]
	case i == len(c.wait):
		return c.early[i-1]
	}
	w0, w1, e0, e1 := c.wait[i-1], c.wait[i], c.early[i-1], c.early[i]
	return e0 + time.Duration(float64(e1-e0)*float64(wait-w0)/float64(w1-w0))
}

// earlyClock answers SleepUntil early by the compensation for the wait
// left until the deadline.
type earlyClock struct {
	emu.Clock
	comp atomic.Pointer[compensation] // nil: on time
}

// set sets the compensation (wall times).
func (c *earlyClock) set(comp *compensation) { c.comp.Store(comp) }

// scale returns wall seconds per model second.
func (c *earlyClock) scale() float64 {
	if s, ok := c.Clock.(interface{ Scale() float64 }); ok && s.Scale() > 0 {
		return s.Scale()
	}
	return 1
}

// early returns how much earlier than t (model time) to answer.
func (c *earlyClock) early(t time.Duration) time.Duration {
	comp := c.comp.Load()
	if comp == nil {
		return 0
	}
	sc := c.scale()
	wait := time.Duration(float64(t-c.Clock.Now()) * sc)
	return time.Duration(float64(comp.at(wait)) / sc)
}

// SleepUntil implements emu.Clock.
func (c *earlyClock) SleepUntil(t time.Duration) {
	c.Clock.SleepUntil(t - c.early(t))
}

// Unwrap returns the clock that paces the model.
func (c *earlyClock) Unwrap() emu.Clock { return c.Clock }

// Compensation returns how much earlier than the model's completion time
// the shortest requests are answered, in model time (see
// Options.Compensation); longer requests are answered a little earlier
// still (see CompensationAt).
func (f *FS) Compensation() time.Duration { return f.CompensationAt(0) }

// CompensationAt returns how much earlier than the model's completion time
// a request that the model makes last d is answered, both in model time.
func (f *FS) CompensationAt(d time.Duration) time.Duration {
	return f.early.early(f.early.Clock.Now() + d)
}

// compensationProbes are the waits at which the round trip is measured and
// the samples taken at each (fewer at long waits, which take longer).
var compensationProbes = []struct {
	wait time.Duration
	n    int
}{{0, 60}, {250 * time.Microsecond, 40}, {time.Millisecond, 25}, {4 * time.Millisecond, 15}}

// probe is a statfs answered after a delay, to measure the round trip of a
// request whose client waits that long.
type probe struct {
	clock *emu.WallClock
	delay time.Duration
}

// probeDelay delays statfs while the compensation is being measured.
func (f *FS) probeDelay() {
	if p := f.probing.Load(); p != nil && p.delay > 0 {
		p.clock.SleepUntil(p.clock.Now() + p.delay)
	}
}

// compensationRounds is how many times the probes are taken, each time
// at every wait in turn; each wait's estimate is its lowest round's.
const compensationRounds = 3

// measureCompensation measures, at each probe wait, the round trip of a
// request that the filesystem answers after that wait without charging the
// model (statfs), less the wait: the kernel's and FUSE's share of a
// request's latency when its client waits that long. The answer is paced
// as charged requests are (the same clock: sleep, then spin). Requests are
// spaced out, because a client waiting for a paced answer finds the
// serving threads asleep, and waking them is part of the round trip;
// whether a thread was still awake makes the samples bimodal, so each
// estimate is the mean of the middle half of the samples rather than a
// median (and not the mean: on a shared host a few samples are
// preempted, and the tail would have every answer go out too early).
//
// The probes run in rounds (compensationRounds), and each wait keeps the
// estimate of its quietest round: what the compensation removes is the
// round trip that the emulation itself adds. Other tenants' work in the
// moment the share is mounted is not part of it: it delays a client of
// real hardware as much, and an estimate taken during a burst of it would
// have every later answer go out early. Each estimate is also capped (200
// µs and a tenth of the wait), so that a host too loaded to measure does
// not make the share answer far too early.
func (f *FS) measureCompensation(mountpoint string) *compensation {
	defer f.probing.Store(nil)
	clock := emu.NewWallClock(1, -1)
	comp := &compensation{}
	for _, pr := range compensationProbes {
		comp.wait = append(comp.wait, pr.wait)
		comp.early = append(comp.early, 200*time.Microsecond+pr.wait/10)
	}
	var st syscall.Statfs_t
	for range compensationRounds {
		for k, pr := range compensationProbes {
			f.probing.Store(&probe{clock: clock, delay: pr.wait})
			lat := make([]time.Duration, max(4, pr.n/compensationRounds))
			for i := range lat {
				time.Sleep(300 * time.Microsecond)
				start := time.Now()
				if err := syscall.Statfs(mountpoint, &st); err != nil {
					return nil
				}
				lat[i] = time.Since(start) - pr.wait
			}
			comp.early[k] = min(comp.early[k], max(0, middleMean(lat)))
		}
	}
	f.log.Info("compensation measured", "waits", comp.wait, "early", comp.early)
	return comp
}

// middleMean returns the mean of the middle half of samples (sorting
// them).
func middleMean(samples []time.Duration) time.Duration {
	slices.Sort(samples)
	trim := len(samples) / 4
	mid := samples[trim : len(samples)-trim]
	var sum time.Duration
	for _, d := range mid {
		sum += d
	}
	return sum / time.Duration(len(mid))
}
