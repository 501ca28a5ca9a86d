package fusefs

import (
	"sync"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
)

// undoLog keeps what a power loss must restore: for each file written or
// truncated since its last fsync, its synced size and the synced contents
// of every block overwritten or cut off since. A block is saved before its
// first overwrite, so the saved copy is always the synced one.
type undoLog struct {
	mu       sync.Mutex
	limit    int64 // bytes of saved blocks before a write-back
	bytes    int64
	files    map[uint64]*undoFile
	lastScan time.Time
	// free holds buffers of dropped blocks for reuse, by size class (class
	// c holds buffers of BlockSize<<c bytes), at most limit bytes in all:
	// a fresh buffer for each write's saved blocks cost more than reading
	// them (zeroing, page faults, garbage collection).
	free      [undoClasses][][]byte
	freeBytes int64
	// spare is a dropped file's map of saved blocks, emptied, for the next
	// file: a client writing on keeps one file in the log, written back
	// every limit bytes, and growing its map again from empty (16,384
	// blocks for the default limit) took a tenth of the share's processor
	// time on 1 MiB writes.
	spare    map[int64][]byte
	spareLen int // the blocks spare held
}

// undoClasses is the number of buffer size classes of the undo log: up to
// 4 MiB, more than the largest write a client sends through FUSE.
const undoClasses = 11

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
	bufs   [][]byte // the buffers the blocks lie in, for reuse at a drop
	// cut is the smallest size the file was truncated to since the last
	// journal commit, -1 for none: a truncation is a metadata change,
	// durable at the commit (the synced size becomes at most cut) rather
	// than at the file's fsync. Its blocks were freed at once, so a restore
	// maps the data it brings back again.
	cut int64
}

// entryLocked returns the undo state of the file ino open as fd, making it
// if there is none: a file without undo state has nothing unsynced, so its
// size now is its synced size.
func (u *undoLog) entryLocked(fd int, ino uint64, inode *fs.Inode) (*undoFile, syscall.Errno) {
	if uf := u.files[ino]; uf != nil {
		return uf, 0
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return nil, toErrno(err)
	}
	fd, err := syscall.Dup(fd)
	if err != nil {
		return nil, toErrno(err)
	}
	if len(u.files) >= dirtyMaxFiles {
		u.writeBackLocked(time.Time{})
	}
	blocks := u.spare
	if blocks == nil {
		blocks = map[int64][]byte{}
	}
	u.spare, u.spareLen = nil, 0
	uf := &undoFile{fd: fd, inode: inode, since: time.Now(), size: st.Size, blocks: blocks, cut: -1}
	u.files[ino] = uf
	return uf, 0
}

// saveLocked saves the synced contents of the blocks of [off, end) that
// are not saved yet (end at most the synced size). Each run of such blocks
// is read at once, into one buffer the blocks' copies share: a client's
// 1 MiB write costs one read, not 256. Blocks that lie in a hole of the
// backing file are not read: their synced contents are zeros, which a
// restore punches back (see holeBlock). A client writing into a file it
// extended with a truncate (as bench does) otherwise had the host's
// filesystem fill page after page with zeros for the log to copy, which
// cost the share most of its processor time.
func (u *undoLog) saveLocked(uf *undoFile, off, end int64) syscall.Errno {
	for b := off / BlockSize; b*BlockSize < end; {
		if _, ok := uf.blocks[b]; ok {
			b++
			continue
		}
		e := b + 1
		for e*BlockSize < end {
			if _, ok := uf.blocks[e]; ok {
				break
			}
			e++
		}
		if errno := u.saveRunLocked(uf, b, e); errno != 0 {
			return errno
		}
		b = e
	}
	return 0
}

// saveRunLocked saves the blocks [b, e), none of them saved yet: those in
// holes of the backing file as holeBlock, the others read.
func (u *undoLog) saveRunLocked(uf *undoFile, b, e int64) syscall.Errno {
	end := min(e*BlockSize, uf.size)
	for b < e {
		lo := b * BlockSize
		if lo >= end {
			// Beyond the synced size: nothing to restore but the size.
			for ; b < e; b++ {
				uf.blocks[b] = nil
			}
			return 0
		}
		// Whole blocks of a hole, up to the block of the next data.
		if d := nextData(uf.fd, lo, end); d > lo {
			hb := d / BlockSize
			if d >= end {
				hb = e
			}
			if hb > b {
				for ; b < hb; b++ {
					n := min((b+1)*BlockSize, uf.size) - b*BlockSize
					uf.blocks[b] = holeBlock[:n:n]
					u.bytes += n
				}
				continue
			}
			// Data within block b (a file system whose blocks are
			// smaller than ours): the block is read.
		}
		// Data from lo: the rest of the run is read. Where the run goes
		// on into a hole, its zeros are read too: looking for the hole
		// (SEEK_HOLE) would cost more, as on tmpfs it walks every page
		// of the file from lo to the hole or the end, on every write.
		hi := min(e*BlockSize, uf.size)
		old := u.buffer(hi - lo)
		k, err := syscall.Pread(uf.fd, old, lo)
		if err != nil {
			u.reuse(old)
			return toErrno(err)
		}
		uf.bufs = append(uf.bufs, old)
		for ; b < e; b++ {
			i, j := min(k, int(b*BlockSize-lo)), min(k, int((b+1)*BlockSize-lo))
			uf.blocks[b] = old[i:j:j]
			u.bytes += int64(j - i)
		}
	}
	return 0
}

