package fusefs

import "syscall"

// nextData returns the offset of the first byte at or after off that the
// file fd holds data for (SEEK_DATA), and end when there is none before
// end. A filesystem that does not report holes reports data everywhere,
// and so does an error: the caller then reads what it would have.
func nextData(fd int, off, end int64) int64 {
	const seekData = 3 // SEEK_DATA
	d, err := syscall.Seek(fd, off, seekData)
	switch {
	case err == syscall.ENXIO: // no data at or beyond off
		return end
	case err != nil:
		return off
	}
	return min(d, end)
}

// punch makes [off, off+n) of the file fd a hole again, keeping its size:
// zeros are written where the filesystem cannot punch.
func punch(fd int, off, n int64) error {
	const mode = 0x02 | 0x01 // FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE
	if err := syscall.Fallocate(fd, mode, off, n); err == nil {
		return nil
	}
	return writeZeros(fd, off, n)
}
