package bench

import (
	"fmt"
	"os"
	"path/filepath"
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

// diskStats implements diskStater: /sys/block's stat of the disk the
// target lies on (a partition's disk, as fio reports it); false where the
// file system has no block device (tmpfs, overlay, a network file
// system).
func (p *Path) diskStats() ([]diskCounters, bool) {
	var st unix.Stat_t
	if err := unix.Stat(p.path, &st); err != nil {
		return nil, false
	}
	dev := st.Dev
	if p.kind == kindDevice {
		dev = st.Rdev
	}
	if unix.Major(dev) == 0 {
		return nil, false
	}
	dir, err := filepath.EvalSymlinks(fmt.Sprintf("/sys/dev/block/%d:%d", unix.Major(dev), unix.Minor(dev)))
	if err != nil {
		return nil, false
	}
	if _, err := os.Stat(filepath.Join(dir, "partition")); err == nil {
		dir = filepath.Dir(dir)
	}
	b, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return nil, false
	}
	var f [11]int64
	if n, _ := fmt.Sscan(string(b), &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6], &f[7], &f[8], &f[9], &f[10]); n != len(f) {
		return nil, false
	}
	return []diskCounters{{name: filepath.Base(dir), at: p.clock.Now(),
		ios: [2]int64{f[0], f[4]}, merges: [2]int64{f[1], f[5]}, sectors: [2]int64{f[2], f[6]},
		ticks: [2]int64{f[3], f[7]}, ioTicks: f[9], inQueue: f[10]}}, true
}
