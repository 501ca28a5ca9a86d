package fusefs

import (
	"errors"
	"syscall"

	"github.com/nasemu/nasemu/emu/extent"
	"github.com/nasemu/nasemu/models"
)

// charge submits a file operation to the model and waits for it.
func (f *FS) charge(op models.Op) syscall.Errno {
	return toErrno(f.vol.ChargeEarly(models.Request{Op: op}, f.fileOpEarlyFor(op)))
}

// chargeFile charges a file operation on the regular file ino of the
// given size. The request names the file as the sim target does: by the
// volume address of its first byte, with its size as the length. Layers of
// the model key state on that range (a NAS's inode page, an SMB client's
// read-ahead and write-behind within the open file), so a share whose file
// ops named no range would cost a sequential reader what a random one
// pays. A file without blocks yet is named by where its first block will
// go.
func (f *FS) chargeFile(op models.Op, ino uint64, size int64) syscall.Errno {
	f.mu.Lock()
	start, ok := f.alloc.Start(ino)
	if !ok {
		start = f.alloc.Next()
	}
	f.mu.Unlock()
	return f.chargeRange(op, start, size)
}

// chargeRange charges a file operation on the file at start (a volume
// address) of size bytes, the size cut to the volume's end.
func (f *FS) chargeRange(op models.Op, start, size int64) syscall.Errno {
	size = max(0, min(size, f.vol.Capacity()-start))
	return toErrno(f.vol.ChargeEarly(models.Request{Op: op, Offset: start, Length: size}, f.fileOpEarlyFor(op)))
}

// chargeCreate charges the creation of a regular file. Its size is not
// known yet (the client writes it after the create): the request names the
// file by where its first block will go and reaches to the volume's end, so
// that the client's writes into the new file are writes within it, as in
// the sim target, where a job's file has its size from the start.
func (f *FS) chargeCreate() syscall.Errno {
	f.mu.Lock()
	start := f.alloc.Next()
	f.mu.Unlock()
	return f.chargeRange(models.Create, start, f.vol.Capacity())
}

// chargeAttr charges a name or attribute call (lookup, getattr, setattr)
// as a stat, unless the front folds such calls into the client request
// that made them (see Front).
func (f *FS) chargeAttr() syscall.Errno {
	if f.front == FrontSMB {
		return 0
	}
	return f.charge(models.Stat)
}

// mapRange returns the extents of [off, off+n) of a file, allocating holes
// when alloc is set.
// A range that does not fit is retried after a commit (see retryAlloc).
func (f *FS) mapRange(ino uint64, off, n int64, alloc bool, dst []extent.Extent) ([]extent.Extent, syscall.Errno) {
	f.mu.Lock()
	ext, err := f.alloc.Map(ino, off, n, alloc, dst)
	f.mu.Unlock()
	if alloc && errors.Is(err, extent.ErrNoSpace) && f.retryAlloc() {
		f.mu.Lock()
		ext, err = f.alloc.Map(ino, off, n, alloc, dst)
		f.mu.Unlock()
	}
	return ext, toErrno(err)
}

// mapWrite allocates and returns the extents of a write of n bytes at off,
// cut short to what fits when the volume is nearly full; it returns the
// bytes that will be written.
// The blocks of deletes not yet committed are reused after a commit that
// a write which does not fit forces (see retryAlloc).
func (f *FS) mapWrite(ino uint64, off, n int64, dst []extent.Extent) ([]extent.Extent, int64, syscall.Errno) {
	f.mu.Lock()
	k := f.alloc.Fit(ino, off, n)
	if k < n {
		f.mu.Unlock()
		f.retryAlloc()
		f.mu.Lock()
		k = f.alloc.Fit(ino, off, n)
	}
	defer f.mu.Unlock()
	if k == 0 && n > 0 {
		return dst, 0, syscall.ENOSPC
	}
	ext, err := f.alloc.Map(ino, off, k, true, dst)
	return ext, k, toErrno(err)
}

// truncate frees a file's blocks at or beyond size.
func (f *FS) truncate(ino uint64, size int64) {
	f.mu.Lock()
	f.alloc.Truncate(ino, size)
	f.mu.Unlock()
}

// remove frees every block of a file.
func (f *FS) remove(ino uint64) {
	f.mu.Lock()
	f.alloc.Remove(ino)
	f.mu.Unlock()
	f.undo.forget(ino)
}

// chargeIO serves a read or write of a file whose range maps to the
// extents ext: the mapped parts (holes are free) are charged to the volume
// together, as a filesystem issues the parts of a fragmented request, so an
// array serves them in parallel; data moves the bytes between the client
// and the backing file while the modelled time runs, so that the backing
// file's own time is hidden inside the model's (unless it is longer); the
// call returns when the model says the last part completes. direct marks a
// client's unbuffered request (models.Request.Direct).
func (f *FS) chargeIO(op models.Op, ext []extent.Extent, direct bool, data func() error) syscall.Errno {
	var buf [4]models.Request
	rs := buf[:0]
	var n int64
	for _, e := range ext {
		if e.Physical >= 0 {
			rs = append(rs, models.Request{Op: op, Offset: e.Physical, Length: e.Length, Direct: direct})
			n += e.Length
		}
	}
	return toErrno(f.vol.AccessEarly(rs, f.transferEarlyFor(op, n), data))
}

// chargeStore is the volume's store: it keeps no bytes (they live in the
// backing files) and leaves read buffers alone, so the volume only paces
// and counts. It is deliberately not a conforming emu.Store.
type chargeStore struct{ size int64 }

func (s chargeStore) ReadAt(p []byte, _ int64) (int, error)  { return len(p), nil }
func (s chargeStore) WriteAt(p []byte, _ int64) (int, error) { return len(p), nil }
func (s chargeStore) Sync() error                            { return nil }
func (s chargeStore) Size() int64                            { return s.size }
func (s chargeStore) Close() error                           { return nil }
