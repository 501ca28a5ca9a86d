package bench

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/nasemu/nasemu/models"
)

// PathFactory returns the factory of local paths (scheme "file"; a bare
// path needs no scheme): a directory, a regular file or a block device.
func PathFactory() Factory {
	return Factory{Scheme: "file", Usage: "PATH", Open: func(addr, rest string, _ OpenOptions) (Target, error) {
		return OpenPath(rest)
	}}
}

// pathKind is what a path target is.
type pathKind uint8

const (
	kindDir pathKind = iota
	kindFile
	kindDevice
)

// Path is a local path target in wall-clock time. In a directory, each job
// file is a file of its own (created and laid out as fio does: written
// when reads need data, otherwise sized). A regular file or a block device
// is every job's file: jobs address its first size bytes.
type Path struct {
	path     string
	kind     pathKind
	size     int64  // of a file or device
	readOnly string // why the target cannot be written, or ""
	clock    *WallClock
	undo     undoLog
	// noCreateFsync: layouts leave what they write unsynced (fio's
	// create_fsync=0; see fileMaker).
	noCreateFsync bool
}

var _ Target = (*Path)(nil)

// OpenPath opens a path target. The path must exist.
func OpenPath(path string) (*Path, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrTarget, err)
	}
	p := &Path{path: path, clock: NewWallClock()}
	switch m := fi.Mode(); {
	case m.IsDir():
		p.kind = kindDir
	case m.IsRegular():
		p.kind, p.size = kindFile, fi.Size()
	case m&os.ModeDevice != 0 && m&os.ModeCharDevice == 0:
		p.kind = kindDevice
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrTarget, err)
		}
		p.size, err = f.Seek(0, io.SeekEnd)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("%w: %s: size of block device: %w", ErrTarget, path, err)
		}
	default:
		return nil, fmt.Errorf("%w: %s is neither a directory, a regular file nor a block device", ErrTarget, path)
	}
	switch {
	case fi.Mode().Perm()&0o222 == 0:
		p.readOnly = "it has no write permission"
	case readOnlyFS(path):
		p.readOnly = "its file system is mounted read-only"
	}
	return p, nil
}

// Name implements Target.
func (p *Path) Name() string { return p.path }

// Mode implements Target.
func (p *Path) Mode() Mode { return Real }

// Clock implements Target.
func (p *Path) Clock() Clock { return p.clock }

// Close implements Target.
func (p *Path) Close() error { return nil }

func (p *Path) file(name string) string {
	if p.kind == kindDir {
		return filepath.Join(p.path, filepath.FromSlash(name))
	}
	return p.path
}

func (p *Path) errReadOnly(what string) error {
	return fmt.Errorf("%w: %s is read-only (%s) but %s", ErrTarget, p.path, p.readOnly, what)
}

// Layout implements Target. Before it writes, it checks that the file
// system has room for what the file still lacks (and for what earlier
// sparse layouts of the run will fill), then preallocates as the job's
// Fallocate says and, with fill, writes the missing bytes. Files and
// directories it creates are remembered for Cleanup.
func (p *Path) Layout(name string, size int64, fill bool) (int64, error) {
	return p.LayoutWith(name, size, fill, FallocateNative)
}

// LayoutWith is Layout with fio's fallocate mode.
func (p *Path) LayoutWith(name string, size int64, fill bool, mode Fallocate) (int64, error) {
	if size == 0 {
		if p.kind == kindDir {
			return 0, fmt.Errorf("%w: %s is a directory: the job needs size= or filesize=", ErrJob, p.path)
		}
		return p.size, nil
	}
	path := p.file(name)
	have, allocated := int64(0), int64(0)
	fi, statErr := os.Stat(path)
	if statErr == nil {
		have = fi.Size()
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			allocated = st.Blocks * 512
		}
	}
	if p.kind == kindDevice {
		have = p.size
	}
	if have >= size {
		return size, nil
	}
	if p.kind == kindDevice {
		return 0, fmt.Errorf("%w: %s holds %d bytes, the job needs %d", ErrTarget, p.path, p.size, size)
	}
	if p.readOnly != "" {
		return 0, p.errReadOnly(fmt.Sprintf("%s must be laid out to %d bytes", name, size))
	}
	if err := p.reserve(path, size-min(allocated, size)); err != nil {
		return 0, err
	}
	if err := p.mkdirAll(filepath.Dir(path)); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrTarget, err)
	}
	var f *os.File
	err := p.create(path, false, func() (bool, error) {
		var err error
		f, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		return err == nil && errors.Is(statErr, fs.ErrNotExist), err
	})
	if err != nil {
		if errors.Is(err, errCleanedUp) {
			return 0, err
		}
		return 0, fmt.Errorf("%w: %w", ErrTarget, err)
	}
	defer f.Close()
	if err := p.fill(f, have, size, fill, mode); err != nil {
		if errors.Is(statErr, fs.ErrNotExist) {
			os.Remove(path) // a file half laid out is no use to a later run
		}
		return 0, fmt.Errorf("laying out %s: %w", path, err)
	}
	// What the layout allocated shows in statfs from now on: only sparse
	// bytes stay promised.
	if st, err := f.Stat(); err == nil {
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			p.unreserve(min(sys.Blocks*512, size) - min(allocated, size))
		}
	}
	return size, nil
}

