package nas

import "time"

// The dirty throttle is Linux's IO-less balance_dirty_pages (since 3.2,
// so in every DSM and QTS kernel), reduced to what sets the pace of a
// NAS's writers:
//
//   - Pages under writeback count as dirty until their write completes
//     (Linux adds NR_WRITEBACK to NR_FILE_DIRTY): room in the cache comes
//     back when the storage has the data, not when writeback is issued.
//   - Below the freerun point, halfway between the background and the
//     hard limit, writers are not throttled.
//   - Above it writers do no writeback of their own: they sleep, so that
//     together they dirty pages at the estimated writeback bandwidth times
//     a position ratio, 1 + x³ with x = (setpoint − dirty)/(limit −
//     setpoint), setpoint halfway between freerun and the limit: 2 at
//     freerun, 1 at the setpoint, 0 at the limit. The dirty level settles
//     where the writers' pace matches what the storage takes, and every
//     throttled writer sleeps a little rather than a few sleeping through
//     a whole writeback (which, on a RAID 5 of disks, is tens of
//     milliseconds of read-modify-write) while the rest go through.
//   - The bandwidth estimate follows the completed writeback over 200 ms
//     periods, smoothed over about 4 s, as bdi write_bandwidth does; an
//     estimate that is off moves where the dirty level settles, not the
//     pace. Linux starts from 100 MiB/s (INIT_BW) and a NAS that has been
//     running knows its disks; a fresh model takes its first measured
//     period as the estimate, or a RAID 5 of disks (a few MB/s of random
//     writeback) would spend tens of seconds at the limit with an estimate
//     many times too high, where the pace swings with every page.
//   - A pause is at most 200 ms (MAX_PAUSE); at the limit a writer sleeps
//     that long, as Linux's does when the position ratio is 0.
//
// The writers share one pacer (writers sleep in turn): Linux paces each
// task at the balanced rate divided among the tasks, which adds up to the
// same pace. Like Linux (nr_dirtied_pause) a writer does not sleep for
// less than about 10 ms: shorter pauses add up until they reach that, so a
// lone writer dirties a few pages at RAM speed between sleeps, while many
// writers queued on the pacer each wait their turn.

const (
	bwInterval = 200 * time.Millisecond  // BANDWIDTH_INTERVAL
	bwPeriod   = 4096 * time.Millisecond // roundup_pow_of_two(3 s)
	bwQuiet    = time.Second             // longer gaps do not update the estimate
	maxPause   = 200 * time.Millisecond  // MAX_PAUSE
	minPause   = 10 * time.Millisecond   // the shortest sleep (Linux aims at about 10 ms)
	initBW     = 100 << 20               // INIT_BW, bytes/s
)

// inflightIO is a writeback write in flight: its pages count as dirty
// until done.
type inflightIO struct {
	done  time.Duration
	pages int64
}

// throttle holds the state of the dirty throttle.
type throttle struct {
	inflight      []inflightIO
	inflightPages int64
	freerun       int64   // pages
	setpoint      int64   // pages
	bw            float64 // estimated writeback bandwidth, pages/s
	bwStamp       time.Duration
	bwDone        int64 // pages completed since bwStamp
	measured      bool  // bw is measured, not INIT_BW
	bwBusy        bool  // writeback ran flat out at bwStamp
	paced         time.Duration
	now           time.Duration // latest time retired
}

func (c *Controller) initThrottle() {
	c.th.freerun = (c.dirtyBackground + c.dirtyLimit) / 2
	c.th.setpoint = (c.th.freerun + c.dirtyLimit) / 2
	c.th.bw = initBW / float64(c.ps)
}

// writingBack records a writeback of pages that completes at done. The
// writebacks in flight are kept in completion order (they are issued
// nearly in that order: an insertion from the back).
func (c *Controller) writingBack(done time.Duration, pages int64) {
	th := &c.th
	th.inflight = append(th.inflight, inflightIO{done, pages})
	for i := len(th.inflight) - 1; i > 0 && th.inflight[i-1].done > done; i-- {
		th.inflight[i-1], th.inflight[i] = th.inflight[i], th.inflight[i-1]
	}
	th.inflightPages += pages
}

// retire forgets the writebacks complete by t, or by the latest time
// seen when requests arrive out of order (the throttle sees the cache as
// it is now, as a lookup does), and updates the bandwidth estimate.
func (c *Controller) retire(t time.Duration) {
	th := &c.th
	th.now = max(th.now, t)
	k := 0
	for k < len(th.inflight) && th.inflight[k].done <= th.now {
		th.inflightPages -= th.inflight[k].pages
		th.bwDone += th.inflight[k].pages
		k++
	}
	if k > 0 {
		th.inflight = th.inflight[:copy(th.inflight, th.inflight[k:])]
	}
	el := th.now - th.bwStamp
	if el < bwInterval {
		return
	}
	// Only a period during which writeback ran flat out (dirty pages past
	// the background ratio at its start and end) measures the storage's
	// bandwidth.
	busy := c.pc.dirty > c.dirtyBackground
	if el <= bwQuiet && th.bwDone > 0 && busy && th.bwBusy {
		rate := float64(th.bwDone) / el.Seconds()
		if th.measured {
			th.bw = (float64(th.bw*float64(bwPeriod-el)) + float64(rate*float64(el))) / float64(bwPeriod)
		} else {
			th.bw, th.measured = rate, true
		}
	}
	th.bwStamp, th.bwDone, th.bwBusy = th.now, 0, busy
}

// balance returns when a writer that has just dirtied pages pages at t
// may go on (balance_dirty_pages).
func (c *Controller) balance(t time.Duration, pages int64) time.Duration {
	th := &c.th
	c.retire(t)
	d := c.pc.dirty + th.inflightPages // the dirty pages at t, those under writeback included
	if d <= th.freerun {
		return t
	}
	if d < c.dirtyLimit {
		x := float64(th.setpoint-d) / float64(max(1, c.dirtyLimit-th.setpoint))
		pos := min(2, 1+float64(x*x*x))
		start := max(t, th.paced)
		pause := time.Duration(float64(pages) / (th.bw * pos) * 1e9)
		th.paced = start + min(pause, maxPause)
		if th.paced-t < minPause {
			// A short pause is owed, not slept: the writer sleeps once
			// what it owes reaches minPause.
			return t
		}
		return th.paced
	}
	// At the limit the position ratio is 0: Linux sleeps the writer
	// MAX_PAUSE before it looks again, long enough for the writeback
	// running flat out to bring the dirty pages back under the limit.
	return t + maxPause
}
