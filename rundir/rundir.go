// Package rundir holds the private state directories of running
// emulators: the control socket of a mount, and the FUSE mount point and
// the Samba state of a nas.
//
// nasemu runs as root, so every path it writes is an attack surface: a
// user who could pre-create the directory it writes in, or a symlink in
// it, could have root overwrite a file of their choice (and smbd run a
// configuration they wrote). So:
//
//   - the state base (Base) is a directory of the caller's own: under
//     $XDG_RUNTIME_DIR when that is the caller's, under /run for root, in
//     the temporary directory (nasemu-UID) otherwise; an existing base must
//     be a directory (not a symlink) owned by the caller that no one else
//     can write (mode 0711 when created: a share's user passes through it);
//   - each run's directory is created afresh under it with a random name
//     (MkdirTemp), never reused;
//   - a Dir is held open by descriptor, its owner and mode checked through
//     that descriptor, and files and subdirectories are made relative to it
//     (openat, mkdirat) with O_NOFOLLOW and O_EXCL: nothing nasemu writes
//     follows a symlink or truncates a file that was already there.
package rundir

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// ErrUnsafe is returned (wrapped) when a state directory, or the place it
// goes, is not the caller's alone: owned by another user, writable by
// others, a symlink, or not a directory.
var ErrUnsafe = errors.New("unsafe state directory")

// Base returns the directory that holds the state directories of running
// emulators: $XDG_RUNTIME_DIR/nasemu when $XDG_RUNTIME_DIR is a directory
// the caller owns and no one else can write; else /run/nasemu for root
// (sudo clears $XDG_RUNTIME_DIR, and the temporary directory is
// everyone's); else nasemu-UID in the temporary directory.
func Base() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" && owned(d) {
		return filepath.Join(d, "nasemu")
	}
	if os.Geteuid() == 0 {
		if st, err := os.Stat("/run"); err == nil && st.IsDir() {
			return "/run/nasemu"
		}
	}
	return filepath.Join(os.TempDir(), "nasemu-"+strconv.Itoa(os.Geteuid()))
}

// owned reports whether path is a directory of the caller's that no one
// else can write.
func owned(path string) bool {
	var st unix.Stat_t
	return unix.Stat(path, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR &&
		int(st.Uid) == os.Geteuid() && st.Mode&0o022 == 0
}

// Dir is a directory held open, whose owner and mode were checked through
// its descriptor.
type Dir struct {
	path string
	f    *os.File
}

// OpenBase creates the state base at path or opens the one there, and
// checks it: a directory, not a symlink, owned by the caller,
// writable by no one else, in a parent that only its owner (the caller or
// root) can change or that is sticky (as /tmp is). A base it creates is
// mode 0711: no one else may list or change it, but a share's user may
// pass through it to the FUSE mount in a nas's run directory (whose
// random name they must be told).
func OpenBase(path string) (*Dir, error) {
	parent := filepath.Dir(path)
	var st unix.Stat_t
	if err := unix.Stat(parent, &st); err != nil {
		return nil, fmt.Errorf("state base %s: %w", path, &fs.PathError{Op: "stat", Path: parent, Err: err})
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return nil, fmt.Errorf("%w: %s: not a directory", ErrUnsafe, parent)
	case int(st.Uid) != os.Geteuid() && st.Uid != 0:
		return nil, fmt.Errorf("%w: %s, the parent of the state base, belongs to uid %d", ErrUnsafe, parent, st.Uid)
	case st.Mode&0o022 != 0 && st.Mode&unix.S_ISVTX == 0:
		return nil, fmt.Errorf("%w: %s, the parent of the state base, is writable by others and not sticky", ErrUnsafe, parent)
	}
	created := true
	if err := unix.Mkdir(path, 0o711); errors.Is(err, unix.EEXIST) {
		created = false
	} else if err != nil {
		return nil, fmt.Errorf("state base: %w", &fs.PathError{Op: "mkdir", Path: path, Err: err})
	}
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, openError(path, err)
	}
	d := &Dir{path: path, f: os.NewFile(uintptr(fd), path)}
	if created {
		// mkdir's mode went through the umask; set it whole.
		if err := unix.Fchmod(fd, 0o711); err != nil {
			d.Close()
			return nil, fmt.Errorf("state base: %w", &fs.PathError{Op: "chmod", Path: path, Err: err})
		}
	}
	if err := d.check(0o022); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// Open opens an existing directory the caller owns and no one else can
// write; path's last element must not be a symlink.
func Open(path string) (*Dir, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, openError(path, err)
	}
	d := &Dir{path: path, f: os.NewFile(uintptr(fd), path)}
	if err := d.check(0o022); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// openError explains a failed open of a directory that must not be a
// symlink.
func openError(path string, err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		return fmt.Errorf("%w: %s is a symlink or not a directory", ErrUnsafe, path)
	}
	return &fs.PathError{Op: "open", Path: path, Err: err}
}

