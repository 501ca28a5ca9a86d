package fusefs

import (
	"maps"
	"os"
	"slices"
	"syscall"
	"testing"

	"github.com/hanwen/go-fuse/v2/posixtest"
)

// posixCannotPass are the tests of go-fuse's POSIX suite that cannot pass
// on a share, and why.
var posixCannotPass = map[string]string{
	// Fails on tmpfs and every local filesystem too: POSIX record
	// locks belong to the process, so the test's second lock, taken by
	// the same process, never conflicts with its first (go-fuse's own
	// run of the suite leaves it out).
	"FcntlFlockLocksFile": "fails on tmpfs too: a process's second POSIX lock never conflicts with its first",
}

// TestRobustPOSIXSuite runs go-fuse's POSIX conformance suite
// (posixtest.All) on a share, each test in a directory of its own. The
// share's backing directory is a tmpfs where the host lets the test mount
// one, so that what the suite checks is the share, not the limits of the
// host's filesystem (ext4 keeps at most a block of extended attributes
// per file, which XAttrLarge exceeds).
func TestRobustPOSIXSuite(t *testing.T) {
	requireFuse(t)
	backing := t.TempDir()
	if err := syscall.Mount("tmpfs", backing, "tmpfs", 0, "size=256m,mode=0700"); err == nil {
		t.Cleanup(func() { syscall.Unmount(backing, syscall.MNT_DETACH) })
	} else {
		t.Logf("backing directory on the host's filesystem (mounting a tmpfs: %v)", err)
	}
	s := mountShare(t, freeModel(t, 1<<30), nil, backing, Options{})
	for _, name := range slices.Sorted(maps.Keys(posixtest.All)) {
		t.Run(name, func(t *testing.T) {
			if why, ok := posixCannotPass[name]; ok {
				t.Skip(why)
			}
			dir := s.path(name)
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			// Some tests skip themselves where they fail on a known
			// limitation (RenameOpenDir: go-fuse issue 55); on the
			// share, one that passes on tmpfs must pass.
			defer func() {
				if t.Skipped() {
					t.Errorf("%s skipped itself; it passes on tmpfs", name)
				}
			}()
			posixtest.All[name](t, dir)
		})
	}
}
