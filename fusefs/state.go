package fusefs

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"

	"github.com/nasemu/nasemu/emu/extent"
)

// StateFile is the name, in the backing directory, of the saved extent
// allocator. The share does not show it.
const StateFile = ".nasemu-extents"

// seekData and seekHole are lseek's whence values for sparse files.
const (
	seekData = 3
	seekHole = 4
)

// loadState returns the allocator for a backing directory: the saved one
// when it matches the volume's geometry, reconciled with the files as they
// are now; a fresh layout of the files otherwise.
func loadState(backing string, capacity int64, log *slog.Logger) (*extent.Allocator, error) {
	var a *extent.Allocator
	data, err := os.ReadFile(filepath.Join(backing, StateFile))
	switch {
	case err == nil:
		a, err = extent.Unmarshal(data)
		if err == nil && a.Capacity() != capacity/BlockSize*BlockSize {
			log.Info("allocator state is for another volume size: laying the files out afresh", "saved", a.Capacity(), "now", capacity)
			a = nil
		} else if err != nil {
			log.Warn("allocator state unreadable: laying the files out afresh", "err", err)
			a = nil
		}
	case errors.Is(err, fs.ErrNotExist):
	default:
		return nil, fmt.Errorf("allocator state: %w", err)
	}
	if a == nil {
		if a, err = extent.New(capacity, BlockSize); err != nil {
			return nil, err
		}
	}
	if err := reconcile(a, backing, log); err != nil {
		return nil, err
	}
	return a, nil
}

// reconcile brings the allocator in line with the backing files: blocks
// beyond a file's size are freed, data ranges without blocks get them
// (files written while not mounted, or since the last save), files that are
// gone are freed.
func reconcile(a *extent.Allocator, backing string, log *slog.Logger) error {
	seen := map[uint64]bool{}
	var short int64
	err := filepath.WalkDir(backing, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path == filepath.Join(backing, HoldDir) {
			return filepath.SkipDir
		}
		if !d.Type().IsRegular() || (filepath.Dir(path) == backing && hiddenName(d.Name())) {
			return nil
		}
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer syscall.Close(fd)
		var st syscall.Stat_t
		if err := syscall.Fstat(fd, &st); err != nil {
			return err
		}
		if seen[st.Ino] {
			return nil // another link of a file already done
		}
		seen[st.Ino] = true
		a.Truncate(st.Ino, st.Size)
		short += mapData(a, fd, st.Ino, 0, st.Size)
		return nil
	})
	if err != nil {
		return fmt.Errorf("reconciling the backing directory: %w", err)
	}
	for _, id := range a.Files() {
		if !seen[id] {
			a.Remove(id)
		}
	}
	if short > 0 {
		log.Warn("backing files hold more than the modelled capacity: some data is not mapped and reads of it cost nothing", "bytes", short)
	}
	return nil
}

// mapData gives blocks to the data ranges of [from, size) of file ino,
// open as fd (holes stay unmapped), and returns the bytes that did not fit.
func mapData(a *extent.Allocator, fd int, ino uint64, from, size int64) (short int64) {
	for off := from; off < size; {
		start, err := syscall.Seek(fd, off, seekData)
		if err != nil || start >= size {
			break // ENXIO: no data past off
		}
		end, err := syscall.Seek(fd, start, seekHole)
		if err != nil || end > size {
			end = size
		}
		if _, err := a.Map(ino, start, end-start, true, nil); err != nil {
			short += end - start
		}
		off = end
	}
	return short
}

// saveState writes the allocator's state to the backing directory,
// atomically (a temporary file renamed over the old one) and durably.
func (f *FS) saveState() error {
	f.mu.Lock()
	data, err := f.alloc.MarshalBinary()
	f.mu.Unlock()
	if err != nil {
		return err
	}
	path := filepath.Join(f.backing, StateFile)
	tmp := path + ".tmp"
	w, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("saving allocator state: %w", err)
	}
	if _, err := w.Write(data); err != nil {
		w.Close()
		return fmt.Errorf("saving allocator state: %w", err)
	}
	if err := w.Sync(); err != nil {
		w.Close()
		return fmt.Errorf("saving allocator state: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("saving allocator state: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("saving allocator state: %w", err)
	}
	return nil
}
