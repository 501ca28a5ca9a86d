package fusefs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/models"
)

func randBytes(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// used returns the bytes the allocator has handed out.
func used(f *FS) int64 {
	c, free := f.Usage()
	return c - free
}

// TestReadsReachTheModel checks that FUSE passthrough is off: a file
// written into the backing directory before the mount is read through the
// mount, and the volume counts the read.
func TestReadsReachTheModel(t *testing.T) {
	backing := t.TempDir()
	data := randBytes(1, 256<<10)
	if err := os.WriteFile(filepath.Join(backing, "pre"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	s := mountShare(t, freeModel(t, 1<<30), &emu.VirtualClock{}, backing, Options{})
	if used(s.fs) != int64(len(data)) {
		t.Errorf("file present at mount: %d bytes allocated, want %d", used(s.fs), len(data))
	}
	before := volumeCount(s.fs, models.Read)
	if got := mustRead(t, s.path("pre")); !bytes.Equal(got, data) {
		t.Fatal("data read through the mount differs")
	}
	if after := volumeCount(s.fs, models.Read); after <= before {
		t.Fatalf("volume reads %d → %d: the read did not reach the model (passthrough?)", before, after)
	}
	st := s.fs.Volume().Stats()
	for _, o := range st.Ops {
		if o.Op == models.Read && o.Bytes < int64(len(data)) {
			t.Errorf("volume charged %d bytes of reads for a %d-byte file", o.Bytes, len(data))
		}
	}
	// O_DIRECT reads bypass the page cache: each one reaches the model.
	fh, err := os.OpenFile(s.path("pre"), os.O_RDONLY|syscall.O_DIRECT, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	buf := make([]byte, 4096)
	for i := range 10 {
		before := volumeCount(s.fs, models.Read)
		if _, err := fh.ReadAt(buf, 0); err != nil {
			t.Fatal(err)
		}
		if volumeCount(s.fs, models.Read) != before+1 {
			t.Fatalf("O_DIRECT read %d: volume reads %d → %d, want +1", i, before, volumeCount(s.fs, models.Read))
		}
	}
}

func TestPOSIX(t *testing.T) {
	const capacity = 1 << 30
	s := mountShare(t, freeModel(t, capacity), &emu.VirtualClock{}, "", Options{})

	t.Run("create-write-read", func(t *testing.T) {
		data := randBytes(2, 100_000)
		if err := os.WriteFile(s.path("a"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(mustRead(t, s.path("a")), data) {
			t.Fatal("read back differs")
		}
		if !bytes.Equal(mustRead(t, filepath.Join(s.backing, "a")), data) {
			t.Fatal("backing file differs")
		}
		if err := os.Remove(s.path("a")); err != nil {
			t.Fatal(err)
		}
		if used(s.fs) != 0 {
			t.Errorf("after delete %d bytes still allocated", used(s.fs))
		}
	})

	// fio lays out files this way: open write-only, fallocate, ftruncate,
	// then overwrite (the undo log must still read the old bytes).
	t.Run("write-only-overwrite", func(t *testing.T) {
		old, patch := randBytes(5, 3*BlockSize), randBytes(6, 100)
		f, err := os.Create(s.path("w"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(old); err != nil {
			t.Fatal(err)
		}
		if err := f.Sync(); err != nil { // the undo log forgets synced data
			t.Fatal(err)
		}
		f.Close()
		f, err = os.OpenFile(s.path("w"), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Fallocate(int(f.Fd()), 0, 0, 4*BlockSize); err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(4 * BlockSize); err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(patch, BlockSize+10); err != nil {
			t.Fatalf("overwrite through a write-only descriptor: %v", err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		want := append(append([]byte(nil), old...), make([]byte, BlockSize)...)
		copy(want[BlockSize+10:], patch)
		if !bytes.Equal(mustRead(t, s.path("w")), want) {
			t.Fatal("read back differs")
		}
		os.Remove(s.path("w"))
	})

	t.Run("rename", func(t *testing.T) {
		a, b := randBytes(3, 50_000), randBytes(4, 70_000)
		os.WriteFile(s.path("r1"), a, 0o644)
		os.WriteFile(s.path("r2"), b, 0o644)
		if err := os.Rename(s.path("r1"), s.path("r2")); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(s.path("r1")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("old name still there: %v", err)
		}
		if !bytes.Equal(mustRead(t, s.path("r2")), a) {
			t.Error("renamed file differs")
		}
		// The replaced file's blocks are free again.
		if want := int64((50_000 + BlockSize - 1) / BlockSize * BlockSize); used(s.fs) != want {
			t.Errorf("after rename over a file %d bytes allocated, want %d", used(s.fs), want)
		}
		os.Mkdir(s.path("dir"), 0o755)
		if err := os.Rename(s.path("r2"), s.path("dir/r3")); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(mustRead(t, s.path("dir/r3")), a) {
			t.Error("file moved to a subdirectory differs")
		}
		os.RemoveAll(s.path("dir"))
	})

	t.Run("truncate", func(t *testing.T) {
		data := randBytes(5, 1<<20)
		os.WriteFile(s.path("t"), data, 0o644)
		if err := os.Truncate(s.path("t"), 10_000); err != nil {
			t.Fatal(err)
		}
		if got := mustRead(t, s.path("t")); !bytes.Equal(got, data[:10_000]) {
			t.Fatalf("after truncate: %d bytes, prefix equal %v", len(got), bytes.Equal(got, data[:min(len(got), 10_000)]))
		}
		if want := int64(3 * BlockSize); used(s.fs) != want {
			t.Errorf("after truncate to 10000 bytes %d allocated, want %d", used(s.fs), want)
		}
		// Growing by truncate makes a hole: no blocks.
		os.Truncate(s.path("t"), 1<<20)
		if want := int64(3 * BlockSize); used(s.fs) != want {
			t.Errorf("after growing truncate %d allocated, want %d", used(s.fs), want)
		}
		got := mustRead(t, s.path("t"))
		if !bytes.Equal(got[10_000:], make([]byte, len(got)-10_000)) {
			t.Error("extended part is not zeros")
		}
		// O_TRUNC on open frees everything.
		fh, err := os.OpenFile(s.path("t"), os.O_WRONLY|os.O_TRUNC, 0)
		if err != nil {
			t.Fatal(err)
		}
		fh.Close()
		if used(s.fs) != 0 {
			t.Errorf("after O_TRUNC %d bytes allocated", used(s.fs))
		}
		os.Remove(s.path("t"))
	})

	t.Run("sparse", func(t *testing.T) {
		fh, err := os.Create(s.path("sparse"))
		if err != nil {
			t.Fatal(err)
		}
		data := randBytes(6, BlockSize)
		if _, err := fh.WriteAt(data, 100<<20); err != nil {
			t.Fatal(err)
		}
		fh.Close()
		st, _ := os.Stat(s.path("sparse"))
		if st.Size() != 100<<20+BlockSize {
			t.Errorf("size %d", st.Size())
		}
		if used(s.fs) != BlockSize {
			t.Errorf("sparse file allocates %d bytes, want one block", used(s.fs))
		}
		fh, _ = os.Open(s.path("sparse"))
		defer fh.Close()
		buf := make([]byte, 1<<20)
		reads := volumeCount(s.fs, models.Read)
		if _, err := fh.ReadAt(buf, 50<<20); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf, make([]byte, len(buf))) {
			t.Error("hole does not read as zeros")
		}
		if volumeCount(s.fs, models.Read) != reads {
			t.Error("reading a hole was charged to the volume")
		}
		got := make([]byte, BlockSize)
		fh.ReadAt(got, 100<<20)
		if !bytes.Equal(got, data) {
			t.Error("data after the hole differs")
		}
		os.Remove(s.path("sparse"))
	})

	t.Run("large", func(t *testing.T) {
		data := randBytes(7, 48<<20)
		if err := os.WriteFile(s.path("large"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(mustRead(t, s.path("large")), data) {
			t.Fatal("48 MiB file differs")
		}
		if n, _, _ := s.fs.Layout("large"); n != 1 {
			t.Errorf("a file written sequentially alone has %d extents, want 1", n)
		}
		os.Remove(s.path("large"))
	})

	t.Run("concurrent-writers", func(t *testing.T) {
		const writers, size, chunk = 8, 4 << 20, 64 << 10
		var wg sync.WaitGroup
		errs := make(chan error, 2*writers)
		shared, err := os.Create(s.path("shared"))
		if err != nil {
			t.Fatal(err)
		}
		defer shared.Close()
		for w := range writers {
			wg.Go(func() {
				data := randBytes(uint64(100+w), size)
				fh, err := os.Create(s.path(fmt.Sprint("w", w)))
				if err != nil {
					errs <- err
					return
				}
				defer fh.Close()
				for off := 0; off < size; off += chunk {
					if _, err := fh.Write(data[off : off+chunk]); err != nil {
						errs <- err
						return
					}
					// Interleave with the other writers in a shared file.
					if _, err := shared.WriteAt(data[off:off+chunk], int64(w*size+off)); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		all := mustRead(t, s.path("shared"))
		for w := range writers {
			data := randBytes(uint64(100+w), size)
			if !bytes.Equal(mustRead(t, s.path(fmt.Sprint("w", w))), data) {
				t.Errorf("writer %d: own file differs", w)
			}
			if !bytes.Equal(all[w*size:(w+1)*size], data) {
				t.Errorf("writer %d: region of the shared file differs", w)
			}
			os.Remove(s.path(fmt.Sprint("w", w)))
		}
		// Interleaved appends fragment the files, as on a real volume.
		if n, _, _ := s.fs.Layout("shared"); n < 2 {
			t.Errorf("shared file written by 8 interleaved writers has %d extents", n)
		}
		os.Remove(s.path("shared"))
	})

	t.Run("10000-files", func(t *testing.T) {
		dir := s.path("many")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				for i := w; i < 10000; i += 4 {
					if err := os.WriteFile(fmt.Sprintf("%s/f%05d", dir, i), []byte{byte(i)}, 0o644); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) != 10000 {
			t.Fatalf("directory lists %d entries, want 10000", len(ents))
		}
		if got := mustRead(t, dir+"/f04242"); !bytes.Equal(got, []byte{byte(4242 % 256)}) {
			t.Errorf("f04242 = %v", got)
		}
		if used(s.fs) != 10000*BlockSize {
			t.Errorf("10000 one-byte files allocate %d bytes, want 10000 blocks", used(s.fs))
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if used(s.fs) != 0 {
			t.Errorf("after deleting them %d bytes allocated", used(s.fs))
		}
	})

	t.Run("state-file-hidden", func(t *testing.T) {
		os.WriteFile(filepath.Join(s.backing, StateFile), []byte("x"), 0o644)
		ents, _ := os.ReadDir(s.mnt)
		for _, e := range ents {
			if e.Name() == StateFile {
				t.Error("state file is listed on the share")
			}
		}
		if _, err := os.Stat(s.path(StateFile)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("state file visible: %v", err)
		}
		if err := os.WriteFile(s.path(StateFile), nil, 0o644); err == nil {
			t.Error("creating the state file through the share succeeded")
		}
		os.Remove(filepath.Join(s.backing, StateFile))
	})

	// Metadata operations are charged to the model.
	for _, op := range []models.Op{models.Create, models.Open, models.Close, models.Remove, models.Stat} {
		if volumeCount(s.fs, op) == 0 {
			t.Errorf("no %v was charged to the volume", op)
		}
	}
	_ = io.EOF
}
