package bench

import "syscall"

const oDirect = syscall.O_DIRECT

// readOnlyFS reports whether path's file system is mounted read-only.
func readOnlyFS(path string) bool {
	var st syscall.Statfs_t
	const stRdonly = 1 // ST_RDONLY
	return syscall.Statfs(path, &st) == nil && st.Flags&stRdonly != 0
}
