package fusefs

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
)

// Errors of finding and removing shares by their mountpoint.
var (
	// ErrNotShare: what is mounted at the path is not a nasemu share (or
	// nothing is), so nasemu leaves it alone.
	ErrNotShare = errors.New("not a nasemu share")
)

// fsType is the type the kernel's mount table gives a share
// (MountOptions' Name), and sourcePrefix starts its source (FsName).
const (
	fsType       = "fuse.nasemu"
	sourcePrefix = "nasemu:"
)

// MountEntry is what the kernel's mount table says of one mount.
type MountEntry struct {
	Point  string // the mountpoint
	FSType string // e.g. fuse.nasemu
	Source string // e.g. nasemu:share (the backing directory's name)
}

// Share reports whether the mount is a nasemu share.
func (e MountEntry) Share() bool {
	return e.FSType == fsType && strings.HasPrefix(e.Source, sourcePrefix)
}

// MountAt returns the topmost mount at path (absolute, clean), from
// /proc/self/mountinfo.
func MountAt(path string) (MountEntry, bool) {
	fh, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return MountEntry{}, false
	}
	defer fh.Close()
	var found MountEntry
	ok := false
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		// ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER
		f := strings.Fields(sc.Text())
		if len(f) < 5 || unescapeMount(f[4]) != path {
			continue
		}
		e := MountEntry{Point: path}
		for i := 5; i+2 < len(f); i++ {
			if f[i] == "-" {
				e.FSType, e.Source = f[i+1], unescapeMount(f[i+2])
				break
			}
		}
		found, ok = e, true // later lines are mounted on top
	}
	return found, ok
}

// ClearStale removes the share a killed emulator left at mountpoint: its
// process is gone, the kernel's mount stays, and every access to the
// mountpoint fails with ENOTCONN ("transport endpoint is not connected").
// It detaches the mount lazily and returns it. A mountpoint that answers
// is left alone (nil, nil); a dead mount that is not a nasemu share is an
// error that says how to remove it.
func ClearStale(mountpoint string) (*MountEntry, error) {
	abs, err := filepath.Abs(mountpoint)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(abs); !errors.Is(err, syscall.ENOTCONN) {
		return nil, nil
	}
	e, ok := MountAt(abs)
	if !ok {
		return nil, fmt.Errorf("%w: %s: %v, and the mount table has no mount there", ErrMountpoint, mountpoint, syscall.ENOTCONN)
	}
	if !e.Share() {
		return nil, fmt.Errorf("%w: %s: a FUSE mount (%s from %s) whose process has ended; not a nasemu share, so left alone: umount -l or fusermount3 -uz it", ErrMountpoint, mountpoint, e.FSType, e.Source)
	}
	if err := Detach(abs, true); err != nil {
		return nil, fmt.Errorf("%w: removing the stale share at %s: %v", ErrMountpoint, mountpoint, err)
	}
	return &e, nil
}

// Detach unmounts the mount at path (absolute): at once, which fails while
// files are open on it, or lazily (the kernel finishes when the last one is
// closed). Root unmounts directly, other users through fusermount3.
func Detach(path string, lazy bool) error {
	if os.Geteuid() == 0 {
		flags := 0
		if lazy {
			flags = syscall.MNT_DETACH
		}
		return syscall.Unmount(path, flags)
	}
	args := []string{"-u", path}
	if lazy {
		args = []string{"-u", "-z", path}
	}
	if out, err := exec.Command("fusermount3", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("fusermount3 %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
