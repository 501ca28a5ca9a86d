package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/nasemu/nasemu/fusefs"
)

func runUmount(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("umount", "[--lazy] [--timeout D] MOUNTPOINT", stderr)
	lazy := fs.Bool("lazy", false, "detach the share now even while files are open on it (the kernel finishes when they are closed)")
	timeout := fs.Duration("timeout", time.Minute, "how long to wait for the emulator to save its state and exit")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("want one MOUNTPOINT, got %d arguments", fs.NArg())
	}
	mountpoint := fs.Arg(0)
	abs, err := filepath.Abs(mountpoint)
	if err != nil {
		return usageError{err}
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	e, ok := fusefs.MountAt(abs)
	switch {
	case !ok:
		return usagef("%s: nothing is mounted there", mountpoint)
	case !e.Share():
		return usagef("%s: a %s mount of %s, not a nasemu share: left alone", mountpoint, e.FSType, e.Source)
	}
	_, statErr := os.Stat(abs)
	stale := errors.Is(statErr, syscall.ENOTCONN)
	owner := 0
	if !stale {
		owner = shareOwner(abs)
	}
	if err := fusefs.Detach(abs, *lazy || stale); err != nil {
		if errors.Is(err, syscall.EBUSY) {
			return fmt.Errorf("%s is busy: files are open on it ('fuser -vm %s' lists the processes); --lazy detaches it now and finishes when they are closed", mountpoint, mountpoint)
		}
		return fmt.Errorf("unmounting %s: %w", mountpoint, err)
	}
	switch {
	case stale:
		fmt.Fprintf(stderr, "nasemu umount: %s held the share %s of an emulator that had ended: unmounted it\n", mountpoint, e.Source)
		return nil
	case owner == 0:
		fmt.Fprintf(stderr, "nasemu umount: unmounted %s (its emulator saves its state and exits)\n", mountpoint)
		return nil
	}
	for deadline := time.Now().Add(*timeout); !processGone(owner); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("unmounted %s, but its emulator (process %d) has not exited after %v", mountpoint, owner, *timeout)
		}
	}
	fmt.Fprintf(stderr, "nasemu umount: unmounted %s; its emulator (process %d) saved its state and exited\n", mountpoint, owner)
	return nil
}

// shareOwner returns the process of the running emulator that serves the
// share at mountpoint, asking each one's control socket (0 when none
// says so, e.g. one started with --socket elsewhere).
func shareOwner(mountpoint string) int {
	socks, _ := filepath.Glob(filepath.Join(stateBase(), "*-*", "ctl.sock"))
	for _, sock := range socks {
		pid, ok := stateDirPID(filepath.Dir(sock))
		if !ok || processGone(pid) {
			continue
		}
		resp, err := fusefs.Call(sock, fusefs.ControlRequest{Cmd: "status"})
		if err == nil && resp.OK && resp.Status != nil && resp.Status.Mountpoint == mountpoint {
			return pid
		}
	}
	return 0
}
