//go:build !linux

package bench

import "time"

// sleep blocks for d.
func sleep(d time.Duration) { time.Sleep(d) }

// threadCPU returns 0: the calling thread's CPU time is not read here.
func threadCPU() time.Duration { return 0 }
