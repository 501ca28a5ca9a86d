package bench

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nasemu/nasemu/models"
)

// Engine is how a job's I/O is submitted to a local path target: fio's
// ioengine. Other targets (sim:, smb://, iscsi://) submit their own way
// and keep iodepth operations in flight whatever the engine says.
//
// The asynchronous engines run one goroutine per job instance, as fio
// runs one thread per job: it keeps iodepth operations queued in the
// kernel, submitting each with a system call of its own as fio does by
// default (iodepth_batch=1), waits for at least one to complete, takes
// the time once for the batch it reaps (fio's completion timestamp; a
// batch is one completion unless iodepth_batch_complete_max says more,
// as in fio) and refills the queue. Latency is split as fio splits it: an operation's
// completion latency (clat) runs from the return of the system call that
// submitted it; its total latency (lat) from the moment it was prepared,
// so lat less clat is fio's submission latency (slat). On storage that
// completes an operation while it is being submitted (the page cache,
// tmpfs) clat is then the few microseconds to reap it, as in fio.
type Engine string

// Engines.
const (
	// EngineAuto is the zero value: the best asynchronous engine this
	// kernel has (io_uring; else libaio for direct I/O; else a thread per
	// outstanding operation). Built-in suites use it: CrystalDiskMark,
	// diskspd and IOmeter submit overlapped (asynchronous) I/O.
	EngineAuto Engine = ""
	// EngineIOUring submits through an io_uring, with the job's files
	// registered with registerfiles and its buffers with fixedbufs, as in
	// fio; without io_uring it falls back as EngineAuto does.
	EngineIOUring Engine = "io_uring"
	// EngineLibaio submits through Linux native AIO (io_submit); without
	// it, through a thread per outstanding operation.
	EngineLibaio Engine = "libaio"
	// EnginePsync is fio's default: pread and pwrite from one thread per
	// job instance, so one operation in flight whatever iodepth says (fio
	// caps the depth of its synchronous engines at 1 the same way). sync,
	// vsync, pvsync and pvsync2 behave alike.
	EnginePsync Engine = "psync"
	// engineThreads is what the asynchronous engines fall back to: a
	// thread per outstanding operation, each issuing pread or pwrite.
	engineThreads Engine = "threads"
)

// fioEngines are the ioengine values a job file may name.
var fioEngines = []Engine{EngineIOUring, EngineLibaio, "posixaio", EnginePsync, "pvsync", "pvsync2", "sync", "vsync", "windowsaio"}

// ParseEngine returns the engine fio's ioengine=name selects.
// posixaio and windowsaio are asynchronous engines of other systems: they
// select EngineAuto.
func ParseEngine(name string) (Engine, error) {
	e := Engine(name)
	switch {
	case e == "posixaio" || e == "windowsaio":
		return EngineAuto, nil
	case slices.Contains(fioEngines, e):
		return e, nil
	}
	names := make([]string, len(fioEngines))
	for i, e := range fioEngines {
		names[i] = string(e)
	}
	return "", fmt.Errorf("ioengine %q is not supported (accepted: %s)", name, strings.Join(names, ", "))
}

// synchronous reports whether the engine issues one operation at a time.
func (e Engine) synchronous() bool {
	switch e {
	case EnginePsync, "pvsync", "pvsync2", "sync", "vsync":
		return true
	}
	return false
}

// valid reports whether e is an engine nasemu knows.
func (e Engine) valid() bool {
	return e == EngineAuto || e == engineThreads || slices.Contains(fioEngines, e)
}

// EngineUse says which engine ran a job on a path target.
type EngineUse struct {
	Job       string
	Requested Engine
	Used      Engine
	// Note tells the user what differs from what the job asked for (a
	// fallback and why, an iodepth without effect), or is "".
	Note string
}

