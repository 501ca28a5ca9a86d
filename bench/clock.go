package bench

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Clock times a target's operations and keeps a run's slots busy. It is
// the only thing that differs between a simulated and a real run: the
// runner decides what each slot does next, the clock decides when.
//
// The interface is sealed (drive is unexported): targets use NewVirtualClock
// or NewWallClock.
type Clock interface {
	// Now returns the time since the clock started.
	Now() time.Duration
	// Wait returns once Now has reached t.
	Wait(t time.Duration)
	// drive runs the slots until every one has retired. It calls begin,
	// which starts the run's clock (its start, ramp and deadline), once
	// every job instance is ready to submit and before the first I/O.
	drive(slots []*slot, begin func())
}

// VirtualClock is a discrete-event loop in simulated time. Every slot has
// one pending event: the completion of its outstanding operation, or the
// issue of a delayed one. Events are taken in time order, ties broken by
// sequence number, so a run is deterministic; a slot's next request is
// submitted at the completion time of the one it replaces.
type VirtualClock struct {
	now  time.Duration
	seq  uint64
	heap []event
}

var _ Clock = (*VirtualClock)(nil)

type event struct {
	t     time.Duration
	seq   uint64
	sl    *slot
	issue bool // a delayed issue of the slot's chosen operation (else: the slot frees up)
}

// NewVirtualClock returns a virtual clock at time 0.
func NewVirtualClock() *VirtualClock { return &VirtualClock{} }

// Now implements Clock.
func (c *VirtualClock) Now() time.Duration { return c.now }

// Wait implements Clock: virtual time jumps.
func (c *VirtualClock) Wait(t time.Duration) { c.now = max(c.now, t) }

func (c *VirtualClock) drive(slots []*slot, begin func()) {
	begin()
	c.heap = c.heap[:0]
	for _, sl := range slots {
		c.push(event{t: c.now, sl: sl})
	}
	for len(c.heap) > 0 {
		e := c.pop()
		c.now = max(c.now, e.t)
		sl, st := e.sl, e.sl.st
		at := e.t
		if !e.issue {
			if sl.busy {
				sl.busy = false
				st.complete(sl, e.t, nil)
			}
			var ok bool
			if at, ok = st.next(sl, e.t); !ok {
				continue
			}
			if at > e.t { // a start delay or an open-loop arrival
				c.push(event{t: at, sl: sl, issue: true})
				continue
			}
		}
		sl.at = at
		done, err := st.do(sl, at)
		if err != nil {
			st.complete(sl, done, err)
			continue
		}
		sl.busy = true
		c.push(event{t: done, sl: sl})
	}
}

// push and pop keep c.heap a binary min-heap ordered by (t, seq), typed
// to stay free of container/heap's interface conversions and allocations.
func (c *VirtualClock) push(e event) {
	c.seq++
	e.seq = c.seq
	h := append(c.heap, e)
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h[i].before(h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	c.heap = h
}

func (c *VirtualClock) pop() event {
	h := c.heap
	top := h[0]
	last := len(h) - 1
	h[0] = h[last]
	h = h[:last]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(h) && h[l].before(h[m]) {
			m = l
		}
		if r := l + 1; r < len(h) && h[r].before(h[m]) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	c.heap = h
	return top
}

func (e event) before(o event) bool { return e.t < o.t || (e.t == o.t && e.seq < o.seq) }

// WallClock runs a real target. On local files (Path) each job instance
// submits through its job's Engine (ioengine.go); elsewhere, and on the
// synchronous engines, every slot is a goroutine that issues its
// operation, blocks until it completes and issues the next, so each job
// instance keeps iodepth operations in flight (pread/pwrite style).
type WallClock struct {
	start   time.Time
	mu      sync.Mutex
	engines []EngineUse
	spun    atomic.Int64 // ns spent spinning (thinktime_spin)
	spunCPU atomic.Int64 // ns of CPU the spinning threads used meanwhile
}

var _ Clock = (*WallClock)(nil)

// NewWallClock returns a wall clock started now.
func NewWallClock() *WallClock { return &WallClock{start: time.Now()} }

// Now implements Clock.
func (c *WallClock) Now() time.Duration { return time.Since(c.start) }

// Wait implements Clock by sleeping (see sleep).
func (c *WallClock) Wait(t time.Duration) {
	if d := t - c.Now(); d > 0 {
		sleep(d)
	}
}

// spin keeps the CPU busy until Now reaches t, as fio spins for
// thinktime_spin (usec_spin).
func (c *WallClock) spin(t time.Duration) {
	runtime.LockOSThread() // the thread's CPU clock is the spin's
	defer runtime.UnlockOSThread()
	cpu := threadCPU()
	from := c.Now()
	now := from
	for now < t {
		now = c.Now()
	}
	c.spun.Add(int64(now - from))
	c.spunCPU.Add(int64(threadCPU() - cpu))
}

func (c *WallClock) drive(slots []*slot, begin func()) {
	streams := 0
	for i, sl := range slots {
		if i == 0 || sl.st != slots[i-1].st {
			streams++
		}
	}
	raw := streams < runtime.GOMAXPROCS(0) // see newQueueFunc
	if streams == 0 {
		begin()
		return
	}
	// Each job instance sets its engine up on its own thread, then waits
	// for the others: the clock starts when all can submit, as fio
	// starts a job's clock once its engine is set up. The last instance
	// to be ready starts it and goes on without a hand-off.
	var wg sync.WaitGroup
	var unready atomic.Int32
	unready.Store(int32(streams))
	started := make(chan struct{})
	for lo := 0; lo < len(slots); {
		st := slots[lo].st
		hi := lo + 1
		for hi < len(slots) && slots[hi].st == st {
			hi++
		}
		mine := slots[lo:hi]
		wg.Go(func() {
			run := c.prepareStream(st, mine, raw)
			if unready.Add(-1) == 0 {
				begin()
				close(started)
			} else {
				<-started
			}
			run()
		})
		lo = hi
	}
	wg.Wait()
}

// runThreads runs each slot on a goroutine of its own. Every slot's first operation is decided at the same instant, as the
// asynchronous engines fill their queue: a runtime shorter than a
// goroutine's start-up still sees iodepth operations, each counted when
// it completes (fio too waits for the I/Os in flight at the end).
func (c *WallClock) runThreads(slots []*slot) {
	first := c.Now()
	var wg sync.WaitGroup
	for _, sl := range slots {
		wg.Go(func() {
			st := sl.st
			// The job's lock orders its slots' bookkeeping; an instance
			// with a single slot that shares nothing with the others
			// needs none.
			var mu sync.Locker = &st.jr.mu
			if st.job.IODepth == 1 && !st.sharesJobState() {
				mu = noLock{}
			}
			now := first
			for {
				mu.Lock()
				at, ok := st.next(sl, now)
				mu.Unlock()
				if !ok {
					return
				}
				if at > now {
					if sl.spin > 0 {
						c.spin(sl.spin)
					}
					c.Wait(at)
				}
				// fio's start_time, the buffer's filling, its
				// issue_time (see fill)
				prep := c.Now()
				st.fill(sl, prep)
				sl.at = c.Now()
				sl.lead = sl.at - prep
				done, err := st.do(sl, sl.at)
				mu.Lock()
				st.complete(sl, done, err)
				mu.Unlock()
				if err != nil {
					return
				}
				now = done
			}
		})
	}
	wg.Wait()
}

// noLock is the lock of a job that has one slot.
type noLock struct{}

func (noLock) Lock()   {}
func (noLock) Unlock() {}
