//go:build !linux

package fusefs

// nextData reports data everywhere where holes are not looked for.
func nextData(fd int, off, end int64) int64 { return off }

// nextHole reports no hole before end.
func nextHole(fd int, off, end int64) int64 { return end }

// punch writes zeros over [off, off+n) of the file fd.
func punch(fd int, off, n int64) error { return writeZeros(fd, off, n) }