// check verifies, through the descriptor, that d is a directory owned by
// the caller with none of the mode bits in forbidden.
func (d *Dir) check(forbidden uint32) error {
	var st unix.Stat_t
	if err := unix.Fstat(int(d.f.Fd()), &st); err != nil {
		return &fs.PathError{Op: "stat", Path: d.path, Err: err}
	}
	switch {
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return fmt.Errorf("%w: %s is not a directory", ErrUnsafe, d.path)
	case int(st.Uid) != os.Geteuid():
		return fmt.Errorf("%w: %s belongs to uid %d, not to this process (uid %d)", ErrUnsafe, d.path, st.Uid, os.Geteuid())
	case uint32(st.Mode)&forbidden != 0:
		return fmt.Errorf("%w: %s has mode %04o: others may write it", ErrUnsafe, d.path, st.Mode&0o7777)
	}
	return nil
}

// Path returns the directory's path.
func (d *Dir) Path() string { return d.path }

// Join returns the path of name in the directory.
func (d *Dir) Join(name string) string { return filepath.Join(d.path, name) }

// Close closes the directory's descriptor.
func (d *Dir) Close() error { return d.f.Close() }

// Mkdir creates the subdirectory name with mode perm (exactly, whatever
// the umask) and opens it. It fails if anything is at name already.
func (d *Dir) Mkdir(name string, perm os.FileMode) (*Dir, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	path := d.Join(name)
	if err := unix.Mkdirat(int(d.f.Fd()), name, 0o700); err != nil {
		return nil, &fs.PathError{Op: "mkdir", Path: path, Err: err}
	}
	fd, err := unix.Openat(int(d.f.Fd()), name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, openError(path, err)
	}
	sub := &Dir{path: path, f: os.NewFile(uintptr(fd), path)}
	if err := unix.Fchmod(fd, uint32(perm.Perm())); err != nil {
		sub.Close()
		return nil, &fs.PathError{Op: "chmod", Path: path, Err: err}
	}
	if err := sub.check(0o022); err != nil {
		sub.Close()
		return nil, err
	}
	return sub, nil
}

// MkdirTemp creates a new subdirectory named prefix followed by random
// characters, with mode perm, and opens it.
func (d *Dir) MkdirTemp(prefix string, perm os.FileMode) (*Dir, error) {
	for range 100 {
		var b [6]byte
		rand.Read(b[:])
		sub, err := d.Mkdir(prefix+hex.EncodeToString(b[:]), perm)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return sub, err
	}
	return nil, fmt.Errorf("state directory: no free name %s* in %s", prefix, d.path)
}

// Create creates the file name, which must not exist yet, for writing,
// with mode perm exactly: never through a symlink, never over a file that
// was there.
func (d *Dir) Create(name string, perm os.FileMode) (*os.File, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	path := d.Join(name)
	fd, err := unix.Openat(int(d.f.Fd()), name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return nil, &fs.PathError{Op: "create", Path: path, Err: err}
	}
	if err := unix.Fchmod(fd, uint32(perm.Perm())); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "chmod", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}

// WriteFile creates the file name (see Create) and writes data to it.
func (d *Dir) WriteFile(name string, data []byte, perm os.FileMode) error {
	f, err := d.Create(name, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

// Chmod sets the directory's mode (through its descriptor).
func (d *Dir) Chmod(perm os.FileMode) error {
	if err := unix.Fchmod(int(d.f.Fd()), uint32(perm.Perm())); err != nil {
		return &fs.PathError{Op: "chmod", Path: d.path, Err: err}
	}
	return nil
}

// checkName refuses names that are not one plain element.
func checkName(name string) error {
	if name == "" || name == "." || name == ".." || filepath.Base(name) != name {
		return fmt.Errorf("state directory: %q is not a plain file name", name)
	}
	return nil
}

// RemoveAll closes the directory and removes it and everything in it
// (os.RemoveAll follows no symlink below the top).
func (d *Dir) RemoveAll() error {
	d.Close()
	return os.RemoveAll(d.path)
}