// ioQueue is a kernel submission queue of one job instance: io_uring or
// native AIO. Slots are numbered 0..depth-1; each has one operation in
// flight at most.
type ioQueue interface {
	// prep queues slot i's operation on file index fi (of the files given
	// to the constructor) for the next submit.
	prep(i int, fi int, op models.Op, off int64, buf []byte)
	// submit hands the prepared operations to the kernel in the order
	// they were prepared and returns how many it took: all of them, or
	// fewer with an error. It does not wait for completions (those that
	// completed while being submitted are ready to reap).
	submit() (int, error)
	// wait returns once a completion is ready to reap, or when timeout
	// passes (timeout < 0: after waitSlice, so that the caller can tell
	// a stall from a slow I/O), or early (a signal): reap then finds
	// nothing. seen is 0 unless a signal interrupted a raw wait without
	// a timeout: the runtime preempting the goroutine, which it does
	// every 10 ms of running without a reschedule. The wait then
	// goes on without returning to Go code, since a locked goroutine's
	// preemption hands its P to another thread and back (two thread
	// wake-ups, milliseconds on a loaded host) and would add that to the
	// completion's latency; it returns the CLOCK_MONOTONIC time (ns) at
	// which it saw the completion, and the preemption follows it. It goes
	// on for deferPreemption at most, then returns with seen 0.
	wait(timeout time.Duration) (seen int64, err error)
	// reap calls fn for at most max completed operations (all of them
	// when max <= 0): each one's slot and result (bytes transferred, or a
	// negated errno). Those left over stay ready for the next wait.
	reap(max int, fn func(i int, res int64))
	// state describes the queue's counters and the kernel's, for an error
	// that says where a queue is stuck.
	state() string
	// close releases the queue; never with operations in flight, whose
	// buffers the kernel may still write (see abandon).
	close()
}

// queueOpts are how a queue is set up beyond its depth, files and buffers.
type queueOpts struct {
	// raw: the queue waits for completions in a raw system call, keeping
	// its goroutine's P: the runtime then neither hands the P to another
	// thread while the I/O is in flight nor has to find one when it
	// completes, which on a host of two cores costs more than the I/O
	// (thread wake-ups, a tail of milliseconds under load). A signal (the
	// runtime preempting) ends the wait within deferPreemption (see
	// ioQueue.wait), so the goroutine reaches a preemption point. Only for
	// as many queues as there are Ps less one, so the rest of the program
	// keeps running.
	raw bool
	// registerFiles: io_uring registers the files, so the kernel does not
	// look a file up and take a reference to it per operation, as fio's
	// registerfiles does; without it, as in fio by default, each
	// operation names its file descriptor.
	registerFiles bool
}

// newQueueFunc makes a queue of depth slots over fds, whose slots' buffers
// are bufs, registered where the engine can (nil: none).
type newQueueFunc func(depth int, fds []int, bufs [][]byte, o queueOpts) (ioQueue, error)

// queueFactories are the asynchronous engines of this system; nil where
// it has none. Tests replace an entry to check the fallbacks.
var queueFactories = map[Engine]newQueueFunc{EngineIOUring: newURing, EngineLibaio: newAIO}

// FileUnwrapper is implemented by files that wrap a target's file (a
// progress meter). Asynchronous engines submit to the file underneath and
// tell the wrapper of each completed read or write through Completed.
type FileUnwrapper interface {
	Unwrap() File
	Completed(at, done time.Duration, op models.Op, n int64)
}

// pathFiles returns the local files under a stream's files, with the
// wrappers of each, or false when one is not a local file.
func pathFiles(st *stream) ([]*pathFile, [][]FileUnwrapper, bool) {
	pfs := make([]*pathFile, len(st.files))
	wraps := make([][]FileUnwrapper, len(st.files))
	for i, fs := range st.files {
		f := fs.f
		for {
			if w, ok := f.(FileUnwrapper); ok {
				wraps[i] = append(wraps[i], w)
				f = w.Unwrap()
				continue
			}
			break
		}
		pf, ok := f.(*pathFile)
		if !ok {
			return nil, nil, false
		}
		pfs[i] = pf
	}
	return pfs, wraps, true
}

