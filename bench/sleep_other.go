//go:build !linux

package bench

import "time"

// sleep blocks for d.
func sleep(d time.Duration) { time.Sleep(d) }