// holeBlock is the saved contents of a block that was a hole (or part of
// one) of its file: a restore punches the hole again. It is never written;
// the blocks that share it count their length against the log's limit, as
// read blocks do, so that holes are written back when data would be.
var holeBlock = make([]byte, BlockSize)

// isHole reports whether a saved block is a hole.
func isHole(b []byte) bool { return len(b) > 0 && &b[0] == &holeBlock[0] }

// save records, before a write of [off, off+n) through h, the synced
// contents of the blocks the write overwrites.
func (u *undoLog) save(h *file, off, n int64) syscall.Errno {
	u.mu.Lock()
	defer u.mu.Unlock()
	uf, errno := u.entryLocked(h.fd, h.ino, h.inode)
	if errno != 0 {
		return errno
	}
	uf.writes += n
	if errno := u.saveLocked(uf, off, min(off+n, uf.size)); errno != 0 {
		return errno
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

// cut records, before the file ino open as fd (read-write) is truncated
// to size, the synced contents of what the truncation cuts off. A cut
// larger than the undo log's limit is not kept: the log is written back
// first and the truncation is durable at once, as if committed.
func (u *undoLog) cut(fd int, ino uint64, inode *fs.Inode, size int64) syscall.Errno {
	u.mu.Lock()
	defer u.mu.Unlock()
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		return toErrno(err)
	}
	if size >= st.Size {
		return 0
	}
	synced := st.Size
	if uf := u.files[ino]; uf != nil {
		synced = uf.size
	}
	need := max(0, min(st.Size, synced)-size)
	if u.bytes+need > u.limit {
		u.writeBackLocked(time.Time{})
		if need > u.limit {
			return 0
		}
	}
	uf, errno := u.entryLocked(fd, ino, inode)
	if errno != 0 {
		return errno
	}
	if errno := u.saveLocked(uf, size, min(st.Size, uf.size)); errno != 0 {
		return errno
	}
	if uf.cut < 0 || size < uf.cut {
		uf.cut = size
	}
	return 0
}

// cuts returns the number of files truncated since the last journal
// commit.
func (u *undoLog) cuts() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	n := 0
	for _, uf := range u.files {
		if uf.cut >= 0 {
			n++
		}
	}
	return n
}

// commitCuts makes the truncations since the last journal commit durable:
// a power loss no longer restores what they cut off.
func (u *undoLog) commitCuts() {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, uf := range u.files {
		if uf.cut < 0 {
			continue
		}
		uf.size = min(uf.size, uf.cut)
		for b, old := range uf.blocks {
			if b*BlockSize >= uf.size {
				u.bytes -= int64(len(old))
				delete(uf.blocks, b)
			}
		}
		uf.cut = -1
	}
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
	for _, b := range uf.bufs {
		u.reuse(b)
	}
	if n := len(uf.blocks); u.spare == nil || n > u.spareLen {
		clear(uf.blocks)
		u.spare, u.spareLen = uf.blocks, n
	}
	syscall.Close(uf.fd)
	delete(u.files, ino)
}

// buffer returns a buffer of n bytes for saved blocks, reused if one of
// its class is free.
func (u *undoLog) buffer(n int64) []byte {
	c := 0
	for c < undoClasses && BlockSize<<c < n {
		c++
	}
	if c == undoClasses {
		return make([]byte, n)
	}
	if k := len(u.free[c]); k > 0 {
		b := u.free[c][k-1]
		u.free[c] = u.free[c][:k-1]
		u.freeBytes -= int64(cap(b))
		return b[:n]
	}
	return make([]byte, n, BlockSize<<c)
}

// reuse keeps a dropped buffer for buffer, unless the free buffers would
// exceed the log's limit or it is of no class.
func (u *undoLog) reuse(b []byte) {
	c := 0
	for c < undoClasses && BlockSize<<c < cap(b) {
		c++
	}
	if c == undoClasses || BlockSize<<c != cap(b) || u.freeBytes+int64(cap(b)) > u.limit {
		return
	}
	u.free[c] = append(u.free[c], b[:0])
	u.freeBytes += int64(cap(b))
}

