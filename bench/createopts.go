package bench

import (
	"errors"
	"io/fs"
	"os"
)

// fileMaker is implemented by targets that lay files out (Sim, Path) and
// so honour fio's options on how a job's files come to be.
type fileMaker interface {
	// exists reports whether the named file is there to be used without
	// creating it (fio's allow_file_create=0 fails a job whose file is
	// not). A target that is one file or device always holds it.
	exists(name string) (bool, error)
	// setCreateFsync says whether the layouts that follow fsync the files
	// they write (fio's create_fsync, on by default). Off, the written
	// data is left to be written back under the job's I/O.
	setCreateFsync(on bool)
}

var (
	_ fileMaker = (*Sim)(nil)
	_ fileMaker = (*Path)(nil)
)

func (s *Sim) exists(name string) (bool, error) { return s.space.File(name) != nil, nil }

func (s *Sim) setCreateFsync(on bool) { s.noCreateFsync = !on }

func (p *Path) exists(name string) (bool, error) {
	if p.kind != kindDir {
		return true, nil
	}
	_, err := os.Stat(p.file(name))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

func (p *Path) setCreateFsync(on bool) { p.noCreateFsync = !on }
