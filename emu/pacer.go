package emu

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// The pacer ends a paced request's wait at its deadline. The waiting
// goroutine takes an alarm — a kernel timer read through Go's network
// poller, with a read deadline at the same time (alarm_linux.go) — from a
// free list, arms it for its deadline and parks: it holds no thread and
// no processor while it waits, and is woken once, by the timer's expiry
// when the process is idle or by the runtime's deadline timer when it is
// busy (Go's timers alone wait in epoll with a timeout of whole
// milliseconds when the process is idle, up to a millisecond late). When
// neither wakes it, because no thread of the runtime is looking, a
// watchdog thread does, a grace after (watchGrace, alarm_linux.go).
// Nobody sleeps in the kernel holding a thread (the clock once did, and
// paid several sleeps per request). A wait never ends early: the
// goroutine goes on waiting until Go's monotonic clock has reached the
// deadline.
//
// A loaded host runs a woken thread late, by tens of microseconds to
// milliseconds. Requests with others in flight do not mind (the model's
// reservations space their answers; a constant lateness does not change
// what a pipelined job moves), but a lone request's lateness is all of a
// queue-depth-1 job's error. So a request that waits alone is woken a
// margin before its deadline and spins (yielding the processor) for the
// rest; the margin follows the wake-up's lateness (adapt). At most one
// request spins at a time, and only while no other waits.
//
// At most maxAlarms requests arm alarms at a time; any more wait on Go's
// timers alone, which are coarse only in a process with nothing else to
// do, not one with that many requests in flight.
const maxAlarms = 256

// pacerBase is the origin of the alarms' deadlines (nanoseconds since it).
var pacerBase = time.Now()

// sinceBase returns wall time t as nanoseconds since pacerBase
// (monotonic).
func sinceBase(t time.Time) int64 { return int64(t.Sub(pacerBase)) }

// alarms is the free list of alarms.
var alarms struct {
	mu    sync.Mutex
	free  []*alarm
	taken int   // alarms in use
	err   error // creating an alarm failed: wait on Go's timers
}

// getAlarm returns a free alarm, or nil if there is none to be had, and
// whether no other request waits.
func getAlarm() (*alarm, bool) {
	alarms.mu.Lock()
	defer alarms.mu.Unlock()
	if n := len(alarms.free); n > 0 {
		a := alarms.free[n-1]
		alarms.free = alarms.free[:n-1]
		alarms.taken++
		return a, alarms.taken == 1
	}
	if alarms.err != nil || alarms.taken >= maxAlarms {
		return nil, false
	}
	a, err := newAlarm()
	if err != nil {
		alarms.err = err
		return nil, false
	}
	alarms.taken++
	return a, alarms.taken == 1
}

// putAlarm returns a to the free list and says how many alarms are still
// in use.
func putAlarm(a *alarm) int {
	alarms.mu.Lock()
	alarms.free = append(alarms.free, a)
	alarms.taken--
	n := alarms.taken
	alarms.mu.Unlock()
	return n
}

// sleepAlarm returns once the wall clock has reached wall, waiting on an
// alarm; it reports false, without waiting, if no alarm is free.
func sleepAlarm(wall time.Time) bool {
	due := sinceBase(wall)
	if due <= sinceBase(time.Now()) {
		return true
	}
	a, alone := getAlarm()
	if a == nil {
		return false
	}
	wake := due
	if alone {
		wake -= margin.Load()
	}
	a.watch(wake)
	for now := sinceBase(time.Now()); now < wake; {
		a.wait(wake)
		if now = sinceBase(time.Now()); alone && now >= wake {
			adapt(now - wake)
		}
	}
	a.unwatch()
	if putAlarm(a) == 0 {
		handOffPoller()
	}
	for sinceBase(time.Now()) < due {
		runtime.Gosched()
	}
	return true
}

// handOffPoller has the runtime wake a thread that will wait in epoll.
//
// An alarm's goroutine is most often readied by the runtime's thread that
// waits in epoll, which then runs it and polls no more. The goroutine
// answers its request and goes back to what it serves: a go-fuse reader
// blocks in read(2) of /dev/fuse, holding its thread and processor, and
// the runtime starts no other thread to poll while the other processors
// are idle. A socket's or a pipe's data for this process (an in-process
// client's reply, the SMB prober's, an iSCSI initiator's next command) then
// waits for the runtime's monitor, up to 10 ms
// (docs/notes/nas-fidelity.md, "Nobody polled after an answer"). A new
// goroutine makes the runtime wake an idle processor's thread to run it;
// finding nothing more to do, that thread waits in epoll. It is done
// only when no other paced request waits: while one does, its alarm (and
// the watchdog) wakes a thread, and a wake per request would cost a fifth
// more processor time per wait at queue depth 32
// (BenchmarkWallClockPacing).
func handOffPoller() { go func() {}() }

// margin is how long before its deadline a lone request is woken, in
// nanoseconds; it lies between minMargin and maxMargin.
var margin atomic.Int64

func init() { margin.Store(int64(minMargin)) }

// Bounds of the margin. The floor covers the usual lateness of a wake-up
// on an idle host; the ceiling bounds the processor time one request may
// spin on a loaded host, where spinning longer would take the processor
// from the requests being served (behind smbd, a queue-depth-32 job
// reaches the share with few requests in flight, often one).
const (
	minMargin = 20 * time.Microsecond
	maxMargin = 250 * time.Microsecond
)

// adapt moves the margin towards the lateness of the latest wake-up: at
// once when one ended later than the margin allows, slowly (by 1/32 of
// the difference) when they end earlier. A margin below a wake-up's
// lateness makes an answer late; one above it only spins longer.
func adapt(over int64) {
	want := min(max(over+over/4+int64(10*time.Microsecond), int64(minMargin)), int64(maxMargin))
	if cur := margin.Load(); want < cur {
		want = cur - (cur-want)/32
	}
	margin.Store(want) // a lost update between requests is harmless
}
