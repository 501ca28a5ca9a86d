// Package storetest is the conformance suite that every emu.Store — a
// memory store, a file, a volatile cache, an emulated Volume, a file on a
// FUSE mount of a share (fusefs), an iSCSI LUN seen through the
// initiator and a Store adapter (iscsi) — must pass.
package storetest

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/models"
)

// Size is the size of the stores the suite asks for: big enough for
// several 64 KiB chunks and a few megabytes of random I/O.
const Size = 4 << 20

// Run runs every conformance test against stores made by newStore, which
// returns an empty store of the given size; the suite closes it.
func Run(t *testing.T, newStore func(t *testing.T, size int64) emu.Store) {
	tests := []struct {
		name string
		fn   func(*testing.T, emu.Store)
	}{
		{"ZerosWhenUnwritten", testZeros},
		{"RoundTrip", testRoundTrip},
		{"RandomAgainstReference", testReference},
		{"OutOfRange", testOutOfRange},
		{"Trim", testTrim},
		{"ConcurrentWriters", testConcurrent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newStore(t, Size)
			t.Cleanup(func() { s.Close() })
			if s.Size() != Size {
				t.Fatalf("Size() = %d, want %d", s.Size(), Size)
			}
			tc.fn(t, s)
		})
	}
}

func testZeros(t *testing.T, s emu.Store) {
	p := bytes.Repeat([]byte{0xAA}, 100_000)
	if _, err := s.ReadAt(p, Size-int64(len(p))); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(p, make([]byte, len(p))) {
		t.Fatal("unwritten bytes are not zero")
	}
}

func testRoundTrip(t *testing.T, s emu.Store) {
	w := pattern(1, 200_000)
	if n, err := s.WriteAt(w, 12345); err != nil || n != len(w) {
		t.Fatalf("WriteAt = %d, %v", n, err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	r := make([]byte, len(w))
	if n, err := s.ReadAt(r, 12345); err != nil || n != len(r) {
		t.Fatalf("ReadAt = %d, %v", n, err)
	}
	if !bytes.Equal(r, w) {
		t.Fatal("read back differs from what was written")
	}
	// The last byte of the store is addressable.
	if _, err := s.WriteAt([]byte{7}, Size-1); err != nil {
		t.Fatal(err)
	}
	b := []byte{0}
	if _, err := s.ReadAt(b, Size-1); err != nil || b[0] != 7 {
		t.Fatalf("last byte = %d, %v", b[0], err)
	}
}

// testReference compares the store with a plain byte slice under random
// overlapping writes, trims and reads of random sizes.
func testReference(t *testing.T, s emu.Store) {
	ref := make([]byte, Size)
	rng := rand.New(rand.NewPCG(42, 1))
	tr, canTrim := s.(emu.Trimmer)
	for i := range 300 {
		off := rng.Int64N(Size)
		n := min(rng.Int64N(3*65536)+1, Size-off)
		switch k := rng.IntN(10); {
		case k < 5:
			w := pattern(uint64(i), int(n))
			if _, err := s.WriteAt(w, off); err != nil {
				t.Fatalf("op %d: WriteAt(%d, +%d): %v", i, off, n, err)
			}
			copy(ref[off:], w)
		case k < 6 && canTrim:
			if err := tr.Trim(off, n); err != nil {
				t.Fatalf("op %d: Trim(%d, +%d): %v", i, off, n, err)
			}
			clear(ref[off : off+n])
		case k < 7:
			if err := s.Sync(); err != nil {
				t.Fatal(err)
			}
		default:
			r := make([]byte, n)
			if _, err := s.ReadAt(r, off); err != nil {
				t.Fatalf("op %d: ReadAt(%d, +%d): %v", i, off, n, err)
			}
			if !bytes.Equal(r, ref[off:off+n]) {
				t.Fatalf("op %d: ReadAt(%d, +%d) differs from the reference", i, off, n)
			}
		}
	}
}

func testOutOfRange(t *testing.T, s emu.Store) {
	p := make([]byte, 10)
	for _, off := range []int64{-1, Size - 5, Size, Size + 1<<30} {
		if _, err := s.ReadAt(p, off); !errors.Is(err, models.ErrOutOfRange) {
			t.Errorf("ReadAt(+10 at %d) = %v, want ErrOutOfRange", off, err)
		}
		if _, err := s.WriteAt(p, off); !errors.Is(err, models.ErrOutOfRange) {
			t.Errorf("WriteAt(+10 at %d) = %v, want ErrOutOfRange", off, err)
		}
	}
}

func testTrim(t *testing.T, s emu.Store) {
	tr, ok := s.(emu.Trimmer)
	if !ok {
		return // trimming is optional
	}
	w := pattern(3, 300_000)
	if _, err := s.WriteAt(w, 1000); err != nil {
		t.Fatal(err)
	}
	if err := tr.Trim(5000, 200_000); err != nil {
		t.Fatal(err)
	}
	r := make([]byte, len(w))
	if _, err := s.ReadAt(r, 1000); err != nil {
		t.Fatal(err)
	}
	want := append([]byte(nil), w...)
	clear(want[4000:204_000])
	if !bytes.Equal(r, want) {
		t.Fatal("after Trim the range is not zero, or bytes outside it changed")
	}
}

func testConcurrent(t *testing.T, s emu.Store) {
	const writers, region = 8, Size / 8
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			data := pattern(uint64(100+w), region)
			for off := 0; off < region; off += 16 << 10 {
				if _, err := s.WriteAt(data[off:off+16<<10], int64(w*region+off)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for w := range writers {
		r := make([]byte, region)
		if _, err := s.ReadAt(r, int64(w*region)); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(r, pattern(uint64(100+w), region)) {
			t.Fatalf("writer %d's region is corrupt", w)
		}
	}
}

// pattern returns n bytes that depend on seed and position, so misplaced
// data is caught.
func pattern(seed uint64, n int) []byte {
	p := make([]byte, n)
	rng := rand.New(rand.NewPCG(seed, 7))
	for i := 0; i < n; i += 8 {
		v := rng.Uint64()
		for j := 0; j < 8 && i+j < n; j++ {
			p[i+j] = byte(v >> (8 * j))
		}
	}
	return p
}
