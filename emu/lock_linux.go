package emu

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

var errWouldBlock = unix.EWOULDBLOCK

// flockExclusive takes f's exclusive flock without waiting.
func flockExclusive(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err != unix.EINTR {
			return err
		}
	}
}

// lockHolder returns the process that holds the flock of f, from the
// kernel's table of locks (/proc/locks), and its command line.
func lockHolder(f *os.File) (pid int, cmd string) {
	var st unix.Stat_t
	if unix.Fstat(int(f.Fd()), &st) != nil {
		return 0, ""
	}
	// /proc/locks names the file as major:minor:inode, the device
	// numbers in hex.
	id := fmt.Sprintf("%02x:%02x:%d", unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino)
	fh, err := os.Open("/proc/locks")
	if err != nil {
		return 0, ""
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		// "1: FLOCK  ADVISORY  WRITE 1234 00:2d:5678 0 EOF"; waiters
		// have a "->" field after the number.
		fields := strings.Fields(sc.Text())
		if len(fields) < 6 || fields[1] == "->" || fields[1] != "FLOCK" || fields[5] != id {
			continue
		}
		if pid, err = strconv.Atoi(fields[4]); err != nil {
			return 0, ""
		}
		b, _ := os.ReadFile("/proc/" + fields[4] + "/cmdline")
		return pid, strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " "))
	}
	return 0, ""
}
