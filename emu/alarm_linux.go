package emu

import (
	"os"
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