// writeBackLocked makes the files dirty since before the given time (all
// of them for the zero time) durable for the modelled NAS — a power loss
// no longer undoes their writes — and drops their undo state, as a NAS
// writes back dirty pages when they expire or its dirty limit is reached.
// Their bytes are in the backing files already; the host's own writeback
// takes them to its disk, as it does a stock server's. An fsync here
// made every client write wait for the host's disk (up to seconds on a
// busy host, under the log's lock or, in the background, through the
// disk and journal traffic it forced), which neither the modelled NAS nor
// a stock smbd on a plain directory does.
func (u *undoLog) writeBackLocked(before time.Time) {
	for ino, uf := range u.files {
		if before.IsZero() || uf.since.Before(before) {
			u.dropLocked(ino)
		}
	}
}

// syncAllLocked makes the files of the log durable on the host's disk
// too, and drops their undo state: at a clean unmount.
func (u *undoLog) syncAllLocked() {
	for _, uf := range u.files {
		syscall.Fsync(uf.fd)
	}
	u.writeBackLocked(time.Time{})
}

// PowerLoss simulates a power loss of the NAS. Every write not made
// durable by an fsync (or by a write-back) is undone — overwritten blocks
// get their synced contents back and files their synced size — and so is
// the running transaction of namespace changes (creates, deletes, renames,
// truncations since the last journal commit), newest first; the volume's
// volatile caches lose their contents. It returns the bytes of the writes
// undone. The kernel's cached pages of the restored files and its entries
// of the changed names are invalidated.
func (f *FS) PowerLoss() int64 {
	lost, _ := f.powerLoss()
	return lost
}

// powerLoss is PowerLoss, returning also the number of namespace changes
// undone (a truncated file counting one).
func (f *FS) powerLoss() (lost int64, changes int) {
	// The NAS reboots: what was open before is stale (see reboot).
	f.reboot.mu.Lock()
	f.journal.mu.Lock()
	f.reboot.boot.Add(1)
	f.expireLocked(time.Now())
	lost, cuts, restored := f.restoreData()
	changes, notes := f.rollbackLocked()
	changes += cuts
	f.journal.mu.Unlock()
	f.reboot.mu.Unlock()
	for _, in := range append(restored, f.reboot.openInodes()...) {
		if in != nil {
			in.NotifyContent(0, 0)
		}
	}
	for _, n := range notes {
		n.send()
	}
	lost += f.vol.PowerLoss()
	f.log.Warn("simulated power loss", "lost_bytes", lost, "lost_changes", changes)
	return lost, changes
}

// restoreData undoes the unsynced writes and the truncations of every file
// in the undo log and returns the bytes of the writes, the number of
// truncated files and the restored files' nodes.
func (f *FS) restoreData() (lost int64, cuts int, restored []*fs.Inode) {
	u := &f.undo
	u.mu.Lock()
	defer u.mu.Unlock()
	for ino, uf := range u.files {
		lost += uf.writes
		for b, old := range uf.blocks {
			var err error
			if isHole(old) {
				err = punch(uf.fd, b*BlockSize, int64(len(old)))
			} else {
				_, err = syscall.Pwrite(uf.fd, old, b*BlockSize)
			}
			if err != nil {
				f.log.Error("power loss: restoring a block", "ino", ino, "block", b, "err", err)
			}
		}
		if err := syscall.Ftruncate(uf.fd, uf.size); err != nil {
			f.log.Error("power loss: restoring the size", "ino", ino, "err", err)
		}
		syscall.Fsync(uf.fd)
		f.mu.Lock()
		f.alloc.Truncate(ino, uf.size)
		if uf.cut >= 0 {
			cuts++
		}
		if uf.cut >= 0 && uf.cut < uf.size {
			if short := mapData(f.alloc, uf.fd, ino, uf.cut, uf.size); short > 0 {
				f.log.Warn("power loss: no room to map the data a truncation cut off again: reads of it cost nothing", "ino", ino, "bytes", short)
			}
		}
		f.mu.Unlock()
		restored = append(restored, uf.inode)
		u.dropLocked(ino)
	}
	return lost, cuts, restored
}

// writeZeros writes n zero bytes at off of the file fd.
func writeZeros(fd int, off, n int64) error {
	for n > 0 {
		k := min(n, int64(len(holeBlock)))
		w, err := syscall.Pwrite(fd, holeBlock[:k], off)
		if err != nil {
			return err
		}
		if w <= 0 {
			return syscall.EIO
		}
		off, n = off+int64(w), n-int64(w)
	}
	return nil
}
