package bench

import (
	"fmt"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// truncate implements rangeFile.
func (f *pathFile) truncate(_ time.Duration, size int64) (time.Duration, error) {
	if err := unix.Ftruncate(f.fd, size); err != nil {
		return f.clock.Now(), fmt.Errorf("ftruncate %s to %d: %w", f.path, size, err)
	}
	return f.clock.Now(), nil
}

// allocate implements rangeFile.
func (f *pathFile) allocate(_ time.Duration, off, n int64, keepSize bool) (time.Duration, error) {
	mode := uint32(0)
	if keepSize {
		mode = unix.FALLOC_FL_KEEP_SIZE
	}
	if err := unix.Fallocate(f.fd, mode, off, n); err != nil {
		return f.clock.Now(), fmt.Errorf("fallocate %s [%d, +%d): %w", f.path, off, n, err)
	}
	return f.clock.Now(), nil
}

// punch implements rangeFile: a block device is discarded (BLKDISCARD, as
// fio trims), a file gets a hole.
func (f *pathFile) punch(_ time.Duration, off, n int64) (time.Duration, error) {
	var st unix.Stat_t
	if err := unix.Fstat(f.fd, &st); err != nil {
		return f.clock.Now(), err
	}
	var err error
	if st.Mode&unix.S_IFMT == unix.S_IFBLK {
		r := [2]uint64{uint64(off), uint64(n)}
		if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(f.fd), unix.BLKDISCARD, uintptr(unsafe.Pointer(&r))); e != 0 {
			err = e
		}
	} else {
		err = unix.Fallocate(f.fd, unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, off, n)
	}
	if err != nil {
		return f.clock.Now(), fmt.Errorf("trim %s [%d, +%d): %w", f.path, off, n, err)
	}
	return f.clock.Now(), nil
}

// oNoFollow keeps a log from being written through a symbolic link.
const oNoFollow = unix.O_NOFOLLOW
