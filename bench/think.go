package bench

import "time"

// A job instance thinks as fio's handle_thinktime (backend.c) makes its
// thread think. After each I/O of the main loop it checks whether to
// stall: ThinkBlocks I/Os counted since the last stall began (issued,
// with thinktime_blocks_type=issue; else completed), or ThinkIOTime since
// the last stall ended (thinktime_iotime; without thinktime_blocks set
// only that). A stall first waits for every operation in flight
// (io_u_quiesce), then spins for ThinkSpin and sleeps the rest of
// ThinkTime, cut short where the runtime ends. The count a stall
// remembers is the one that triggered it, as fio remembers it before its
// quiesce: completions that drain afterwards count toward the next.
// With rate_ignore_thinktime the rate schedule of the direction that
// triggered the stall moves on by what the stall took, less one I/O's
// worth (so the next I/O goes at once), as fio's does.
//
// Nothing is issued during a stall: a slot that frees while the instance
// waits for its I/Os in flight parks (see thinkWake), and once the stall
// has begun its next operation is issued when it ends. The stall counts
// in the instance's runtime, as in fio, where the thread sleeps in it.
type thinker struct {
	count   int64         // I/Os issued or completed, as ThinkIssue says
	last    int64         // count when the last stall was triggered
	lastEnd time.Duration // when the last stall ended (the job's start before the first)
	// pending: a stall was triggered and waits for the operations in
	// flight; dir is the direction of the I/O that triggered it.
	pending bool
	dir     Dir
	until   time.Duration // the current stall ends; nothing is issued before
	spin    time.Duration // its spinning part ends (a real target's CPU is busy until then)
	spun    bool          // a slot has been given the spin
	reap    bool          // the last submission filled the queue: the next completion checks
	// horizon is, on the virtual clock, the latest issue or completion
	// time of the operations issued: when those in flight are done.
	horizon time.Duration
}

// thinkIssued counts an I/O of the main loop issued at at and checks for
// a stall, as fio does after each submission; when the submission filled
// the queue, fio first reaps a completion, and so the check waits for the
// next one.
func (st *stream) thinkIssued(o *op, at time.Duration) {
	if st.job.ThinkTime <= 0 || o.kind != opIO || o.final {
		return
	}
	if st.job.ThinkIssue && !o.verify {
		st.think.count++ // fio's io_issues leave out reads of the verify list
	}
	if st.active >= st.job.IODepth {
		st.think.reap = true
		return
	}
	st.thinkCheck(o.dir, at)
}

// thinkCompleted counts an I/O completed at done (ok: without an error),
// checks for a stall if the last submission left that to this completion,
// and, once nothing is in flight, begins a stall that waited for it.
// Completions that drain after the main loop's last submission are not
// checked: fio's loop has ended.
func (st *stream) thinkCompleted(o *op, done time.Duration, ok bool) {
	if st.job.ThinkTime <= 0 {
		return
	}
	th := &st.think
	if ok && o.kind == opIO && !st.job.ThinkIssue {
		th.count++ // fio's io_blocks: every completion
	}
	if th.reap && o.kind == opIO {
		th.reap = false
		st.thinkCheck(o.dir, done)
	}
	if th.pending && st.active == 0 {
		st.thinkBegin(done)
	}
}

// thinkCheck triggers a stall at t if it is due (fio: handle_thinktime's
// test).
func (st *stream) thinkCheck(d Dir, t time.Duration) {
	j, th := st.job, &st.think
	if th.pending || t < th.until {
		return
	}
	stall := false
	if j.ThinkIOTime > 0 {
		stall = t-th.lastEnd >= j.ThinkIOTime
		if !stall && j.ThinkBlocks == 0 { // without thinktime_blocks, only the time counts
			return
		}
	}
	stall = stall || th.count >= th.last+int64(max(j.ThinkBlocks, 1))
	if !stall {
		return
	}
	th.pending, th.dir, th.last = true, d, th.count
	if st.active == 0 {
		st.thinkBegin(t)
	}
}

// thinkBegin starts the pending stall at t, when the instance has nothing
// in flight.
func (st *stream) thinkBegin(t time.Duration) {
	j, th := st.job, &st.think
	th.pending = false
	total := j.ThinkTime
	if st.deadline > 0 { // fio cuts the stall at the end of the runtime
		total = max(min(total, st.deadline-t), 0)
	}
	th.until = t + total
	th.spin = t + min(j.ThinkSpin, total)
	th.spun = false
	th.lastEnd = th.until
	if th.until > st.col.from {
		st.col.idle(th.until)
	}
	if j.RateIgnoreThink && total > 0 {
		st.arrival[th.dir] += st.rateSkip(th.dir, total)
	}
}

// rateSkip is how far rate_ignore_thinktime moves direction d's rate
// schedule on after a stall of total: fio adds the bytes the rate would
// have moved in it, less one block when a block's time fits in it, so
// that the first I/O after the stall is due at once. Where fio paces by
// the time between I/Os (rate_process=poisson; rate_iops with bssplit) it
// adds the whole stall.
func (st *stream) rateSkip(d Dir, total time.Duration) time.Duration {
	j := st.job
	var perIO time.Duration
	switch {
	case st.iopsGap[d] == 0 && st.rateB[d] == 0:
		return 0 // not paced
	case j.Poisson || (st.iopsGap[d] > 0 && len(j.splitOf(d)) > 0):
		return total
	case st.iopsGap[d] > 0:
		perIO = time.Duration(st.iopsGap[d])
	default:
		perIO = time.Duration(float64(j.bsOf(d)) * float64(time.Second) / float64(st.rateB[d]))
	}
	if perIO <= total {
		return total - perIO
	}
	return total
}

// thinkGate returns when a slot that freed at at may issue its next
// operation, given the instance's thinktime; wait is true while a
// triggered stall still waits for the operations in flight (the slot then
// parks until the returned time).
func (st *stream) thinkGate(sl *slot, at time.Duration) (time.Duration, bool) {
	th := &st.think
	sl.spin = 0
	if st.job.ThinkTime <= 0 {
		return at, false
	}
	if th.pending {
		return st.thinkWake(at), true
	}
	if at < th.until {
		if !th.spun && th.spin > at {
			sl.spin, th.spun = th.spin, true // one thread spins, as fio's one does
		}
		at = th.until
	}
	return at, false
}

// thinkWake is when a slot parked behind a pending stall looks again. On
// the virtual clock it is when the last operation issued completes (the
// completion, queued before, is taken first), a nanosecond on at least;
// on a real target, whose
// completions are not known ahead, it looks again after a fraction of
// the thinktime, so that it is back before the stall ends (the slot whose
// completion begins the stall finds it begun at once).
func (st *stream) thinkWake(at time.Duration) time.Duration {
	if st.t.Mode() == Virtual {
		return max(at+time.Nanosecond, st.think.horizon) // (forward, whatever happens)
	}
	return at + min(max(st.job.ThinkTime/2, 5*time.Microsecond), time.Millisecond)
}
