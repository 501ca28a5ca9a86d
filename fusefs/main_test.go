package fusefs

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fixed"
)

// childEnv, when set in the environment ("MOUNTPOINT:BACKING"), makes the
// test binary serve a share instead of running tests: the crash test runs
// the emulator in a child process it can kill.
const childEnv = "NASEMU_FUSEFS_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		os.Exit(serveChild(spec))
	}
	if path := os.Getenv(readerEnv); path != "" {
		os.Exit(readForParent(path))
	}
	code := m.Run()
	if leaked := leakedMounts(); len(leaked) > 0 {
		fmt.Fprintf(os.Stderr, "tests left mounts behind: %v\n", leaked)
		for _, mnt := range leaked {
			syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
		code = 1
	}
	os.Exit(code)
}

// serveChild mounts a zero-cost share and serves it until killed.
func serveChild(spec string) int {
	mnt, backing, _ := strings.Cut(spec, ":")
	model, _ := fixed.New(fixed.Config{Capacity: 1 << 30})
	f, err := New(model, &emu.VirtualClock{}, backing, Options{})
	if err == nil {
		err = f.Mount(mnt)
	}
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("ready")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	if err := f.Unmount(); err != nil {
		return 1
	}
	return 0
}

// mountpoints records every mountpoint the tests used (other processes
// mount nasemu shares too; only ours are checked).
var mountpoints sync.Map

// usedMountpoint records a mountpoint of a test.
func usedMountpoint(path string) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	mountpoints.Store(path, true)
	return path
}

// leakedMounts lists the tests' mountpoints still in the mount table.
func leakedMounts() []string {
	var out []string
	mountpoints.Range(func(k, _ any) bool {
		if Mounted(k.(string)) {
			out = append(out, k.(string))
		}
		return true
	})
	return out
}

// requireFuse skips a test on a host without FUSE, except in CI (CI=true),
// where a missing FUSE device or fusermount3 fails it.
func requireFuse(t testing.TB) {
	t.Helper()
	var missing string
	if _, err := os.Stat("/dev/fuse"); err != nil {
		missing = "/dev/fuse"
	} else if _, err := exec.LookPath("fusermount3"); err != nil && os.Geteuid() != 0 {
		missing = "fusermount3 (Debian package fuse3)"
	}
	if missing == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("FUSE tests need %s, which this CI host lacks", missing)
	}
	t.Skipf("no %s on this host", missing)
}

// share is a mounted share of a test.
type share struct {
	fs      *FS
	mnt     string
	backing string
}

// freeModel is a zero-cost device of the given capacity.
func freeModel(t testing.TB, capacity int64) models.Device {
	t.Helper()
	d, err := fixed.New(fixed.Config{Capacity: capacity})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// mountShare mounts a share of model over a fresh (or the given) backing
// directory and unmounts it at the end of the test.
func mountShare(t testing.TB, model models.Device, clock emu.Clock, backing string, opts Options) *share {
	t.Helper()
	requireFuse(t)
	if backing == "" {
		backing = t.TempDir()
	}
	mnt := usedMountpoint(t.TempDir())
	f, err := New(model, clock, backing, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Mount(mnt); err != nil {
		t.Fatal(err)
	}
	s := &share{fs: f, mnt: mnt, backing: backing}
	t.Cleanup(func() { s.unmount(t) })
	return s
}

// unmount unmounts the share and checks that it is gone.
func (s *share) unmount(t testing.TB) {
	t.Helper()
	if err := s.fs.Unmount(); err != nil {
		t.Errorf("unmount: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for Mounted(s.mnt) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if Mounted(s.mnt) {
		t.Errorf("%s still mounted after Unmount", s.mnt)
		syscall.Unmount(s.mnt, syscall.MNT_DETACH)
	}
}

// path returns the path of name on the mount.
func (s *share) path(name string) string { return s.mnt + "/" + name }

// volumeCount returns how many requests of op the volume has served.
func volumeCount(f *FS, op models.Op) int64 {
	for _, o := range f.Volume().Stats().Ops {
		if o.Op == op {
			return o.Count
		}
	}
	return 0
}
