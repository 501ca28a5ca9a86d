package bench

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
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
// From then on the target creates nothing: a run still going fails
// instead of leaving a file behind.
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

// spaceReserver is implemented by targets that check free space before
// a run writes (Path). reserveFile promises what a file the run will
// create and fill later still needs (a file-by-file upload's, created in
// the timed phase) or fails, naming the shortfall, when the file system
// does not have it beside earlier promises; it returns the bytes
// promised, which unreserve gives back once they are written.
type spaceReserver interface {
	reserveFile(name string, size int64) (int64, error)
	unreserve(n int64)
}

var (
	_ FallocateLayouter = (*Path)(nil)
	_ Cleaner           = (*Path)(nil)
	_ spaceReserver     = (*Path)(nil)
)

// undoLog records what a path target created, and the bytes its sparse
// layouts will still take when the run writes them.
type undoLog struct {
	// removing is held for the whole of a Cleanup: a second Cleanup (an
	// interrupted run's signal handler and its failing main path both
	// clean up) returns only when the first has removed everything.
	removing sync.Mutex
	mu       sync.Mutex
	files    []string
	dirs     []string
	promised int64
	closed   bool            // Cleanup has run: nothing more is created
	seen     map[string]bool // files and dirs recorded, each once
	ranges   []deviceRange
}

// errCleanedUp is what creating a file fails with once Cleanup has run.
var errCleanedUp = errors.New("the run is being stopped and its files removed")

// create runs mk, which creates path (a file, or a directory with dir)
// and reports whether it did, and records what it created, as one step
// that Cleanup cannot come between: what a run creates is either removed
// by Cleanup or never created.
func (p *Path) create(path string, dir bool, mk func() (bool, error)) error {
	p.undo.mu.Lock()
	defer p.undo.mu.Unlock()
	if p.undo.closed {
		return fmt.Errorf("%s: %w", path, errCleanedUp) // an interruption, not a bad target
	}
	made, err := mk()
	if made && !p.undo.seen[path] { // a file created again after a delete is recorded once
		if p.undo.seen == nil {
			p.undo.seen = map[string]bool{}
		}
		p.undo.seen[path] = true
		if dir {
			p.undo.dirs = append(p.undo.dirs, path)
		} else {
			p.undo.files = append(p.undo.files, path)
		}
	}
	return err
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
		err := p.create(d, true, func() (bool, error) {
			err := os.Mkdir(d, 0o755)
			if errors.Is(err, fs.ErrExist) {
				return false, nil
			}
			return err == nil, err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Cleanup implements Cleaner: files first, newest first, then the
// directories the run made, deepest first, if they are empty.
func (p *Path) Cleanup() error {
	p.undo.removing.Lock()
	defer p.undo.removing.Unlock()
	p.undo.mu.Lock()
	files, dirs := p.undo.files, p.undo.dirs
	p.undo.files, p.undo.dirs, p.undo.promised, p.undo.seen = nil, nil, 0, nil
	p.undo.closed = true
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

// reserveFile implements spaceReserver.
func (p *Path) reserveFile(name string, size int64) (int64, error) {
	if p.kind != kindDir {
		return 0, nil // the target file or device: its size is checked when laid out
	}
	path := p.file(name)
	allocated := int64(0)
	if fi, err := os.Stat(path); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			allocated = st.Blocks * 512
		}
	}
	need := size - min(allocated, size)
	if err := p.reserve(path, need); err != nil {
		return 0, err
	}
	return max(need, 0), nil
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

// RangeLayouter is implemented by targets that can stand in for a block
// device with a sparse file (Path on a directory): a job that names a
// device (/dev/sdb) and an offset lays out only its own range, as a
// device has its blocks everywhere without anything being written.
type RangeLayouter interface {
	LayoutRange(name string, from, to int64, fill bool, mode Fallocate) error
}

var _ RangeLayouter = (*Path)(nil)

// deviceRange is a range of a device's stand-in file that a run laid out.
type deviceRange struct {
	name     string
	from, to int64
	data     bool
}

// LayoutRange implements RangeLayouter: the file is extended sparsely to
// to, and only [from, to) is preallocated (fio's fallocate mode) and,
// with fill, written; free space is needed for that range only. A range
// laid out before in the run is left as it is (a later job reads what an
// earlier one wrote).
func (p *Path) LayoutRange(name string, from, to int64, fill bool, mode Fallocate) error {
	if p.kind != kindDir || from == 0 {
		_, err := p.LayoutWith(name, to, fill, mode)
		return err
	}
	path := p.file(name)
	p.undo.mu.Lock()
	done := slices.ContainsFunc(p.undo.ranges, func(r deviceRange) bool {
		return r.name == path && r.from <= from && r.to >= to && (r.data || !fill)
	})
	p.undo.mu.Unlock()
	if done {
		return nil
	}
	if p.readOnly != "" {
		return p.errReadOnly(fmt.Sprintf("%s must be laid out from %d to %d", name, from, to))
	}
	if err := p.reserve(path, to-from); err != nil {
		return err
	}
	if err := p.mkdirAll(filepath.Dir(path)); err != nil {
		return fmt.Errorf("%w: %w", ErrTarget, err)
	}
	_, statErr := os.Stat(path)
	var f *os.File
	err := p.create(path, false, func() (bool, error) {
		var err error
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		return err == nil && errors.Is(statErr, fs.ErrNotExist), err
	})
	if err != nil {
		if errors.Is(err, errCleanedUp) {
			return err
		}
		return fmt.Errorf("%w: %w", ErrTarget, err)
	}
	defer f.Close()
	err = p.fillRange(f, from, to, fill, mode)
	if err != nil {
		return fmt.Errorf("laying out %s from %d to %d: %w", path, from, to, err)
	}
	if fill || mode != FallocateNone {
		p.unreserve(to - from) // allocated: statfs shows it from now on
	}
	p.undo.mu.Lock()
	p.undo.ranges = append(p.undo.ranges, deviceRange{path, from, to, fill})
	p.undo.mu.Unlock()
	return nil
}

// fillRange extends f sparsely to to, preallocates [from, to) and, with
// data, writes it.
func (p *Path) fillRange(f *os.File, from, to int64, data bool, mode Fallocate) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() < to {
		if err := f.Truncate(to); err != nil {
			return err
		}
	}
	if err := preallocate(f, from, to, mode); err != nil {
		return err
	}
	if !data {
		return nil
	}
	return writeLayout(f, from, to, !p.noCreateFsync)
}
