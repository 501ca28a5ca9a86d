package extent

import (
	"errors"
	"math/rand/v2"
	"testing"
)

const blk = 4096

func mustNew(t *testing.T, capacity int64) *Allocator {
	t.Helper()
	a, err := New(capacity, blk)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestSequentialWritesStayContiguous(t *testing.T) {
	a := mustNew(t, 1<<30)
	// Two files appended in interleaved 64 KiB writes: each stays in few
	// extents only if the allocator aims at the file's own end.
	for i := int64(0); i < 64; i++ {
		for _, f := range []uint64{1, 2} {
			if _, err := a.Map(f, i*65536, 65536, true, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	// With interleaving, the goal block of one file is taken by the other,
	// so each 64 KiB append lands in a new extent: that is the real
	// behaviour of a simple allocator without preallocation.
	if got := a.Extents(1); got != 64 {
		t.Errorf("interleaved appends: file 1 has %d extents, want 64", got)
	}
	// A single writer stays in one extent.
	for i := int64(0); i < 64; i++ {
		if _, err := a.Map(3, i*65536, 65536, true, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got := a.Extents(3); got != 1 {
		t.Errorf("single sequential writer: %d extents, want 1", got)
	}
	ext, _ := a.Map(3, 0, 64*65536, false, nil)
	if len(ext) != 1 || ext[0].Length != 64*65536 {
		t.Errorf("map of a contiguous file = %+v, want one extent of 4 MiB", ext)
	}
	if err := a.check(); err != nil {
		t.Fatal(err)
	}
}

func TestHolesAndPartialBlocks(t *testing.T) {
	a := mustNew(t, 1<<20)
	// A write of 10 bytes at 5000 allocates block 1 only.
	ext, err := a.Map(7, 5000, 10, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(ext) != 1 || ext[0].Physical%blk != 5000%blk || ext[0].Length != 10 {
		t.Fatalf("Map = %+v", ext)
	}
	if got := a.Allocated(7); got != blk {
		t.Errorf("allocated %d, want one block", got)
	}
	// Reading [0, 3*blk) sees a hole, the block, a hole.
	ext, _ = a.Map(7, 0, 3*blk, false, nil)
	if len(ext) != 3 || ext[0].Physical != -1 || ext[1].Physical < 0 || ext[2].Physical != -1 {
		t.Fatalf("read map = %+v, want hole, data, hole", ext)
	}
	var sum int64
	for _, e := range ext {
		sum += e.Length
	}
	if sum != 3*blk {
		t.Errorf("extents cover %d bytes, want %d", sum, 3*blk)
	}
}

func TestNoSpaceChangesNothing(t *testing.T) {
	a := mustNew(t, 16*blk)
	if _, err := a.Map(1, 0, 10*blk, true, nil); err != nil {
		t.Fatal(err)
	}
	before := a.Free()
	_, err := a.Map(2, 0, 7*blk, true, nil)
	if !errors.Is(err, ErrNoSpace) {
		t.Fatalf("over-allocation: err = %v, want ErrNoSpace", err)
	}
	if a.Free() != before || a.Allocated(2) != 0 {
		t.Errorf("failed allocation changed state: free %d→%d, file 2 holds %d", before, a.Free(), a.Allocated(2))
	}
	// A write that does not fit can be cut short to what does.
	if got := a.Fit(2, 100, 7*blk); got != 6*blk-100 {
		t.Errorf("Fit = %d, want %d (six free blocks from offset 100)", got, 6*blk-100)
	}
	if got := a.Fit(1, 0, 10*blk); got != 10*blk {
		t.Errorf("Fit of an allocated range = %d, want all of it", got)
	}
	// Exactly the rest fits.
	if _, err := a.Map(2, 0, 6*blk, true, nil); err != nil {
		t.Fatalf("exact fit: %v", err)
	}
	if a.Free() != 0 {
		t.Errorf("free = %d after filling", a.Free())
	}
}

func TestDeleteFragmentsFreeSpace(t *testing.T) {
	a := mustNew(t, 100*blk)
	for f := uint64(0); f < 10; f++ {
		if _, err := a.Map(f, 0, 10*blk, true, nil); err != nil {
			t.Fatal(err)
		}
	}
	for f := uint64(0); f < 10; f += 2 {
		a.Remove(f)
	}
	if a.FreeRuns() != 5 {
		t.Errorf("free runs after deleting every other file = %d, want 5", a.FreeRuns())
	}
	// A 30-block file must now be split over three holes.
	if _, err := a.Map(100, 0, 30*blk, true, nil); err != nil {
		t.Fatal(err)
	}
	if got := a.Extents(100); got != 3 {
		t.Errorf("file written into fragmented space has %d extents, want 3", got)
	}
	if err := a.check(); err != nil {
		t.Fatal(err)
	}
}

// TestAgainstReference runs random operations against the allocator and a
// trivial per-block reference (owner of each logical block, and which
// physical blocks are in use) and checks they agree.
func TestAgainstReference(t *testing.T) {
	const blocks = 512
	a := mustNew(t, blocks*blk)
	rng := rand.New(rand.NewPCG(1, 2))
	mapped := map[uint64]map[int64]int64{} // file → logical block → physical block
	for step := range 5000 {
		f := uint64(rng.IntN(8))
		switch op := rng.IntN(10); {
		case op < 6:
			off := rng.Int64N(64 * blk)
			n := rng.Int64N(8*blk) + 1
			ext, err := a.Map(f, off, n, true, nil)
			if errors.Is(err, ErrNoSpace) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if mapped[f] == nil {
				mapped[f] = map[int64]int64{}
			}
			for _, e := range ext {
				if e.Physical < 0 {
					t.Fatalf("step %d: hole after allocation: %+v", step, ext)
				}
				for p := e.Logical; p < e.Logical+e.Length; p++ {
					lb, pb := p/blk, (e.Physical+p-e.Logical)/blk
					if old, ok := mapped[f][lb]; ok && old != pb {
						t.Fatalf("step %d: file %d block %d moved from %d to %d", step, f, lb, old, pb)
					}
					mapped[f][lb] = pb
				}
			}
		case op < 8:
			size := rng.Int64N(64 * blk)
			a.Truncate(f, size)
			for lb := range mapped[f] {
				if lb*blk >= size {
					delete(mapped[f], lb)
				}
			}
		default:
			a.Remove(f)
			delete(mapped, f)
		}
		if err := a.check(); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		used := map[int64]bool{}
		var total int64
		for file, m := range mapped {
			for _, pb := range m {
				if used[pb] {
					t.Fatalf("step %d: physical block %d used twice", step, pb)
				}
				used[pb] = true
			}
			total += int64(len(m))
			if got := a.Allocated(file); got != int64(len(m))*blk {
				t.Fatalf("step %d: file %d allocated %d, reference %d", step, file, got, int64(len(m))*blk)
			}
		}
		if a.Free() != (blocks-total)*blk {
			t.Fatalf("step %d: free %d, reference %d", step, a.Free(), (blocks-total)*blk)
		}
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	a := mustNew(t, 1000*blk)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		f := uint64(rng.IntN(20))
		if rng.IntN(4) == 0 {
			a.Remove(f)
			continue
		}
		if _, err := a.Map(f, rng.Int64N(100*blk), rng.Int64N(10*blk)+1, true, nil); err != nil && !errors.Is(err, ErrNoSpace) {
			t.Fatal(err)
		}
	}
	data, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	b, err := Unmarshal(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.check(); err != nil {
		t.Fatal(err)
	}
	if b.Free() != a.Free() || b.FreeRuns() != a.FreeRuns() || len(b.Files()) != len(a.Files()) {
		t.Errorf("decoded: free %d runs %d files %d; want %d %d %d", b.Free(), b.FreeRuns(), len(b.Files()), a.Free(), a.FreeRuns(), len(a.Files()))
	}
	for _, f := range a.Files() {
		x, _ := a.Map(f, 0, 200*blk, false, nil)
		y, _ := b.Map(f, 0, 200*blk, false, nil)
		if len(x) != len(y) {
			t.Fatalf("file %d: %v vs %v", f, x, y)
		}
		for i := range x {
			if x[i] != y[i] {
				t.Fatalf("file %d extent %d: %v vs %v", f, i, x[i], y[i])
			}
		}
	}
	data[len(data)/2] ^= 1
	if _, err := Unmarshal(data); !errors.Is(err, ErrCorrupt) {
		t.Errorf("flipped bit: err = %v, want ErrCorrupt", err)
	}
}

func FuzzUnmarshal(f *testing.F) {
	a, _ := New(100*blk, blk)
	a.Map(1, 0, 10*blk, true, nil)
	data, _ := a.MarshalBinary()
	f.Add(data)
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := Unmarshal(data)
		if err != nil {
			return
		}
		if err := b.check(); err != nil {
			t.Fatalf("accepted an inconsistent state: %v", err)
		}
	})
}

// TestStartAndNext checks the addresses by which a front end names a file:
// a new file's first block lands where Next said, Start then returns it,
// and a second file starts right after the first.
func TestStartAndNext(t *testing.T) {
	a := mustNew(t, 1<<20)
	if _, ok := a.Start(1); ok {
		t.Error("Start of a file without blocks: ok")
	}
	for f := uint64(1); f <= 3; f++ {
		next := a.Next()
		if _, err := a.Map(f, 0, 3*blk, true, nil); err != nil {
			t.Fatal(err)
		}
		start, ok := a.Start(f)
		if !ok || start != next {
			t.Errorf("file %d: Start %d, %v; Next said %d", f, start, ok, next)
		}
		if want := int64(f-1) * 3 * blk; start != want {
			t.Errorf("file %d starts at %d, want %d", f, start, want)
		}
	}
	// Freeing the first file leaves the cursor after the third: the next
	// file goes there, not into the hole.
	a.Remove(1)
	if got, want := a.Next(), int64(9*blk); got != want {
		t.Errorf("Next after a delete %d, want %d", got, want)
	}
	// A file whose first block is a hole starts at its first mapped block.
	if _, err := a.Map(4, 5*blk, blk, true, nil); err != nil {
		t.Fatal(err)
	}
	if start, _ := a.Start(4); start != 9*blk {
		t.Errorf("sparse file starts at %d, want %d", start, 9*blk)
	}
	// Full: Next wraps into the only free run left.
	if _, err := a.Map(5, 0, a.Free()-3*blk, true, nil); err != nil {
		t.Fatal(err)
	}
	if got := a.Next(); got != 0 {
		t.Errorf("Next on a volume whose only free run is at 0: %d", got)
	}
}
