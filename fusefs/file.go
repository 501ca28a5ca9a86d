package fusefs

import (
	"context"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/hanwen/go-fuse/v2/splice"
	"github.com/nasemu/nasemu/emu/extent"
	"github.com/nasemu/nasemu/models"
)

// file is an open file of the share. It wraps go-fuse's loopback file
// without embedding it: the loopback file offers its descriptor for FUSE
// passthrough, and a passthrough read or write would never reach the model.
type file struct {
	handle
	fd    int
	ino   uint64 // the backing inode: the allocator's key
	inode *fs.Inode
	probe bool // a probe file's (see FS.SetProbeWait)
	// direct is set when the client opened the file O_DIRECT: its reads
	// and writes bypass the client's cache in the model too
	// (models.Request.Direct).
	direct bool
}

// handle is what an open file and an open directory of the share have in
// common: a backing descriptor, opened in one boot of the NAS, through
// which the node's attributes are read and set until a power loss makes it
// stale.
type handle struct {
	lf   *fs.LoopbackFile
	fs   *FS
	boot uint64 // the boot it was opened in (see reboot)
}

var (
	_ fs.FileHandle    = (*file)(nil)
	_ fs.FileReader    = (*file)(nil)
	_ fs.FileWriter    = (*file)(nil)
	_ fs.FileReleaser  = (*file)(nil)
	_ fs.FileFlusher   = (*file)(nil)
	_ fs.FileFsyncer   = (*file)(nil)
	_ fs.FileGetattrer = (*file)(nil)
	_ fs.FileSetattrer = (*file)(nil)
	_ fs.FileLseeker   = (*file)(nil)
	_ fs.FileAllocater = (*file)(nil)
)

// newFile wraps an open loopback file, opened in boot (see reboot) with
// the client's open flags.
func (f *FS) newFile(lf *fs.LoopbackFile, ino uint64, inode *fs.Inode, boot uint64, flags uint32) *file {
	h := &file{handle: handle{lf: lf, fs: f, boot: boot}, fd: -1, ino: ino, inode: inode, direct: flags&syscall.O_DIRECT != 0}
	// The descriptor stays valid until Release closes the loopback file.
	h.fd, _ = lf.PassthroughFd()
	f.reboot.opened(h)
	return h
}

// stale reports whether the handle was opened before the last power
// loss: every call through it fails (see reboot).
func (h *handle) stale() bool { return h.fs.reboot.stale(h.boot) }

// Read implements fs.FileReader: the mapped blocks of the range are charged
// as reads of the volume, then the bytes come from the backing file —
// spliced into the reply where the mount splices (see splice.go), read
// into buf otherwise.
//
// A read that returns data holds reboot.mu for reading from its check of
// the handle until its reply is written (Done of the spliced answer): a
// pipe holds the backing file's pages by reference, so a power loss that
// restored them before the reply would change what the client gets.
func (h *file) Read(ctx context.Context, buf []byte, off int64) (res fuse.ReadResult, errno syscall.Errno) {
	done := h.fs.metrics.begin(opRead)
	if h.stale() {
		errno = staleErrno
		done(0, &errno)
		return nil, errno
	}
	if h.probe {
		h.fs.waitProbe()
	}
	var ext [4]extent.Extent
	pieces, errno := h.fs.mapRange(h.ino, off, int64(len(buf)), false, ext[:0])
	n := 0
	var pair *splice.Pair
	if errno == 0 {
		errno = h.fs.chargeIO(models.Read, pieces, h.direct, func() (err error) {
			if h.fs.spliceReads && spliceFits(len(buf)) {
				if pair, n = loadPipe(h.fd, len(buf), off); pair != nil {
					return nil
				}
			}
			n, err = syscall.Pread(h.fd, buf, off)
			return err
		})
	}
	if pair != nil && (errno != 0 || n == 0) {
		// go-fuse calls no Done for an empty answer.
		splice.Done(pair)
		pair = nil
	}
	if errno == 0 {
		h.fs.reboot.mu.RLock()
		if h.stale() { // the bytes may be from before the loss
			errno = staleErrno
			h.fs.reboot.mu.RUnlock()
			if pair != nil {
				splice.Done(pair)
			}
		}
	}
	done(int64(n), &errno)
	if errno != 0 {
		return nil, errno
	}
	if pair != nil {
		return &splicedRead{pair: pair, size: n, release: h.fs.reboot.mu.RUnlock}, 0
	}
	h.fs.reboot.mu.RUnlock()
	// A vector, not ReadResultData: where the mount splices, go-fuse would
	// try to splice a ReadResultData (and fail) before writing it.
	return fuse.ReadResultVector([][]byte{buf[:n]}), 0
}

