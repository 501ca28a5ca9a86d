package smb

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// sysProcAttr has the kernel send smbd SIGTERM if the caller dies first.
// It does not set Setpgid: smbd (without --no-process-group) calls
// setsid itself, which fails for a process that already leads a group;
// the new session puts smbd and its children in a group of their own.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}

// signalGroup sends sig to the process group that pid leads (smbd calls
// setsid: its group is its own).
func signalGroup(pid int, sig syscall.Signal) error {
	if pid <= 1 {
		return syscall.EINVAL
	}
	return syscall.Kill(-pid, sig)
}

// groupAlive reports whether a process of group pgid is still running
// (zombies, which the group's exited leader can no longer reap, do not
// count).
func groupAlive(pgid int) bool {
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		if d.Name()[0] < '0' || d.Name()[0] > '9' {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp ...: comm may hold spaces.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) >= 3 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			return true
		}
	}
	return false
}

// hasXattrs reports whether the directory at path keeps user extended
// attributes: reading one it does not have fails with ENODATA there, with
// ENOTSUP where the filesystem keeps none. Nothing is written.
func hasXattrs(path string) bool {
	_, err := syscall.Getxattr(path, "user.nasemu-probe", nil)
	return err == nil || errors.Is(err, syscall.ENODATA)
}
