package fusefs

import (
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/models"
)

// A request spends time outside the model (see emu.EarlyTable): the share
// answers that much before the model's completion time, so that the
// latency a client measures is the model's. That time grows with the
// client's wait, so it is measured at several (docs/notes/fuse-mount.md).

// earlyClock answers SleepUntil early by the compensation for the wait
// left until the deadline.
type earlyClock struct {
	emu.Clock
	comp atomic.Pointer[emu.EarlyTable] // nil: on time
}

// set sets the compensation (wall times).
func (c *earlyClock) set(comp *emu.EarlyTable) { c.comp.Store(comp) }

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
	return time.Duration(float64(comp.At(wait)) / sc)
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

// SetProbeWait makes reads of the share's probe files (ProbePrefix, in its
// root) answer d (wall time) after they arrive, charging nothing: a front
// in front of the share (smbd) then times with them the whole round trip
// of a request whose client waits d, its own legs and the share's.
func (f *FS) SetProbeWait(d time.Duration) { f.probeWait.Store(int64(d)) }

// EarlyAt returns how early the share answers, by itself, a request whose
// client waits wait (both wall times): FUSE's part of the round trip.
func (f *FS) EarlyAt(wait time.Duration) time.Duration { return f.early.comp.Load().At(wait) }

// SetTransferEarly makes the share answer a read or a write earlier by
// read or write (wall time) per MiB it moves: the time the front in front
// of the share (smbd) and the host's network stack take to move the
// request's bytes between the client and the share, outside the model. A
// write's bytes cross the host before the share sees the request, and a
// read's after it answers, while the model's link moves them within the
// request's time: so that the client sees the model's time, that part of
// it is taken off, as the round trip is (SetProbeWait, EarlyAt). The
// fronts measure it with probe files, whose writes are discarded.
func (f *FS) SetTransferEarly(read, write time.Duration) {
	f.transferEarly[0].Store(int64(read))
	f.transferEarly[1].Store(int64(write))
}

// SetFileOpEarly makes the share answer an open or a create earlier by
// open, and a close by close (wall times): the time the front in front of
// the share (smbd) spends on such a client request outside the model,
// beyond its round trip (SetProbeWait, EarlyAt). smbd serves one SMB
// CREATE with a dozen calls into the share (lookups, attributes, extended
// attributes, the open, a truncate) where the model charges one file
// operation; the fronts measure the rest with probe files, whose opens,
// creates and closes charge nothing.
func (f *FS) SetFileOpEarly(open, close time.Duration) {
	f.fileOpEarly[0].Store(int64(open))
	f.fileOpEarly[1].Store(int64(close))
}

// fileOpEarlyFor returns how early (model time) to answer a file
// operation (see SetFileOpEarly).
func (f *FS) fileOpEarlyFor(op models.Op) time.Duration {
	var d int64
	switch op {
	case models.Open, models.Create:
		d = f.fileOpEarly[0].Load()
	case models.Close:
		d = f.fileOpEarly[1].Load()
	}
	if d == 0 {
		return 0
	}
	return time.Duration(float64(d) / f.early.scale())
}

// transferEarlyFor returns how early (model time) to answer a read or a
// write of n bytes (see SetTransferEarly).
func (f *FS) transferEarlyFor(op models.Op, n int64) time.Duration {
	var perMiB int64
	switch op {
	case models.Read:
		perMiB = f.transferEarly[0].Load()
	case models.Write:
		perMiB = f.transferEarly[1].Load()
	}
	if perMiB == 0 {
		return 0
	}
	return time.Duration(float64(perMiB) * float64(n) / (1 << 20) / f.early.scale())
}

// waitProbe delays a read of a probe file (see SetProbeWait), paced as
// charged requests are.
func (f *FS) waitProbe() {
	if d := time.Duration(f.probeWait.Load()); d > 0 {
		c := emu.NewWallClock(1, -1)
		c.SleepUntil(d)
	}
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
func (f *FS) measureCompensation(mountpoint string) *emu.EarlyTable {
	defer f.probing.Store(nil)
	clock := emu.NewWallClock(1, -1)
	comp := &emu.EarlyTable{}
	for _, pr := range compensationProbes {
		comp.Wait = append(comp.Wait, pr.wait)
		comp.Early = append(comp.Early, 200*time.Microsecond+pr.wait/10)
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
			comp.Early[k] = min(comp.Early[k], max(0, emu.MiddleMean(lat)))
		}
	}
	f.log.Info("compensation measured", "waits", comp.Wait, "early", comp.Early)
	return comp
}
