package emu

import (
	"errors"
	"fmt"
	"os"
)

// FileStore keeps a volume's bytes in a file: sparse where never written,
// durable on Sync (fsync), and surviving the emulator's restart.
type FileStore struct {
	f    *os.File
	size int64
}

var (
	_ Store   = (*FileStore)(nil)
	_ Trimmer = (*FileStore)(nil)
)

// OpenFileStore opens (creating if needed) the file at path as a store of
// the given size. An existing file keeps its contents; a larger one is an
// error (it may hold another volume), a smaller one is extended sparsely.
// The store holds an exclusive lock on the file until Close: a file that
// another store (of this process or another) has open is an *InUseError.
func OpenFileStore(path string, size int64) (*FileStore, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("backing file: %w", err)
	}
	if err := Lock(f, path); err != nil {
		f.Close()
		return nil, fmt.Errorf("backing file: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("backing file: %w", err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("backing file %s: not a regular file", path)
	}
	if st.Size() > size {
		f.Close()
		return nil, fmt.Errorf("backing file %s holds %d bytes, more than the volume's %d: refusing to truncate it", path, st.Size(), size)
	}
	if st.Size() < size {
		if err := f.Truncate(size); err != nil {
			f.Close()
			return nil, fmt.Errorf("backing file %s: %w", path, err)
		}
	}
	return &FileStore{f: f, size: size}, nil
}

// Size implements Store.
func (s *FileStore) Size() int64 { return s.size }

// ReadAt implements io.ReaderAt.
func (s *FileStore) ReadAt(p []byte, off int64) (int, error) {
	if err := checkRange(off, int64(len(p)), s.size); err != nil {
		return 0, err
	}
	n, err := s.f.ReadAt(p, off)
	if errors.Is(err, os.ErrClosed) {
		err = ErrClosed
	}
	return n, err
}

// WriteAt implements io.WriterAt.
func (s *FileStore) WriteAt(p []byte, off int64) (int, error) {
	if err := checkRange(off, int64(len(p)), s.size); err != nil {
		return 0, err
	}
	n, err := s.f.WriteAt(p, off)
	if errors.Is(err, os.ErrClosed) {
		err = ErrClosed
	}
	return n, err
}

// Sync implements Store with fsync.
func (s *FileStore) Sync() error {
	if err := s.f.Sync(); err != nil {
		if errors.Is(err, os.ErrClosed) {
			return ErrClosed
		}
		return err
	}
	return nil
}

// Trim implements Trimmer by punching a hole; where the filesystem cannot,
// it writes zeros.
func (s *FileStore) Trim(off, n int64) error {
	if err := checkRange(off, n, s.size); err != nil {
		return err
	}
	if punchHole(s.f, off, n) == nil {
		return nil
	}
	return writeZeros(s.f, off, n)
}

// Close implements Store.
func (s *FileStore) Close() error { return s.f.Close() }
