//go:build !linux

package bench

import (
	"errors"
	"syscall"
)

var (
	newURing newQueueFunc = func(int, []int, [][]byte, queueOpts) (ioQueue, error) { return nil, errors.ErrUnsupported }
	newAIO   newQueueFunc = newURing
)

// monotonicNow is not called where there are no queues.
func monotonicNow() int64 { return 0 }

// errnoErr turns a negated result into its error.
func errnoErr(e int64) error { return syscall.Errno(e) }
