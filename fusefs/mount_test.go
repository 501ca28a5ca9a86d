package fusefs

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/nasemu/nasemu/emu"
)

func TestCheckMount(t *testing.T) {
	s := mountShare(t, freeModel(t, 1<<20), &emu.VirtualClock{}, "", Options{})
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	for _, tc := range []struct {
		name, mnt, backing string
		want               error
	}{
		{"missing", filepath.Join(dir, "missing"), t.TempDir(), ErrMountpoint},
		{"not a directory", file, t.TempDir(), ErrMountpoint},
		{"busy", s.mnt, t.TempDir(), ErrMountpoint},
		{"same path", dir, dir, ErrBackingPlacement},
		{"backing inside", dir, filepath.Join(dir, "sub"), ErrBackingPlacement},
		{"mountpoint inside backing", filepath.Join(dir, "sub"), dir, ErrBackingPlacement},
		{"fine", filepath.Join(dir, "sub"), t.TempDir(), nil},
	} {
		_, err := CheckMount(tc.mnt, tc.backing)
		if (tc.want == nil && err != nil) || (tc.want != nil && !errors.Is(err, tc.want)) {
			t.Errorf("%s: CheckMount = %v, want %v", tc.name, err, tc.want)
		}
	}
	if err := s.fs.Mount(t.TempDir()); err == nil {
		t.Error("mounting a mounted share a second time succeeded")
	}
}

func TestClassifyMountError(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want error
	}{
		{syscall.EPERM, ErrNoPermission},
		{syscall.EACCES, ErrNoPermission},
		{syscall.ENODEV, ErrNoFuse},
		{syscall.EBUSY, ErrMountpoint},
	} {
		if got := classifyMountError(tc.err); !errors.Is(got, tc.want) {
			t.Errorf("classifyMountError(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
	if got := unescapeMount(`/tmp/a\040b\134c`); got != `/tmp/a b\c` {
		t.Errorf("unescapeMount = %q", got)
	}
}
