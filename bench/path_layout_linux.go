package bench

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// freeBytes returns the bytes an unprivileged user may still write on
// the file system holding dir (statfs's f_bavail).
func freeBytes(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// preallocate gives f's bytes [from, to) their blocks as mode says.
func preallocate(f *os.File, from, to int64, mode Fallocate) error {
	if mode == FallocateNone || to <= from {
		return nil
	}
	flags := uint32(0)
	if mode == FallocateKeep {
		flags = unix.FALLOC_FL_KEEP_SIZE
	}
	err := unix.Fallocate(int(f.Fd()), flags, from, to-from)
	switch {
	case err == nil:
		return nil
	case !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.ENOSYS):
		return err // ENOSPC above all
	case mode != FallocatePosix:
		return nil // native and keep: no preallocation where there is none, as fio
	}
	zeros := make([]byte, 1<<20)
	for off := from; off < to; {
		n := min(int64(len(zeros)), to-off)
		if _, err := f.WriteAt(zeros[:n], off); err != nil {
			return err
		}
		off += n
	}
	return nil
}