// Write implements fs.FileWriter: blocks are allocated for the range,
// charged as writes of the volume, and the bytes written to the backing
// file. On a nearly full volume the write is cut short to the blocks that
// are free (ENOSPC when none is), as on a real filesystem.
func (h *file) Write(ctx context.Context, data []byte, off int64) (written uint32, errno syscall.Errno) {
	done := h.fs.metrics.begin(opWrite)
	defer func() { done(int64(written), &errno) }()
	if h.stale() {
		return 0, staleErrno
	}
	if h.probe {
		// Timed, not kept: the probe file stays a hole, so that its
		// reads charge nothing either.
		h.fs.waitProbe()
		return uint32(len(data)), 0
	}
	var ext [4]extent.Extent
	pieces, n, errno := h.fs.mapWrite(h.ino, off, int64(len(data)), ext[:0])
	if errno != 0 {
		return 0, errno
	}
	data = data[:n]
	k := 0
	errno = h.fs.chargeIO(models.Write, pieces, h.direct, func() error {
		// A power loss comes before the write (which then fails) or
		// after its bytes and their undo record (see reboot).
		h.fs.reboot.mu.RLock()
		defer h.fs.reboot.mu.RUnlock()
		if h.stale() {
			return staleErrno
		}
		if errno := h.fs.undo.save(h, off, int64(len(data))); errno != 0 {
			return errno
		}
		var err error
		k, err = syscall.Pwrite(h.fd, data, off)
		return err
	})
	if errno == 0 && h.stale() { // a power loss undid the write
		errno = staleErrno
	}
	if errno != 0 {
		return 0, errno
	}
	return uint32(k), 0
}

// Fsync implements fs.FileFsyncer: a Flush through the model, then an
// fsync of the backing file, and a commit of the running transaction of
// namespace changes (any fsync commits it, as ext4's does). What it
// acknowledges survives a power loss and the emulator being killed.
func (h *file) Fsync(ctx context.Context, flags uint32) (errno syscall.Errno) {
	defer h.fs.metrics.begin(opFsync)(0, &errno)
	if h.stale() {
		return staleErrno
	}
	if errno = toErrno(h.fs.vol.Sync()); errno != 0 {
		return errno
	}
	// No power loss between the check and the commit: what the fsync
	// reports durable is (see reboot).
	h.fs.reboot.mu.RLock()
	defer h.fs.reboot.mu.RUnlock()
	if h.stale() {
		return staleErrno
	}
	if err := syscall.Fsync(h.fd); err != nil {
		return toErrno(err)
	}
	h.fs.undo.synced(h.ino)
	h.fs.commit()
	return 0
}

// Release implements fs.FileReleaser, charged as a Close. A stale file is
// released without a charge: the NAS that opened it is gone.
func (h *file) Release(ctx context.Context) (errno syscall.Errno) {
	defer h.fs.metrics.begin(opRelease)(0, &errno)
	h.fs.reboot.released(h)
	if h.stale() {
		h.lf.Release(ctx)
		return 0
	}
	cerr := h.releaseCharge()
	if errno = h.lf.Release(ctx); errno != 0 {
		return errno
	}
	return cerr
}

// Flush implements fs.FileFlusher (close(2) of one descriptor).
// Behind smbd it is charged as the file's Close (see closeAtFlush).
func (h *file) Flush(ctx context.Context) syscall.Errno {
	if h.stale() {
		h.lf.Flush(ctx)
		return staleErrno
	}
	if errno := h.flushCharge(); errno != 0 {
		return errno
	}
	return h.lf.Flush(ctx)
}

// Getattr implements fs.FileGetattrer: the attributes of the file or
// directory that was opened, whatever its path names now.
func (h *handle) Getattr(ctx context.Context, out *fuse.AttrOut) syscall.Errno {
	if h.stale() {
		return staleErrno
	}
	return h.lf.Getattr(ctx, out)
}

// Setattr implements fs.FileSetattrer (for a file, the node frees
// truncated blocks).
func (h *handle) Setattr(ctx context.Context, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if h.stale() {
		return staleErrno
	}
	return h.lf.Setattr(ctx, in, out)
}

// Lseek implements fs.FileLseeker (SEEK_DATA, SEEK_HOLE).
func (h *file) Lseek(ctx context.Context, off uint64, whence uint32) (uint64, syscall.Errno) {
	if h.stale() {
		return 0, staleErrno
	}
	return h.lf.Lseek(ctx, off, whence)
}

// Allocate implements fs.FileAllocater: fallocate reserves blocks (ENOSPC
// when they do not fit) and punching a hole frees them.
func (h *file) Allocate(ctx context.Context, off, size uint64, mode uint32) syscall.Errno {
	const punchHole = 0x02 // FALLOC_FL_PUNCH_HOLE
	if h.stale() {
		return staleErrno
	}
	if mode&punchHole == 0 {
		if _, errno := h.fs.mapRange(h.ino, int64(off), int64(size), true, nil); errno != 0 {
			return errno
		}
	}
	if errno := h.lf.Allocate(ctx, off, size, mode); errno != 0 {
		return errno
	}
	if mode&punchHole != 0 {
		h.fs.mu.Lock()
		h.fs.alloc.Punch(h.ino, int64(off), int64(size))
		h.fs.mu.Unlock()
	}
	return 0
}
