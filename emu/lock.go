package emu

import (
	"errors"
	"fmt"
	"os"
)

// InUseError is the error of Lock when another process, or another open
// of the same path in this one, holds the lock: two emulators writing one
// backing directory or file would each overwrite what the other stores
// and undo what the other made durable.
type InUseError struct {
	Path string
	// PID is the holder's process ID (0 when the kernel does not tell);
	// Command its command line, when it can be read.
	PID     int
	Command string
}

// Error implements error.
func (e *InUseError) Error() string {
	holder := "another emulator"
	switch {
	case e.PID == os.Getpid():
		holder = fmt.Sprintf("this process (PID %d)", e.PID)
	case e.PID > 0 && e.Command != "":
		holder = fmt.Sprintf("process %d (%s)", e.PID, e.Command)
	case e.PID > 0:
		holder = fmt.Sprintf("process %d", e.PID)
	}
	return fmt.Sprintf("%s is in use by %s: one emulator at a time may serve it", e.Path, holder)
}

// Unwrap returns ErrInUse.
func (e *InUseError) Unwrap() error { return ErrInUse }

// Lock takes an exclusive lock (flock) on the open file or directory f of
// path, held until f is closed (or the process ends, however it ends).
// When another open file description holds it, the error is an
// *InUseError naming the holder.
func Lock(f *os.File, path string) error {
	err := flockExclusive(f)
	if errors.Is(err, errWouldBlock) {
		pid, cmd := lockHolder(f)
		return &InUseError{Path: path, PID: pid, Command: cmd}
	}
	if err != nil {
		return fmt.Errorf("locking %s: %w", path, err)
	}
	return nil
}