// fill preallocates f's bytes from have to size and, with data, writes
// them.
func (p *Path) fill(f *os.File, have, size int64, data bool, mode Fallocate) error {
	if err := preallocate(f, have, size, mode); err != nil {
		return err
	}
	if !data {
		return f.Truncate(size)
	}
	return writeLayout(f, have, size, !p.noCreateFsync)
}

// writeLayout writes f's bytes from `from` to `to` with data seeded by
// `to`, then, with sync, syncs it: what a layout lays out.
func writeLayout(f *os.File, from, to int64, sync bool) error {
	buf := alignedBuffer(1<<20, rand.New(rand.NewPCG(uint64(to), 0x1a7)))
	for off := from; off < to; {
		n := min(int64(len(buf)), to-off)
		if _, err := f.WriteAt(buf[:n], off); err != nil {
			return err
		}
		off += n
	}
	if !sync {
		return nil
	}
	return f.Sync()
}

// Open implements Target.
func (p *Path) Open(at time.Duration, name string, size int64, flags OpenFlags) (File, time.Duration, error) {
	if flags.Write && p.readOnly != "" {
		return nil, at, p.errReadOnly("the job writes")
	}
	mode := syscall.O_RDONLY
	if flags.Write {
		mode = syscall.O_RDWR
	}
	create := flags.Create && p.kind == kindDir
	if create {
		mode |= syscall.O_CREAT | syscall.O_TRUNC
	}
	if flags.WriteThrough {
		mode |= os.O_SYNC
	}
	if flags.Direct {
		mode |= oDirect
	}
	path := p.file(name)
	if flags.Create && p.kind == kindDir {
		if p.readOnly != "" {
			return nil, at, p.errReadOnly("the job creates files")
		}
		if err := p.mkdirAll(filepath.Dir(path)); err != nil {
			return nil, at, fmt.Errorf("%w: %w", ErrTarget, err)
		}
	}
	fd, err := -1, error(syscall.EEXIST)
	if create { // a file that is new is the run's to remove on failure
		err = p.create(path, false, func() (bool, error) {
			var err error
			fd, err = syscall.Open(path, mode|syscall.O_EXCL|syscall.O_CLOEXEC, 0o644)
			return err == nil, err
		})
		if errors.Is(err, errCleanedUp) {
			return nil, at, err
		}
	}
	if errors.Is(err, syscall.EEXIST) {
		fd, err = syscall.Open(path, mode|syscall.O_CLOEXEC, 0o644)
	}
	if err != nil {
		switch {
		case errors.Is(err, syscall.EROFS), errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
			return nil, at, fmt.Errorf("%w: open %s: %w", ErrTarget, path, err)
		case flags.Direct && errors.Is(err, syscall.EINVAL):
			return nil, at, fmt.Errorf("%w: %s: the file system does not support O_DIRECT (direct=1; try --direct=0)", ErrTarget, path)
		}
		return nil, at, fmt.Errorf("open %s: %w", path, err)
	}
	return &pathFile{fd: fd, path: path, clock: p.clock}, p.clock.Now(), nil
}

// Remove implements Target.
func (p *Path) Remove(at time.Duration, name string) (time.Duration, error) {
	if p.kind != kindDir {
		return at, nil // the target itself is never removed
	}
	if err := os.Remove(p.file(name)); err != nil {
		return at, err
	}
	return p.clock.Now(), nil
}

// invalidator is a file whose cached pages can be dropped (fio's
// invalidate).
type invalidator interface{ invalidate() error }

var (
	_ invalidator = (*pathFile)(nil)
	_ diskStater  = (*Path)(nil)
	_ diskStater  = (*Sim)(nil)
)

// pathFile is an open local file: pread and pwrite at explicit offsets,
// safe for concurrent use.
type pathFile struct {
	fd    int
	path  string
	clock *WallClock
}

// Do implements File.
func (f *pathFile) Do(_ time.Duration, op models.Op, off, n int64, buf []byte) (time.Duration, error) {
	var err error
	switch op {
	case models.Read:
		for done := 0; done < len(buf) && err == nil; {
			var k int
			k, err = syscall.Pread(f.fd, buf[done:], off+int64(done))
			if k == 0 && err == nil {
				err = fmt.Errorf("%s: end of file at %d", f.path, off+int64(done))
			}
			done += k
		}
	case models.Write:
		for done := 0; done < len(buf) && err == nil; {
			var k int
			k, err = syscall.Pwrite(f.fd, buf[done:], off+int64(done))
			done += k
		}
	case models.Flush:
		err = syscall.Fsync(f.fd)
	default:
		err = fmt.Errorf("%w: %v on a local file", models.ErrInvalid, op)
	}
	if err != nil {
		return f.clock.Now(), fmt.Errorf("%v %s [%d, +%d): %w", op, f.path, off, n, err)
	}
	return f.clock.Now(), nil
}

// Close implements File.
func (f *pathFile) Close(time.Duration) (time.Duration, error) {
	err := syscall.Close(f.fd)
	return f.clock.Now(), err
}
