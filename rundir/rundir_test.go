package rundir

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// nobody is the uid that plays the other local user.
const nobody = 65534

// needRoot skips where files cannot be given to another user, except in
// CI, which runs the tests as root.
func needRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI must run the tests as root")
		}
		t.Skip("chown to another user needs root")
	}
}

// victim returns a file of root's whose content the tests check is
// untouched.
func victim(t *testing.T) (path string, check func()) {
	path = filepath.Join(t.TempDir(), "victim")
	const content = "root's file\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, func() {
		t.Helper()
		if b, err := os.ReadFile(path); err != nil || string(b) != content {
			t.Errorf("the target file was changed: %q, %v", b, err)
		}
	}
}

// TestRobustHostileBase holds issue 20's symlink attack on the state
// base: a base another user pre-created (their directory, a symlink to
// one, one anyone can write) is refused, and nothing is written through
// it.
func TestRobustHostileBase(t *testing.T) {
	needRoot(t)
	target, untouched := victim(t)
	for name, plant := range map[string]func(base string) error{
		"other user's": func(base string) error {
			if err := os.Mkdir(base, 0o777); err != nil {
				return err
			}
			os.Symlink(target, filepath.Join(base, "smb.conf"))
			return os.Chown(base, nobody, nobody)
		},
		"symlink": func(base string) error {
			dir := filepath.Join(filepath.Dir(base), "elsewhere")
			if err := os.Mkdir(dir, 0o700); err != nil {
				return err
			}
			return os.Symlink(dir, base)
		},
		"world-writable": func(base string) error {
			if err := os.Mkdir(base, 0o700); err != nil {
				return err
			}
			return os.Chmod(base, 0o777)
		},
		"a file": func(base string) error { return os.Symlink(target, base) },
	} {
		t.Run(name, func(t *testing.T) {
			base := filepath.Join(t.TempDir(), "nasemu")
			if err := plant(base); err != nil {
				t.Fatal(err)
			}
			d, err := OpenBase(base)
			if err == nil {
				d.Close()
				t.Fatalf("OpenBase accepted a base that is %s", name)
			}
			if !errors.Is(err, ErrUnsafe) {
				t.Errorf("error does not match ErrUnsafe: %v", err)
			}
			untouched()
		})
	}
	// A base in a directory others may write that is not sticky.
	open := t.TempDir()
	os.Chmod(open, 0o777)
	if d, err := OpenBase(filepath.Join(open, "nasemu")); err == nil || !errors.Is(err, ErrUnsafe) {
		if d != nil {
			d.Close()
		}
		t.Errorf("OpenBase in a world-writable, non-sticky directory: %v", err)
	}
}

// TestRobustNoFollow holds the writes inside a state directory: a
// planted symlink (or file) at a name nasemu writes is not followed nor
// truncated; the write fails and the target is untouched.
func TestRobustNoFollow(t *testing.T) {
	target, untouched := victim(t)
	base, err := OpenBase(filepath.Join(t.TempDir(), "nasemu"))
	if err != nil {
		t.Fatal(err)
	}
	defer base.Close()
	if err := os.Symlink(target, base.Join("smb.conf")); err != nil {
		t.Fatal(err)
	}
	if err := base.WriteFile("smb.conf", []byte("[global]\n"), 0o600); !errors.Is(err, fs.ErrExist) {
		t.Errorf("writing over a planted symlink: %v; want it refused (exists)", err)
	}
	if err := os.Symlink(filepath.Dir(target), base.Join("samba")); err != nil {
		t.Fatal(err)
	}
	if _, err := base.Mkdir("samba", 0o700); !errors.Is(err, fs.ErrExist) {
		t.Errorf("mkdir over a planted symlink: %v; want it refused (exists)", err)
	}
	if _, err := base.Create("../victim", 0o600); err == nil {
		t.Error("Create took a name with a path in it")
	}
	untouched()
}

// TestRobustFreshDirs: run directories are new, private and exactly of
// the mode asked for whatever the umask, and files in them too.
func TestRobustFreshDirs(t *testing.T) {
	parent := t.TempDir()
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	base, err := OpenBase(filepath.Join(parent, "nasemu"))
	if err != nil {
		t.Fatal(err)
	}
	defer base.Close()
	a, err := base.MkdirTemp("mount-", 0o700)
	if err != nil {
		t.Fatal(err)
	}
	b, err := base.MkdirTemp("mount-", 0o711)
	if err != nil {
		t.Fatal(err)
	}
	if a.Path() == b.Path() || !strings.HasPrefix(filepath.Base(a.Path()), "mount-") {
		t.Errorf("temporary names %s and %s", a.Path(), b.Path())
	}
	if err := a.WriteFile("f", []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{base.Path(): 0o711, a.Path(): 0o700, b.Path(): 0o711, a.Join("f"): 0o600} {
		if st, err := os.Lstat(path); err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: mode %v, %v; want %v", path, st.Mode().Perm(), err, want)
		}
	}
	if err := a.RemoveAll(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(a.Path()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s left: %v", a.Path(), err)
	}
	b.Close()
}

// TestRobustBaseForRoot: root's default state base is under /run, not
// in the temporary directory every user can write, when
// $XDG_RUNTIME_DIR is unset (as under sudo) or is not root's own.
func TestRobustBaseForRoot(t *testing.T) {
	needRoot(t)
	t.Setenv("XDG_RUNTIME_DIR", "")
	if got := Base(); got != "/run/nasemu" {
		t.Errorf("root's base without XDG_RUNTIME_DIR: %s; want /run/nasemu", got)
	}
	other := t.TempDir()
	os.Chown(other, nobody, nobody)
	t.Setenv("XDG_RUNTIME_DIR", other)
	if got := Base(); got != "/run/nasemu" {
		t.Errorf("root's base with another user's XDG_RUNTIME_DIR: %s; want /run/nasemu", got)
	}
	own := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", own)
	if got := Base(); got != filepath.Join(own, "nasemu") {
		t.Errorf("root's base with its own XDG_RUNTIME_DIR: %s", got)
	}
}
