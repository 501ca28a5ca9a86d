//go:build unix

package emu

import (
	"syscall"
	"time"
)

// nanosleep sleeps for d in the kernel, blocking the calling thread (not
// only the goroutine): the kernel's high-resolution timers end it within
// tens of microseconds, where Go's timers may take a millisecond. It
// returns how long it slept; a signal (the runtime preempting the thread)
// can end it early.
func nanosleep(d time.Duration) time.Duration {
	start := time.Now()
	ts := syscall.NsecToTimespec(int64(d))
	syscall.Nanosleep(&ts, nil)
	return time.Since(start)
}
