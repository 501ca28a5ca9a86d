package bench

import (
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

const oDirect = syscall.O_DIRECT

// readOnlyFS reports whether path's file system is mounted read-only.
func readOnlyFS(path string) bool {
	var st syscall.Statfs_t
	const stRdonly = 1 // ST_RDONLY
	return syscall.Statfs(path, &st) == nil && st.Flags&stRdonly != 0
}

// invalidate drops the page cache's pages of the file, as fio does before
// a job with invalidate=1 (its default): posix_fadvise(POSIX_FADV_DONTNEED),
// which also serves a block device's page cache.
func (f *pathFile) invalidate() error {
	if err := unix.Fadvise(f.fd, 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("invalidate %s: %w", f.path, err)
	}
	return nil
}