// prepareStream sets up how one job instance's slots run on a local path
// target with the job's engine, records which engine that is, and
// returns the function that runs them. Files that are not local files
// (another target) run on threads. An asynchronous engine's queue is set
// up here, on the calling goroutine's thread, which stays locked to it
// for good: io_uring's single issuer is the thread that set the ring up,
// and the thread must serve no other ring after it (see below), so the
// caller's goroutine ends once the returned function has run.
func (c *WallClock) prepareStream(st *stream, slots []*slot, raw bool) (run func()) {
	threads := func() { c.runThreads(slots) }
	j := st.job
	pfs, wraps, ok := pathFiles(st)
	if !ok || j.FileByFile || j.Kind != KindBlock {
		return threads
	}
	use := EngineUse{Job: j.Name, Requested: j.Engine}
	defer func() { c.noteEngine(use) }()
	if j.Engine.synchronous() {
		use.Used = j.Engine
		if j.IODepth > 1 {
			use.Note = fmt.Sprintf("ioengine=%s keeps one I/O in flight: iodepth=%d has no effect (as in fio)", j.Engine, j.IODepth)
		}
		return func() { c.runThreads(slots[:1]) }
	}
	var chain []Engine
	switch j.Engine {
	case EngineLibaio:
		chain = []Engine{EngineLibaio}
	default:
		chain = []Engine{EngineIOUring}
		if j.Direct {
			chain = append(chain, EngineLibaio)
		}
	}
	fds := make([]int, len(pfs))
	for i, pf := range pfs {
		fds[i] = pf.fd
	}
	// fio's fixedbufs: registered buffers spare a direct I/O the pinning
	// of its pages, but make the kernel copy page-cache data a page at a
	// time (a bio_vec iterator) instead of in one user copy: on tmpfs a
	// 1 MiB buffered write's copy took 1.7 times as long. As in fio, only
	// a job that asks for them gets them.
	var bufs [][]byte
	if recordedTrue(j, "fixedbufs") {
		bufs = make([][]byte, len(slots))
		for i, sl := range slots {
			bufs[i] = sl.buf
		}
	}
	// io_uring's single issuer: the thread that sets the ring up submits.
	// The kernel also keeps per thread, not per ring, the pool of workers
	// that carry a ring's blocking operations (buffered writes, for one):
	// the first ring a thread submits to sizes it (at most its own depth)
	// and lends it its hash of files, and later rings on that thread
	// inherit both. A job's ring therefore runs on a thread that serves no
	// other: its goroutine ends still locked to it, which ends the thread,
	// as each of fio's jobs is a thread of its own.
	runtime.LockOSThread()
	var whys []string
	for _, e := range chain {
		mk := queueFactories[e]
		if mk == nil {
			whys = append(whys, fmt.Sprintf("%s: not on this system", e))
			continue
		}
		q, err := mk(len(slots), fds, bufs, queueOpts{raw: raw, registerFiles: recordedTrue(j, "registerfiles")})
		if err != nil {
			whys = append(whys, fmt.Sprintf("%s: %v", e, err))
			continue
		}
		use.Used = e
		if e != j.Engine && j.Engine != EngineAuto {
			use.Note = fmt.Sprintf("ioengine=%s is not available (%s): ran on %s", j.Engine, strings.Join(whys, "; "), e)
		}
		return func() {
			// Not unlocked: see above (the caller's goroutine ends here).
			if c.runQueue(st, slots, q, pfs, wraps) {
				q.close()
			} else {
				abandon(q, slots)
			}
		}
	}
	runtime.UnlockOSThread()
	if !j.Direct && j.Engine != EngineLibaio {
		whys = append(whys, "libaio is for direct I/O only")
	}
	use.Used = engineThreads
	use.Note = fmt.Sprintf("no asynchronous engine (%s): ran on a thread per outstanding I/O", strings.Join(whys, "; "))
	return threads
}

// noteEngine records which engine ran a job.
func (c *WallClock) noteEngine(u EngineUse) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.engines {
		if e == u {
			return
		}
	}
	c.engines = append(c.engines, u)
}

// Engines returns which engine ran each job on this clock's local files
// (one entry per job and outcome), in the order they first ran.
func (c *WallClock) Engines() []EngineUse {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.engines)
}

// yieldEvery is how often a queue's goroutine yields when it has nothing
// in flight. The runtime preempts a goroutine that has run 10 ms without
// being rescheduled, at whatever point it has reached; this one is locked
// to its thread (io_uring's single issuer), so a reschedule hands its P
// to another thread and back: two thread wake-ups, tens of µs on a quiet
// host and milliseconds on a loaded one, which inside an I/O count in its
// latency (at QD1 50 a second, the p99.9). Yielding between I/Os before
// the runtime would preempt keeps that out of every I/O's latency; at
// depth the queue is never empty, and a preemption that comes during a
// wait is kept out of the completion's latency (ioQueue.wait).
const yieldEvery = 8 * time.Millisecond

