package bench

import (
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// sleep blocks the calling thread for d as fio sleeps for thinktime and
// rate pacing (usec_sleep): in nanosleep(2) for all but the sleep's
// granularity, the longest a nanosleep of 1 µs took in ten tries (the
// thread's timer slack and wake-up, 50 µs and more), then spinning for
// the rest, so that a sleep lasts what was asked and not a granularity
// more. time.Sleep would park the goroutine on the runtime's timers,
// which an idle scheduler waits for in epoll_pwait with a timeout in whole
// milliseconds: a thinktime of 50 µs lasted a millisecond or more, and a
// goroutine locked to its thread (an asynchronous engine's) was then
// handed back to that thread, two thread wake-ups more.
func sleep(d time.Duration) {
	end := time.Now().Add(d)
	g := sleepGranularity()
	for {
		left := time.Until(end)
		switch {
		case left <= 0:
			return
		case left < g:
			for time.Now().Before(end) {
			}
			return
		}
		// Interrupted by a signal (the runtime preempting), the sleep
		// goes on for what remains.
		ts := unix.NsecToTimespec(int64(left - g))
		unix.Nanosleep(&ts, nil)
	}
}

// sleepGranularity measures, once, how long nanosleep(2) takes at least,
// as fio does at start-up (fio_time_init).
var sleepGranularity = sync.OnceValue(func() time.Duration {
	var g time.Duration
	ts := unix.NsecToTimespec(int64(time.Microsecond))
	for range 10 {
		t := time.Now()
		unix.Nanosleep(&ts, nil)
		g = max(g, time.Since(t))
	}
	return g
})

// threadCPU is the CPU time the calling thread has used.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts) != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}
