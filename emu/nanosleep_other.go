//go:build !unix

package emu

import "time"

// nanosleep sleeps for d on Go's timers, the only sleep here; it returns
// how long it slept.
func nanosleep(d time.Duration) time.Duration {
	start := time.Now()
	time.Sleep(d)
	return time.Since(start)
}
