package bench

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/nasemu/nasemu/models"
)

// This file is the seam between the runner and what fio's non-block
// engines (filecreate, filestat, filedelete, dircreate, dirstat,
// dirdelete, ftruncate, falloc) and trims need of a target beyond Target
// and File: operations on whole files and directories, and on ranges of
// an open file. A target or file that lacks them makes such a job fail
// with a message that says so.

// fileOpTarget is a target on which files and directories can be
// created, stat'ed and deleted one at a time.
type fileOpTarget interface {
	// prepare makes name exist (as a file of size bytes, or a directory)
	// for the engines that stat or delete it, or not exist for those
	// that create it; untimed, like fio's layout.
	prepare(e IOKind, name string, size int64) error
	// fileOp performs engine e's operation on name at time at.
	fileOp(at time.Duration, e IOKind, name string, size int64) (time.Duration, error)
}

// rangeFile is an open file whose ranges can be truncated, allocated and
// punched (discarded).
type rangeFile interface {
	truncate(at time.Duration, size int64) (time.Duration, error)
	allocate(at time.Duration, off, n int64, keepSize bool) (time.Duration, error)
	punch(at time.Duration, off, n int64) (time.Duration, error)
}

// unwrapTarget returns the target under wrappers (a progress display)
// that have an Unwrap method.
func unwrapTarget(t Target) Target {
	for {
		u, ok := t.(interface{ Unwrap() Target })
		if !ok {
			return t
		}
		t = u.Unwrap()
	}
}

// unwrapFile returns the file under wrappers that have an Unwrap method.
func unwrapFile(f File) File {
	for {
		u, ok := f.(interface{ Unwrap() File })
		if !ok {
			return f
		}
		f = u.Unwrap()
	}
}

var (
	_ fileOpTarget = (*Sim)(nil)
	_ fileOpTarget = (*Path)(nil)
	_ rangeFile    = (*simFile)(nil)
	_ rangeFile    = (*pathFile)(nil)
)

// engineOp is the model operation of a file engine.
func engineOp(e IOKind) models.Op {
	switch e {
	case KindFileCreate, KindDirCreate:
		return models.Create
	case KindFileDelete, KindDirDelete:
		return models.Remove
	}
	return models.Stat
}

// prepare implements fileOpTarget: a directory is a name of no size in
// the device's space.
func (s *Sim) prepare(e IOKind, name string, size int64) error {
	switch e {
	case KindFileCreate, KindDirCreate:
		s.space.Release(name)
	case KindDirStat, KindDirDelete:
		if s.space.File(name) == nil {
			_, err := s.space.Allocate(name, 0)
			return err
		}
	default:
		if e := s.space.File(name); e == nil || e.Size < size {
			_, err := s.space.Allocate(name, size)
			return err
		}
	}
	return nil
}

// fileOp implements fileOpTarget: the operation goes to the model, whose
// file layers (a NAS, SMB) charge for it.
func (s *Sim) fileOp(at time.Duration, e IOKind, name string, size int64) (time.Duration, error) {
	ext := s.space.File(name)
	switch e {
	case KindFileCreate, KindDirCreate:
		if e == KindDirCreate {
			size = 0
		}
		var err error
		if ext == nil || ext.Size < size {
			if ext, err = s.space.Allocate(name, size); err != nil {
				return at, err
			}
		}
	case KindFileDelete, KindDirDelete, KindFileStat, KindDirStat:
		if ext == nil {
			return at, fmt.Errorf("%w: %s: no %s", ErrTarget, s.name, name)
		}
	}
	done, err := s.dev.Submit(at, models.Request{Op: engineOp(e), Offset: ext.Base, Length: ext.Size})
	if e == KindFileDelete || e == KindDirDelete {
		s.space.Release(name)
	}
	return done, err
}

// prepare implements fileOpTarget.
func (p *Path) prepare(e IOKind, name string, size int64) error {
	if p.kind != kindDir {
		return fmt.Errorf("%w: %s is not a directory: ioengine %s creates, stats or deletes files in one", ErrTarget, p.path, e)
	}
	path := p.file(name)
	if p.readOnly != "" && e != KindFileStat && e != KindDirStat {
		return p.errReadOnly("the job creates or deletes files")
	}
	switch e {
	case KindFileCreate, KindDirCreate:
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w: %w", ErrTarget, err)
		}
		return p.mkdirAll(parentDir(path))
	case KindDirStat, KindDirDelete:
		return p.mkdirAll(path)
	}
	_, err := p.Layout(name, size, false)
	return err
}

// fileOp implements fileOpTarget.
func (p *Path) fileOp(_ time.Duration, e IOKind, name string, _ int64) (time.Duration, error) {
	path := p.file(name)
	var err error
	switch e {
	case KindFileCreate: // the run's to remove if it fails
		err = p.create(path, false, func() (bool, error) {
			_, statErr := os.Lstat(path)
			f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
			if err != nil {
				return false, err
			}
			return errors.Is(statErr, fs.ErrNotExist), f.Close()
		})
	case KindDirCreate:
		err = p.create(path, true, func() (bool, error) {
			err := os.Mkdir(path, 0o755)
			return err == nil, err
		})
	case KindFileStat, KindDirStat:
		_, err = os.Stat(path)
	default:
		err = os.Remove(path)
	}
	return p.clock.Now(), err
}

func parentDir(path string) string {
	for i := len(path) - 1; i > 0; i-- {
		if path[i] == os.PathSeparator {
			return path[:i]
		}
	}
	return "."
}

// truncate implements rangeFile: cutting a file discards its tail (a
// trim of it) and changes its size (a metadata operation).
func (f *simFile) truncate(at time.Duration, size int64) (time.Duration, error) {
	if size < f.e.Size {
		var err error
		if at, err = f.dev.Submit(at, models.Request{Op: models.Trim, Offset: f.e.Base + size, Length: f.e.Size - size}); err != nil {
			return at, err
		}
	}
	return f.dev.Submit(at, models.Request{Op: models.Stat, Offset: f.e.Base, Length: f.e.Size})
}

// allocate implements rangeFile: allocating without data is a metadata
// operation for the model.
func (f *simFile) allocate(at time.Duration, _, _ int64, _ bool) (time.Duration, error) {
	return f.dev.Submit(at, models.Request{Op: models.Stat, Offset: f.e.Base, Length: f.e.Size})
}

// punch implements rangeFile: a hole is a trim.
func (f *simFile) punch(at time.Duration, off, n int64) (time.Duration, error) {
	return f.dev.Submit(at, models.Request{Op: models.Trim, Offset: f.e.Base + off, Length: n})
}
