package fusefs

import (
	"os"
	"strconv"
	"syscall"
)

// closeFuseOnExec marks this process's descriptors of /dev/fuse
// close-on-exec. go-fuse opens the device with syscall.Open, which leaves
// the descriptor inheritable: every program the process starts after a
// mount (smbd for 'nasemu nas') would hold the FUSE connection open, and
// when the emulator dies its share would hang instead of failing at once
// (ENOTCONN), and with it anything that touches the mount point.
func closeFuseOnExec() {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range fds {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && target == "/dev/fuse" {
			syscall.CloseOnExec(fd)
		}
	}
}