// deferPreemption is how long a queue's wait goes on after the runtime
// asked to preempt its goroutine (see ioQueue.wait): long enough for the
// I/Os of fast storage, whose latency a preemption would distort, short
// enough not to hold up the runtime (a garbage collection waits for the
// goroutine) behind slow ones, of which it is a small part. A variable
// for tests.
var deferPreemption = time.Millisecond

// stallLimit is how long a queue may go without completing any of the
// operations it has in flight before its job fails with an error that
// describes the queue (ioQueue.state) instead of waiting on: longer than
// the kernel's own command timeouts with their retries (30 s, five
// times, for SCSI and NVMe), after which a device has failed the I/O. A
// variable for tests.
var stallLimit = 5 * time.Minute

// waitSlice bounds each of a queue's waits without a caller's limit, so
// that the queue's goroutine comes back to check for a stall
// (stallLimit) at least this often.
const waitSlice = time.Second

// abandoned holds the queues that were left with operations in flight
// (a stall, a broken queue) and their slots: the kernel may still write
// to the slots' buffers, so neither is closed nor handed back to the
// garbage collector.
var abandoned struct {
	sync.Mutex
	queues []ioQueue
	slots  [][]*slot
}

func abandon(q ioQueue, slots []*slot) {
	abandoned.Lock()
	defer abandoned.Unlock()
	abandoned.queues = append(abandoned.queues, q)
	abandoned.slots = append(abandoned.slots, slots)
}

// pending is a slot whose next operation is due later (a start delay or
// an open-loop arrival).
type pending struct {
	at time.Duration
	i  int
}

