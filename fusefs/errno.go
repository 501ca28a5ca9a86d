package fusefs

import (
	"errors"
	"os"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/emu/extent"
	"github.com/nasemu/nasemu/models"
)

// toErrno translates an error of the model, the allocator or the backing
// filesystem into the errno the client sees. This is the only place where
// model errors become errno values.
func toErrno(err error) syscall.Errno {
	var errno syscall.Errno
	switch {
	case err == nil:
		return 0
	case errors.Is(err, models.ErrFailed):
		return syscall.EIO
	case errors.Is(err, models.ErrNoSpace), errors.Is(err, extent.ErrNoSpace):
		return syscall.ENOSPC
	case errors.Is(err, models.ErrOutOfRange):
		// The allocator never maps beyond the capacity: a bug, reported
		// as an I/O error rather than a client error.
		return syscall.EIO
	case errors.Is(err, models.ErrInvalid):
		return syscall.EINVAL
	case errors.Is(err, emu.ErrClosed), errors.Is(err, os.ErrClosed):
		return syscall.EIO
	case errors.As(err, &errno):
		return errno
	}
	return fs.ToErrno(err)
}
