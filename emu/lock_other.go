//go:build !linux

package emu

import (
	"errors"
	"os"
	"syscall"
)

var errWouldBlock = syscall.EWOULDBLOCK

// flockExclusive takes f's exclusive flock without waiting.
func flockExclusive(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.ENOSYS) {
		return nil // no locks here: nothing to hold
	}
	return err
}

// lockHolder is unknown here.
func lockHolder(*os.File) (int, string) { return 0, "" }
