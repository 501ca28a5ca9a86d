package bench

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
)

// Fallocate is how a path target preallocates a file it lays out: fio's
// fallocate option. Preallocation makes a run that does not fit fail at
// once with ENOSPC instead of after writing until the disk is full, and
// gives the file its blocks before the timed phase, as fio does.
type Fallocate string

// Fallocate modes.
const (
	// FallocateNative is the zero value and fio's default on Linux:
	// fallocate(2) allocates the blocks (as unwritten extents); where the
	// file system cannot, the file is laid out without preallocation.
	FallocateNative Fallocate = ""
	// FallocatePosix is posix_fallocate(3): fallocate(2), or zeros
	// written where the file system cannot allocate.
	FallocatePosix Fallocate = "posix"
	// FallocateKeep allocates the blocks without changing the file's size
	// (FALLOC_FL_KEEP_SIZE); the size is then set by truncating.
	FallocateKeep Fallocate = "keep"
	// FallocateNone does not preallocate: the file is sized by truncating
	// (sparse) or written, as fio's none and truncate.
	FallocateNone Fallocate = "none"
)

// ParseFallocate returns the mode fio's fallocate=v selects.
func ParseFallocate(v string) (Fallocate, error) {
	switch v {
	case "native":
		return FallocateNative, nil
	case "posix", "1":
		return FallocatePosix, nil
	case "keep":
		return FallocateKeep, nil
	case "none", "truncate", "0":
		return FallocateNone, nil
	}
	return "", fmt.Errorf("fallocate %q is not supported (native, posix, keep, none, truncate, 0 or 1)", v)
}

func (m Fallocate) valid() bool {
	return slices.Contains([]Fallocate{FallocateNative, FallocatePosix, FallocateKeep, FallocateNone}, m)
}

// FallocateLayouter is implemented by targets that preallocate the files
// they lay out (Path); Layout is LayoutWith in the default mode.
type FallocateLayouter interface {
	LayoutWith(name string, size int64, fill bool, mode Fallocate) (int64, error)
}

// Cleaner is implemented by targets that create files on the host's
// storage (Path). Cleanup removes every file and directory the target
// created since it was opened, for a run that failed or was interrupted;
// it may be called while I/O is still in flight (from a signal handler).
type Cleaner interface {
	Cleanup() error
}

// TargetUnwrapper is implemented by targets that wrap another (a
// progress meter), so that the runner finds its optional interfaces.
type TargetUnwrapper interface {
	Unwrap() Target
}

// layout lays a file out on t, in fio's fallocate mode where the target
// preallocates.
func layout(t Target, name string, size int64, fill bool, mode Fallocate) (int64, error) {
	if l, ok := unwrapTarget(t).(FallocateLayouter); ok {
		return l.LayoutWith(name, size, fill, mode)
	}
	return t.Layout(name, size, fill)
}

var (
	_ FallocateLayouter = (*Path)(nil)
	_ Cleaner           = (*Path)(nil)
)

// undoLog records what a path target created, and the bytes its sparse
// layouts will still take when the run writes them.
type undoLog struct {
	mu       sync.Mutex
	files    []string
	dirs     []string
	promised int64
}

// created records a file or directory the run created.
func (p *Path) created(path string, dir bool) {
	p.undo.mu.Lock()
	defer p.undo.mu.Unlock()
	if dir {
		p.undo.dirs = append(p.undo.dirs, path)
	} else {
		p.undo.files = append(p.undo.files, path)
	}
}

// mkdirAll makes dir and its missing parents, remembering those it made.
func (p *Path) mkdirAll(dir string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || d == filepath.Dir(d) {
			break
		}
		missing = append(missing, d)
	}
	for _, d := range slices.Backward(missing) {
		if err := os.Mkdir(d, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		p.created(d, true)
	}
	return nil
}

// Cleanup implements Cleaner: files first, newest first, then the
// directories the run made, deepest first, if they are empty.
func (p *Path) Cleanup() error {
	p.undo.mu.Lock()
	files, dirs := p.undo.files, p.undo.dirs
	p.undo.files, p.undo.dirs, p.undo.promised = nil, nil, 0
	p.undo.mu.Unlock()
	var errs []error
	for _, f := range slices.Backward(files) {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	for _, d := range slices.Backward(dirs) {
		if err := os.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Created returns the files the target created since it was opened (or
// last cleaned up).
func (p *Path) Created() []string {
	p.undo.mu.Lock()
	defer p.undo.mu.Unlock()
	return slices.Clone(p.undo.files)
}

// reserve checks that the file system holding path has need more bytes
// free, beyond what earlier sparse layouts of the run will fill, and
// promises them.
func (p *Path) reserve(path string, need int64) error {
	if need <= 0 {
		return nil
	}
	dir := filepath.Dir(path)
	for { // the nearest directory that exists: the rest is laid out later
		if _, err := os.Stat(dir); err == nil || dir == filepath.Dir(dir) {
			break
		}
		dir = filepath.Dir(dir)
	}
	free, err := freeBytes(dir)
	if err != nil {
		return nil // no figure (another system): the layout finds out
	}
	p.undo.mu.Lock()
	defer p.undo.mu.Unlock()
	if want := need + p.undo.promised; want > free {
		earlier := ""
		if p.undo.promised > 0 {
			earlier = fmt.Sprintf(" (with %s for files laid out earlier in the run)", formatSize(p.undo.promised))
		}
		return fmt.Errorf("%w: %s: not enough free space for %s: it needs %s more%s, the file system has %s free: %s short",
			ErrTarget, p.path, path, formatSize(want), earlier, formatSize(free), formatSize(want-free))
	}
	p.undo.promised += need
	return nil
}

// unreserve takes back n promised bytes that the file system now counts
// as used.
func (p *Path) unreserve(n int64) {
	p.undo.mu.Lock()
	defer p.undo.mu.Unlock()
	p.undo.promised = max(p.undo.promised-max(n, 0), 0)
}

// formatSize writes bytes for people in binary units.
func formatSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}
