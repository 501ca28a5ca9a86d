//go:build !linux

package smb

import "syscall"

// sysProcAttr: the Samba harness is only supported on Linux.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// signalGroup: see sysProcAttr.
func signalGroup(int, syscall.Signal) error { return syscall.EINVAL }

// groupAlive: see sysProcAttr.
func groupAlive(int) bool { return false }

// hasXattrs: see sysProcAttr.
func hasXattrs(string) bool { return false }
