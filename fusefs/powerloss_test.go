package fusefs

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestUndoSavesSyncedBlocks checks the undo log's copies of the blocks
// writes overwrite: each is the block's synced contents (cut at the
// synced size), saved once however many writes overwrite it, and a
// write-back drops them all.
func TestUndoSavesSyncedBlocks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	synced := randBytes(7, 5*BlockSize+100) // the last block is partial
	if err := os.WriteFile(path, synced, 0o644); err != nil {
		t.Fatal(err)
	}
	fh, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	u := &undoLog{limit: 1 << 30, files: map[uint64]*undoFile{}}
	h := &file{fd: int(fh.Fd()), ino: 1}
	write := func(off, n int64) {
		t.Helper()
		if errno := u.save(h, off, n); errno != 0 {
			t.Fatal(errno)
		}
		if _, err := fh.WriteAt(bytes.Repeat([]byte{0xEE}, int(n)), off); err != nil {
			t.Fatal(err)
		}
	}
	write(BlockSize+10, 2*BlockSize)         // blocks 1-3
	write(0, int64(len(synced))+3*BlockSize) // blocks 0-5 and beyond the synced size
	write(2*BlockSize+1, 1)                  // block 2 again
	uf := u.files[1]
	if uf == nil {
		t.Fatal("no undo state for the written file")
	}
	want := int64(0)
	for b := int64(0); b*BlockSize < int64(len(synced)); b++ {
		block := synced[b*BlockSize : min((b+1)*BlockSize, int64(len(synced)))]
		if !bytes.Equal(uf.blocks[b], block) {
			t.Errorf("block %d: saved %d bytes, not its synced %d", b, len(uf.blocks[b]), len(block))
		}
		want += int64(len(block))
	}
	if len(uf.blocks) != 6 || u.bytes != want {
		t.Errorf("%d blocks of %d bytes saved, want 6 of %d", len(uf.blocks), u.bytes, want)
	}
	u.mu.Lock()
	u.writeBackLocked(time.Time{})
	u.mu.Unlock()
	if len(u.files) != 0 || u.bytes != 0 {
		t.Errorf("after a write-back %d files and %d bytes are kept, want none", len(u.files), u.bytes)
	}
	// The log closed its own descriptor, not the file's.
	if _, err := fh.WriteAt([]byte{1}, 0); err != nil {
		t.Error(err)
	}
}

// TestUndoReusesBuffers checks that a write-back keeps the saved blocks'
// buffers for the next saves (at most the log's limit of them) and that a
// reused buffer holds the blocks' synced contents then, not the old ones.
func TestUndoReusesBuffers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, randBytes(1, 64*BlockSize), 0o644); err != nil {
		t.Fatal(err)
	}
	fh, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	u := &undoLog{limit: 40 * BlockSize, files: map[uint64]*undoFile{}}
	h := &file{fd: int(fh.Fd()), ino: 1}
	for round := uint64(2); round < 5; round++ {
		synced := randBytes(round, 64*BlockSize)
		if _, err := fh.WriteAt(synced, 0); err != nil {
			t.Fatal(err)
		}
		for _, w := range [][2]int64{{0, 16 * BlockSize}, {20 * BlockSize, 3 * BlockSize}, {30 * BlockSize, 1}} {
			if errno := u.save(h, w[0], w[1]); errno != 0 {
				t.Fatal(errno)
			}
		}
		for b, old := range u.files[1].blocks {
			if !bytes.Equal(old, synced[b*BlockSize:(b+1)*BlockSize]) {
				t.Fatalf("round %d: block %d saved is not its synced contents", round, b)
			}
		}
		u.mu.Lock()
		u.writeBackLocked(time.Time{})
		u.mu.Unlock()
		if u.freeBytes == 0 || u.freeBytes > u.limit {
			t.Fatalf("round %d: %d bytes of free buffers after a write-back, want some and at most the limit %d", round, u.freeBytes, u.limit)
		}
	}
	if n := len(u.free[4]) + len(u.free[2]) + len(u.free[0]); n != 3 {
		t.Errorf("%d free buffers of the three writes' classes, want 3: each reused", n)
	}
}

