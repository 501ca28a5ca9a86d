package emu

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// alarm is a timerfd on CLOCK_MONOTONIC (Go's monotonic clock) read
// through Go's network poller: waiting on it holds no thread, and the
// kernel ends it within microseconds of its expiry — a timerfd has no
// timer slack, and epoll wakes the poller's thread at once, where Go's
// own timers round a wait up to the millisecond of epoll's timeout.
type alarm struct {
	fd   int
	conn syscall.RawConn
	f    *os.File // keeps the descriptor open
	base int64    // CLOCK_MONOTONIC at pacerBase or just after, nanoseconds
}

func newAlarm() (*alarm, error) {
	fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "pacer timerfd") // non-blocking: pollable
	conn, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	// The kernel's clock is read after Go's: a deadline converted with
	// this base lies at or after the true one, so the alarm never goes off
	// early.
	now := sinceBase(time.Now())
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		f.Close()
		return nil, err
	}
	return &alarm{fd: fd, conn: conn, f: f, base: ts.Nano() - now}, nil
}

// set arms the alarm for due (nanoseconds since pacerBase).
func (a *alarm) set(due int64) {
	its := unix.ItimerSpec{Value: unix.NsecToTimespec(a.base + due)}
	unix.TimerfdSettime(a.fd, unix.TFD_TIMER_ABSTIME, &its, nil)
}

// wait returns once the alarm has gone off (since it was last waited for).
func (a *alarm) wait() {
	var buf [8]byte
	a.conn.Read(func(fd uintptr) bool {
		_, err := unix.Read(int(fd), buf[:])
		return err != unix.EAGAIN
	})
}
