package fusefs

import (
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
)

// undoLog keeps what a power loss must restore: for each file written
// since its last fsync, its synced size and the synced contents of every
// block overwritten since. A block is saved before its first overwrite, so
// the saved copy is always the synced one.
type undoLog struct {
	mu       sync.Mutex
	limit    int64 // bytes of saved blocks before a write-back
	bytes    int64
	files    map[uint64]*undoFile
	lastScan time.Time
}

// Write-back limits besides the undo log's size, after Linux's defaults: a
// NAS writes dirty data back once it is 30 s old. The file limit bounds the
// descriptors the log holds.
const (
	dirtyExpire   = 30 * time.Second
	dirtyMaxFiles = 1024
)

// undoFile is the undo state of one file.
type undoFile struct {
	fd     int       // a descriptor of our own, to restore through
	inode  *fs.Inode // to drop the kernel's cached pages after a restore
	since  time.Time // first write since the sync
	size   int64     // the synced size
	writes int64     // bytes written since the sync: what a power loss loses
	blocks map[int64][]byte
}

// save records, before a write of [off, off+n) through h, the synced
// contents of the blocks the write overwrites.
func (u *undoLog) save(h *file, off, n int64) syscall.Errno {
	u.mu.Lock()
	defer u.mu.Unlock()
	uf := u.files[h.ino]
	if uf == nil {
		var st syscall.Stat_t
		if err := syscall.Fstat(h.fd, &st); err != nil {
			return toErrno(err)
		}
		fd, err := syscall.Dup(h.fd)
		if err != nil {
			return toErrno(err)
		}
		if len(u.files) >= dirtyMaxFiles {
			u.writeBackLocked(time.Time{})
		}
		uf = &undoFile{fd: fd, inode: h.inode, since: time.Now(), size: st.Size, blocks: map[int64][]byte{}}
		u.files[h.ino] = uf
	}
	uf.writes += n
	for b := off / BlockSize; b*BlockSize < min(off+n, uf.size); b++ {
		if _, ok := uf.blocks[b]; ok {
			continue
		}
		old := make([]byte, min(BlockSize, uf.size-b*BlockSize))
		k, err := syscall.Pread(uf.fd, old, b*BlockSize)
		if err != nil {
			return toErrno(err)
		}
		uf.blocks[b] = old[:k]
		u.bytes += int64(k)
	}
	switch now := time.Now(); {
	case u.bytes > u.limit:
		u.writeBackLocked(time.Time{})
	case now.Sub(u.lastScan) > time.Second:
		u.lastScan = now
		u.writeBackLocked(now.Add(-dirtyExpire))
	}
	return 0
}

// synced forgets a file's undo state: an fsync made its contents durable.
func (u *undoLog) synced(ino uint64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.dropLocked(ino)
}

// forget drops the undo state of a deleted file.
func (u *undoLog) forget(ino uint64) { u.synced(ino) }

func (u *undoLog) dropLocked(ino uint64) {
	uf := u.files[ino]
	if uf == nil {
		return
	}
	for _, b := range uf.blocks {
		u.bytes -= int64(len(b))
	}
	syscall.Close(uf.fd)
	delete(u.files, ino)
}

// writeBackLocked makes the files dirty since before the given time (all
// of them for the zero time) durable and drops their undo state, as a NAS
// writes back dirty pages when they expire or its dirty limit is reached.
func (u *undoLog) writeBackLocked(before time.Time) {
	for ino, uf := range u.files {
		if before.IsZero() || uf.since.Before(before) {
			syscall.Fsync(uf.fd)
			u.dropLocked(ino)
		}
	}
}

// PowerLoss simulates a power loss of the NAS: every write not made durable
// by an fsync (or by a write-back) is undone — overwritten blocks get their
// synced contents back and files their synced size — and the volume's
// volatile caches lose their contents. It returns the bytes of the writes
// undone.
// The kernel's cached pages of the restored files are invalidated.
func (f *FS) PowerLoss() int64 {
	u := &f.undo
	u.mu.Lock()
	var lost int64
	var restored []*fs.Inode
	for ino, uf := range u.files {
		lost += uf.writes
		for b, old := range uf.blocks {
			if _, err := syscall.Pwrite(uf.fd, old, b*BlockSize); err != nil {
				f.log.Error("power loss: restoring a block", "ino", ino, "block", b, "err", err)
			}
		}
		if err := syscall.Ftruncate(uf.fd, uf.size); err != nil {
			f.log.Error("power loss: restoring the size", "ino", ino, "err", err)
		}
		syscall.Fsync(uf.fd)
		f.truncate(ino, uf.size)
		restored = append(restored, uf.inode)
		u.dropLocked(ino)
	}
	u.mu.Unlock()
	for _, in := range restored {
		if in != nil {
			in.NotifyContent(0, 0)
		}
	}
	lost += f.vol.PowerLoss()
	f.log.Warn("simulated power loss", "lost_bytes", lost)
	return lost
}