// TestUndoSavesHolesUnread checks that blocks in holes of a sparse file
// are saved as holes (not read) and data blocks as their contents, and
// that a power loss gives a sparse file its synced contents back after
// writes over its holes and its data.
func TestUndoSavesHolesUnread(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	// 64 blocks, data in blocks 20-23 and 40 (partly), holes elsewhere,
	// the last block partial.
	size := int64(64*BlockSize - 300)
	synced := make([]byte, size)
	copy(synced[20*BlockSize:24*BlockSize], randBytes(3, 4*BlockSize))
	copy(synced[40*BlockSize+100:40*BlockSize+200], randBytes(4, 100))
	laySparse(t, fh, synced)
	u := &undoLog{limit: 1 << 30, files: map[uint64]*undoFile{}}
	h := &file{fd: int(fh.Fd()), ino: 1}
	// Saved as four writes would save them: a hole then data, data then
	// a hole, a hole then data, a hole to the end. A run that starts in
	// a hole saves the hole unread; once a run has reached data, the
	// rest of it is read (see saveRunLocked).
	runs := []int64{0, 22, 30, 40, 64}
	for i := range runs[:len(runs)-1] {
		if errno := u.save(h, runs[i]*BlockSize, min(runs[i+1]*BlockSize, size)-runs[i]*BlockSize); errno != 0 {
			t.Fatal(errno)
		}
	}
	data := func(b int64) bool { return b >= 20 && b < 24 || b == 40 }
	afterData := func(b int64) bool { // in its run, after a data block
		i := 0
		for runs[i+1] <= b {
			i++
		}
		for c := runs[i]; c < b; c++ {
			if data(c) {
				return true
			}
		}
		return false
	}
	uf := u.files[1]
	for b := int64(0); b*BlockSize < size; b++ {
		block := synced[b*BlockSize : min((b+1)*BlockSize, size)]
		saved := uf.blocks[b]
		if !isHole(saved) && !bytes.Equal(saved, block) {
			t.Errorf("block %d saved is not its synced contents", b)
		}
		if isHole(saved) && len(saved) != len(block) {
			t.Errorf("hole block %d saved as %d bytes, want %d", b, len(saved), len(block))
		}
		want := !data(b) && !afterData(b)
		if hole := isHole(saved); hole != want && holesReported(t, path) {
			t.Errorf("block %d saved as a hole %v, want %v", b, hole, want)
		}
	}
	if u.bytes != size {
		t.Errorf("%d bytes saved, want the %d of the file (holes count)", u.bytes, size)
	}

	// A power loss after writes over everything restores the synced
	// contents.
	s := journalShare(t, Options{})
	name := s.path("sparse")
	writeSynced(t, name, nil)
	wf, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer wf.Close()
	laySparse(t, wf, synced)
	if _, err := wf.WriteAt(bytes.Repeat([]byte{0xEE}, int(size)), 0); err != nil {
		t.Fatal(err)
	}
	s.powerLoss(t)
	holds(t, name, synced, "sparse file written over, not synced")
}

// holesReported reports whether the filesystem of path reports holes
// (SEEK_HOLE before the end of a sparse file).
func holesReported(t *testing.T, path string) bool {
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	st, _ := fh.Stat()
	const seekHole = 4 // SEEK_HOLE; the end of the file counts as one
	h, err := syscall.Seek(int(fh.Fd()), 0, seekHole)
	return err == nil && h < st.Size()
}

// laySparse makes f the sparse file of TestUndoSavesHolesUnread, synced:
// len(synced) bytes, data where synced has it (blocks 20-23 and part of
// 40), holes elsewhere.
func laySparse(t *testing.T, f *os.File, synced []byte) {
	t.Helper()
	if err := f.Truncate(int64(len(synced))); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(synced[20*BlockSize:24*BlockSize], 20*BlockSize); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(synced[40*BlockSize+100:40*BlockSize+200], 40*BlockSize+100); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkUndoSave measures what the undo log costs a client writing a
// file it extended with a truncate, 1 MiB at a time, as bench's smb://
// target does: the blocks are holes, saved without being read, and the
// log is written back every limit bytes (64 MiB, the default).
func BenchmarkUndoSave(b *testing.B) {
	fh, err := os.Create(filepath.Join(b.TempDir(), "f"))
	if err != nil {
		b.Fatal(err)
	}
	defer fh.Close()
	const size, n = 1 << 30, 1 << 20
	if err := fh.Truncate(size); err != nil {
		b.Fatal(err)
	}
	u := &undoLog{limit: 64 << 20, files: map[uint64]*undoFile{}}
	h := &file{fd: int(fh.Fd()), ino: 1}
	b.SetBytes(n)
	for i := range b.N {
		if errno := u.save(h, int64(i)*n%size, n); errno != 0 {
			b.Fatal(errno)
		}
	}
}