// runQueue keeps the stream's slots busy through q until every slot has
// retired and nothing is in flight, or the queue fails. It reports
// whether nothing was left in flight (q may then be closed).
func (c *WallClock) runQueue(st *stream, slots []*slot, q ioQueue, pfs []*pathFile, wraps [][]FileUnwrapper) (drained bool) {
	var mu sync.Locker = &st.jr.mu
	if !st.sharesJobState() {
		mu = noLock{}
	}
	fileIndex := make(map[*fileState]int, len(st.files))
	for i, f := range st.files {
		fileIndex[f] = i
	}
	// slotFile is the file index of each slot's operation in flight,
	// looked up once per I/O (a job of one file: none).
	slotFile := make([]int, len(slots))
	free := make([]int, 0, len(slots))
	for i := len(slots) - 1; i >= 0; i-- {
		free = append(free, i)
	}
	var delayed []pending
	inflight := 0
	var qerr error
	now := c.Now()
	progress := now // when an operation last completed, or the queue last became busy
	fail := func(err error) {
		// The kernel refused the queue itself: fail the job, but
		// still reap what is in flight (its buffers are ours).
		if qerr != nil {
			return
		}
		qerr = err
		st.g.failed.Store(true)
		mu.Lock()
		if st.err == nil {
			st.err = fmt.Errorf("job %q: %s: %w", st.job.Name, st.job.Engine, err)
		}
		mu.Unlock()
	}
	// inline performs an operation the queue does not take (a trim, an
	// emulated zone's reset, a parked slot) synchronously, as fio's
	// asynchronous engines do trims.
	inline := func(i int) {
		sl := slots[i]
		sl.at, sl.slat, sl.lead = c.Now(), 0, 0
		done, err := st.do(sl, sl.at)
		mu.Lock()
		st.complete(sl, done, err)
		mu.Unlock()
		free = append(free, i)
	}
	issue := func(i int) {
		sl := slots[i]
		o := &sl.op
		fi := 0
		if len(st.files) > 1 {
			fi = fileIndex[o.file]
		}
		slotFile[i] = fi
		var op models.Op
		var buf []byte
		switch {
		case o.kind == opIO && o.dir == DirRead:
			op, buf = models.Read, sl.buf[:o.n]
		case o.kind == opIO && o.dir == DirWrite:
			op, buf = models.Write, sl.buf[:o.n]
		case o.kind == opFlush:
			op = models.Flush
		default:
			inline(i)
			return
		}
		// The I/O's start, then its buffer's filling, as fio takes its
		// start time before it scrambles or fills a verify pattern: the
		// filling counts in slat and lat.
		prep := c.Now()
		st.fill(sl, prep)
		q.prep(i, fi, op, o.off, buf)
		// Submitted at once, a system call each, as fio submits by
		// default (iodepth_batch=1): an I/O that completes while it is
		// submitted (the page cache) does not wait for the others'
		// submission, and its issue time is that call's return.
		n, err := q.submit()
		issued := c.Now()
		if n == 0 { // never reached the kernel
			fail(err)
			mu.Lock()
			st.complete(sl, issued, err)
			mu.Unlock()
			return
		}
		sl.at, sl.slat, sl.lead = issued, issued-prep, 0
		if inflight == 0 {
			progress = issued
		}
		inflight++
	}
	reaped := func(i int, res int64) {
		inflight--
		sl := slots[i]
		o := &sl.op
		j := st.job
		rw := o.kind == opIO
		var err error
		switch {
		case res < 0:
			err = fmt.Errorf("%v %s [%d, +%d): %w", o.name(), pfs[slotFile[i]].path, o.off, o.n, errnoErr(-res))
		case rw && res != o.n:
			err = fmt.Errorf("%v %s [%d, +%d): short transfer of %d bytes", o.name(), pfs[slotFile[i]].path, o.off, o.n, res)
		case rw && o.dir == DirRead && j.Verify != "" && (o.verify || !j.writes()):
			err = checkPattern(sl.buf[:o.n], o.file.seed, o.off, j.VerifyPattern, o.file.name)
		}
		done := now // sync=1: the file is open O_SYNC (WriteThrough)
		mu.Lock()
		st.complete(sl, done, err)
		mu.Unlock()
		if err == nil && rw {
			mop := models.Read
			if o.dir == DirWrite {
				mop = models.Write
			}
			for _, w := range wraps[slotFile[i]] {
				w.Completed(sl.at, now, mop, o.n)
			}
		}
		free = append(free, i)
	}
	yielded := now
	for {
		if inflight == 0 && now-yielded >= yieldEvery {
			// Rescheduled here, between I/Os, the goroutine is not
			// preempted during one (see yieldEvery).
			runtime.Gosched()
			now = c.Now()
			yielded = now
		}
		for len(free) > 0 && qerr == nil {
			i := free[len(free)-1]
			free = free[:len(free)-1]
			mu.Lock()
			at, ok := st.next(slots[i], now)
			mu.Unlock()
			switch {
			case !ok: // the slot retires
			case at > now:
				delayed = append(delayed, pending{at, i})
			default:
				issue(i)
			}
		}
		if len(delayed) > 0 {
			now = c.Now()
			delayed = slices.DeleteFunc(delayed, func(p pending) bool {
				if p.at <= now && qerr == nil {
					issue(p.i)
					return true
				}
				return false
			})
		}
		if inflight == 0 {
			if len(delayed) == 0 || qerr != nil {
				return true
			}
			for _, p := range delayed { // a thinktime's spinning part
				if sl := slots[p.i]; sl.spin > 0 {
					c.spin(sl.spin)
					sl.spin = 0
				}
			}
			c.Wait(earliest(delayed))
			now = c.Now()
			continue
		}
		timeout := time.Duration(-1)
		if len(delayed) > 0 {
			timeout = max(earliest(delayed)-c.Now(), 0)
		}
		seen, err := q.wait(timeout)
		if err != nil {
			fail(err)
		}
		// One timestamp per reaped batch, as fio takes it, and at most
		// iodepth_batch_complete_max (default 1) per batch: fio reaps one
		// completion, refills its slot, and only then reaps the next.
		now = c.Now()
		if seen != 0 { // back-dated over the preemption
			now -= time.Duration(monotonicNow() - seen)
		}
		before := inflight
		q.reap(max(st.job.ReapBatch, 1), reaped)
		switch {
		case inflight < before:
			progress = now
		case qerr == nil && now-progress >= stallLimit:
			fail(fmt.Errorf("no I/O completed in %v with %d in flight: %s", stallLimit, inflight, q.state()))
		}
		if qerr != nil && inflight > 0 {
			// Nothing more can be learnt from a broken queue.
			return false
		}
	}
}

func earliest(p []pending) time.Duration {
	t := p[0].at
	for _, x := range p[1:] {
		t = min(t, x.at)
	}
	return t
}
