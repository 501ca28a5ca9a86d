package emu

import (
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// alarm is a timerfd on CLOCK_MONOTONIC (Go's monotonic clock) read
// through Go's network poller, with a read deadline at its expiry: while
// the process is idle, the timer's expiry ends the poller's epoll wait
// within microseconds (a timerfd has no timer slack), where the runtime's
// own timeout for its next timer is whole milliseconds; while it is busy,
// the runtime polls the network rarely but runs its timers at every
// scheduling decision, and the read's deadline (a runtime timer) ends the
// wait.
type alarm struct {
	fd   int
	f    *os.File // keeps the descriptor open
	base int64    // CLOCK_MONOTONIC at pacerBase or just after, nanoseconds
	// kick is when the watchdog wakes the alarm's goroutine if the
	// runtime has not (nanoseconds since pacerBase; 0: not watched), and
	// idx its place in dog.watched. Both are dog.mu's.
	kick int64
	idx  int
}

func newAlarm() (*alarm, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "pacer timerfd") // non-blocking: pollable
	// The kernel's clock is read after Go's: a deadline converted with
	// this base lies at or after the true one, so the alarm never goes off
	// early.
	now := sinceBase(time.Now())
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		f.Close()
		return nil, err
	}
	return &alarm{fd: fd, f: f, base: ts.Nano() - now}, nil
}

// wait arms the alarm for due (nanoseconds since pacerBase) and returns
// once it has gone off or its read deadline has passed.
func (a *alarm) wait(due int64) {
	its := unix.ItimerSpec{Value: unix.NsecToTimespec(a.base + due)}
	unix.TimerfdSettime(a.fd, unix.TFD_TIMER_ABSTIME, &its, nil)
	a.f.SetReadDeadline(pacerBase.Add(time.Duration(due)))
	var buf [8]byte
	a.f.Read(buf[:])
}

// The watchdog wakes a goroutine waiting on its alarm when the runtime has
// not woken it by a grace after the wake-up time. The runtime notices a
// timerfd's expiry (and runs a read deadline's timer) only while one of
// its threads waits in epoll or schedules; a thread that found work in
// epoll and whose goroutine then blocks in a system call, as go-fuse's
// readers of /dev/fuse do, leaves nobody waiting in epoll while the other
// processors are idle, until the runtime's monitor looks, 10 ms later
// (sysmon; retake keeps a processor in a system call for as long when
// others are idle). Behind smbd that made a request of 3 ms answer in 13
// whenever another request (the share's SMB probes) had woken the
// poller's thread (docs/notes/nas-fidelity.md). The watchdog's own
// thread blocks in read(2) on a timerfd of its own, armed for the
// earliest kick; at the kick it sets the late alarms' read deadline to
// the past, which readies their goroutines without the poller. The grace
// is the lateness the pacer allows for on a loaded host (maxMargin): a
// shorter one had the watchdog step in for ordinary late wake-ups too,
// at a tenth more processor time per wait at queue depth 32
// (BenchmarkWallClockPacing).
const watchGrace = maxMargin

var dog struct {
	once    sync.Once
	fd      int // -1: no watchdog (its timerfd could not be made)
	base    int64
	mu      sync.Mutex
	armed   int64 // the kick fd is armed for (0: disarmed)
	watched []*alarm
}

// watch asks the watchdog to wake a's goroutine at wake plus watchGrace
// (nanoseconds since pacerBase) unless unwatch comes first.
func (a *alarm) watch(wake int64) {
	dog.once.Do(startDog)
	if dog.fd < 0 {
		return
	}
	kick := wake + int64(watchGrace)
	dog.mu.Lock()
	a.kick, a.idx = kick, len(dog.watched)
	dog.watched = append(dog.watched, a)
	if dog.armed == 0 || kick < dog.armed {
		armDog(kick)
	}
	dog.mu.Unlock()
}

// unwatch takes a off the watchdog's list, if it is still on it.
func (a *alarm) unwatch() {
	if dog.fd < 0 {
		return
	}
	dog.mu.Lock()
	defer dog.mu.Unlock()
	if a.kick == 0 {
		return
	}
	kick := a.kick
	dropWatched(a)
	if kick != dog.armed {
		return
	}
	next := int64(0)
	for _, w := range dog.watched {
		if next == 0 || w.kick < next {
			next = w.kick
		}
	}
	armDog(next)
}

// dropWatched removes a from dog.watched; dog.mu is held.
func dropWatched(a *alarm) {
	last := dog.watched[len(dog.watched)-1]
	dog.watched[a.idx], last.idx = last, a.idx
	dog.watched[len(dog.watched)-1] = nil
	dog.watched = dog.watched[:len(dog.watched)-1]
	a.kick = 0
}

// armDog arms the watchdog's timer for at (0 disarms it); dog.mu is held.
func armDog(at int64) {
	var its unix.ItimerSpec
	if at != 0 {
		its.Value = unix.NsecToTimespec(dog.base + at)
	}
	unix.TimerfdSettime(dog.fd, unix.TFD_TIMER_ABSTIME, &its, nil)
	dog.armed = at
}

// startDog makes the watchdog's timer and starts its goroutine.
func startDog() {
	dog.fd = -1
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_CLOEXEC) // blocking
	if err != nil {
		return
	}
	now := sinceBase(time.Now())
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
		unix.Close(fd)
		return
	}
	dog.fd, dog.base = fd, ts.Nano()-now
	go runDog()
}

// runDog waits for each kick and wakes the alarms that are late.
func runDog() {
	past := time.Unix(1, 0)
	var buf [8]byte
	for {
		if _, err := unix.Read(dog.fd, buf[:]); err != nil && err != unix.EINTR {
			return
		}
		now := sinceBase(time.Now())
		dog.mu.Lock()
		next := int64(0)
		for i := 0; i < len(dog.watched); {
			a := dog.watched[i]
			if a.kick <= now {
				a.f.SetReadDeadline(past)
				dropWatched(a)
				continue
			}
			if next == 0 || a.kick < next {
				next = a.kick
			}
			i++
		}
		armDog(next)
		dog.mu.Unlock()
	}
}
