// Package extent maps the bytes of files onto a volume's address space, the
// way a filesystem's block allocator does, so that an emulated share costs
// on the modelled array what the same file access would cost on the real one.
//
// An Allocator owns the free space of an address space of Capacity bytes,
// managed in blocks of BlockSize bytes, and one map per file (keyed by a
// file identity such as an inode number) from the file's logical blocks to
// runs of physical blocks.
//
// # Policy
//
// Writes allocate only the blocks they touch (holes stay unallocated, as in a
// sparse file). A hole is allocated next to the physical end of the file's
// preceding extent when that space is free, so appending and sequential
// writes stay contiguous; otherwise from a roving next-fit cursor, taking the
// first free runs found. Freed blocks return to the free list, where adjacent
// runs coalesce. Fragmentation is therefore not a parameter: it emerges from
// the order of creates, appends and deletes, as it does on a real volume.
//
// # Invariants
//
//   - Free runs are sorted, disjoint, non-adjacent and never overlap an
//     allocated extent; free bytes plus mapped bytes equal the capacity.
//   - An allocation that does not fit fails with ErrNoSpace before it
//     changes anything.
//
// An Allocator is not safe for concurrent use: its owner serialises it.
package extent

import (
	"errors"
	"fmt"
	"sort"
)

// ErrNoSpace: the address space has fewer free blocks than an allocation
// needs. It wraps models.ErrNoSpace's meaning without importing the models.
var ErrNoSpace = errors.New("extent allocator: no space left")

// ErrCorrupt: a saved allocator state cannot be decoded or is inconsistent.
var ErrCorrupt = errors.New("extent allocator: corrupt state")

// Extent maps Length bytes of a file starting at logical offset Logical to
// the address space at Physical. In Map's results Physical is -1 for a hole
// (bytes never written: no device access).
type Extent struct {
	Logical, Physical, Length int64
}

// run is a range of blocks: in a file map, count blocks from logical block
// lb at physical block pb; in the free list, lb is unused.
type run struct {
	lb, pb, n int64
}

// fileMap is a file's extents sorted by logical block, disjoint; adjacent
// runs that are contiguous both logically and physically are merged.
type fileMap struct {
	runs []run
}

// Allocator allocates blocks of an address space to files.
type Allocator struct {
	block  int64
	blocks int64 // capacity in blocks

	free       []run // pb, n; sorted by pb
	freeBlocks int64
	rover      int64 // next-fit cursor (a physical block)

	files map[uint64]*fileMap
}

// New returns an empty allocator for an address space of capacity bytes in
// blocks of block bytes (capacity is rounded down to whole blocks).
func New(capacity, block int64) (*Allocator, error) {
	if block <= 0 || capacity < block {
		return nil, fmt.Errorf("extent allocator: capacity %d with block size %d", capacity, block)
	}
	a := &Allocator{block: block, blocks: capacity / block, files: map[uint64]*fileMap{}}
	a.free = []run{{pb: 0, n: a.blocks}}
	a.freeBlocks = a.blocks
	return a, nil
}

// BlockSize returns the allocation unit in bytes.
func (a *Allocator) BlockSize() int64 { return a.block }

// Capacity returns the allocatable bytes (whole blocks).
func (a *Allocator) Capacity() int64 { return a.blocks * a.block }

// Free returns the bytes not allocated to any file.
func (a *Allocator) Free() int64 { return a.freeBlocks * a.block }

// FreeRuns returns the number of separate free runs: 1 on a fresh volume,
// growing as deletes fragment the free space.
func (a *Allocator) FreeRuns() int { return len(a.free) }

// Files returns the identities of every file that has blocks allocated.
func (a *Allocator) Files() []uint64 {
	ids := make([]uint64, 0, len(a.files))
	for id := range a.files {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// Extents returns the number of extents of a file: 1 for a contiguous file,
// more as it fragments.
func (a *Allocator) Extents(file uint64) int {
	if m := a.files[file]; m != nil {
		return len(m.runs)
	}
	return 0
}

// Allocated returns the bytes allocated to a file.
func (a *Allocator) Allocated(file uint64) int64 {
	var n int64
	if m := a.files[file]; m != nil {
		for _, r := range m.runs {
			n += r.n
		}
	}
	return n * a.block
}

// Start returns the address of a file's first allocated byte (its first
// extent's physical start) and whether it has any block: the address by
// which a filesystem's front end names the file to the model (file
// operations identify their file by the volume address of its first byte).
func (a *Allocator) Start(file uint64) (int64, bool) {
	m := a.files[file]
	if m == nil || len(m.runs) == 0 {
		return 0, false
	}
	return m.runs[0].pb * a.block, true
}

// Next returns the address where the first block of a new file would be
// allocated now (the next-fit cursor's free block), 0 when nothing is free.
func (a *Allocator) Next() int64 {
	if len(a.free) == 0 {
		return 0
	}
	i := sort.Search(len(a.free), func(j int) bool { return a.free[j].pb+a.free[j].n > a.rover })
	if i == len(a.free) {
		i = 0
	}
	if f := a.free[i]; a.rover > f.pb && a.rover < f.pb+f.n {
		return a.rover * a.block
	}
	return a.free[i].pb * a.block
}

// Map appends to dst the extents covering [off, off+n) of a file and returns
// the extended slice. With alloc, holes in the range are allocated first
// (failing with ErrNoSpace, with nothing changed, when they do not fit);
// without, they are returned with Physical -1.
func (a *Allocator) Map(file uint64, off, n int64, alloc bool, dst []Extent) ([]Extent, error) {
	if off < 0 || n < 0 {
		return dst, fmt.Errorf("extent allocator: range [%d, +%d)", off, n)
	}
	if n == 0 {
		return dst, nil
	}
	first, last := off/a.block, (off+n-1)/a.block
	m := a.files[file]
	if alloc {
		if need := last - first + 1 - m.mappedIn(first, last+1); need > 0 {
			if need > a.freeBlocks {
				return dst, fmt.Errorf("%w: %d blocks of %d bytes wanted, %d free", ErrNoSpace, need, a.block, a.freeBlocks)
			}
			if m == nil {
				m = &fileMap{}
				a.files[file] = m
			}
			a.fill(m, first, last+1)
		}
	}
	end := off + n
	for pos := off; pos < end; {
		lb := pos / a.block
		var r run
		var ok bool
		if m != nil {
			r, ok = m.find(lb)
		}
		if !ok {
			// A hole up to the next mapped run (or the end).
			holeEnd := end
			if m != nil {
				if nx, found := m.next(lb); found {
					holeEnd = min(end, nx.lb*a.block)
				}
			}
			dst = appendExtent(dst, Extent{Logical: pos, Physical: -1, Length: holeEnd - pos})
			pos = holeEnd
			continue
		}
		runEnd := min(end, (r.lb+r.n)*a.block)
		phys := r.pb*a.block + (pos - r.lb*a.block)
		dst = appendExtent(dst, Extent{Logical: pos, Physical: phys, Length: runEnd - pos})
		pos = runEnd
	}
	return dst, nil
}

// Fit returns the largest n' <= n such that writing [off, off+n') of the
// file needs no more blocks than are free: the length of the short write a
// nearly full filesystem accepts.
func (a *Allocator) Fit(file uint64, off, n int64) int64 {
	if n <= 0 {
		return 0
	}
	m := a.files[file]
	first, last := off/a.block, (off+n-1)/a.block
	if last-first+1-m.mappedIn(first, last+1) <= a.freeBlocks {
		return n
	}
	need := int64(0)
	for b := first; b <= last; b++ {
		if m.mappedIn(b, b+1) == 0 {
			if need == a.freeBlocks {
				return max(0, b*a.block-off)
			}
			need++
		}
	}
	return n
}

// appendExtent appends e, merging it with the previous extent when both are
// holes or physically contiguous.
func appendExtent(dst []Extent, e Extent) []Extent {
	if k := len(dst); k > 0 {
		p := &dst[k-1]
		if p.Logical+p.Length == e.Logical &&
			((p.Physical < 0 && e.Physical < 0) || (p.Physical >= 0 && p.Physical+p.Length == e.Physical)) {
			p.Length += e.Length
			return dst
		}
	}
	return append(dst, e)
}

// Truncate frees the blocks of a file that lie wholly at or beyond size.
func (a *Allocator) Truncate(file uint64, size int64) {
	a.Punch(file, (size+a.block-1)/a.block*a.block, -1)
}

// Punch frees the blocks of a file that lie wholly inside [off, off+n);
// n < 0 means to the end of the file.
func (a *Allocator) Punch(file uint64, off, n int64) {
	m := a.files[file]
	if m == nil {
		return
	}
	lo := (off + a.block - 1) / a.block
	hi := int64(1<<62) / a.block
	if n >= 0 {
		hi = (off + n) / a.block
	}
	if lo >= hi {
		return
	}
	kept := m.runs[:0:0]
	for _, r := range m.runs {
		rEnd := r.lb + r.n
		if rEnd <= lo || r.lb >= hi {
			kept = append(kept, r)
			continue
		}
		if r.lb < lo {
			kept = append(kept, run{lb: r.lb, pb: r.pb, n: lo - r.lb})
		}
		cutLo, cutHi := max(r.lb, lo), min(rEnd, hi)
		a.release(r.pb+(cutLo-r.lb), cutHi-cutLo)
		if rEnd > hi {
			kept = append(kept, run{lb: hi, pb: r.pb + (hi - r.lb), n: rEnd - hi})
		}
	}
	m.runs = kept
	if len(m.runs) == 0 {
		delete(a.files, file)
	}
}

// Remove frees every block of a file.
func (a *Allocator) Remove(file uint64) {
	m := a.files[file]
	if m == nil {
		return
	}
	for _, r := range m.runs {
		a.release(r.pb, r.n)
	}
	delete(a.files, file)
}

// mappedIn counts the blocks of [lo, hi) that are mapped; a nil map has none.
func (m *fileMap) mappedIn(lo, hi int64) int64 {
	if m == nil {
		return 0
	}
	var n int64
	i := sort.Search(len(m.runs), func(i int) bool { return m.runs[i].lb+m.runs[i].n > lo })
	for ; i < len(m.runs) && m.runs[i].lb < hi; i++ {
		r := m.runs[i]
		n += min(r.lb+r.n, hi) - max(r.lb, lo)
	}
	return n
}

// find returns the run containing logical block lb.
func (m *fileMap) find(lb int64) (run, bool) {
	i := sort.Search(len(m.runs), func(i int) bool { return m.runs[i].lb+m.runs[i].n > lb })
	if i < len(m.runs) && m.runs[i].lb <= lb {
		return m.runs[i], true
	}
	return run{}, false
}

// next returns the first run starting after logical block lb.
func (m *fileMap) next(lb int64) (run, bool) {
	i := sort.Search(len(m.runs), func(i int) bool { return m.runs[i].lb > lb })
	if i < len(m.runs) {
		return m.runs[i], true
	}
	return run{}, false
}

// fill allocates every unmapped block of [lo, hi) in m. The caller has
// checked that enough blocks are free.
func (a *Allocator) fill(m *fileMap, lo, hi int64) {
	for lb := lo; lb < hi; {
		if r, ok := m.find(lb); ok {
			lb = r.lb + r.n
			continue
		}
		holeEnd := hi
		if nx, ok := m.next(lb); ok {
			holeEnd = min(hi, nx.lb)
		}
		// Goal: right after the physical end of the extent before lb.
		goal := int64(-1)
		if i := sort.Search(len(m.runs), func(i int) bool { return m.runs[i].lb >= lb }); i > 0 {
			p := m.runs[i-1]
			goal = p.pb + p.n + (lb - (p.lb + p.n))
		}
		for lb < holeEnd {
			pb, n := a.take(goal, holeEnd-lb)
			m.insert(run{lb: lb, pb: pb, n: n})
			lb += n
			goal = pb + n
		}
	}
}

// insert adds r to the map, merging it with contiguous neighbours.
func (m *fileMap) insert(r run) {
	i := sort.Search(len(m.runs), func(i int) bool { return m.runs[i].lb > r.lb })
	if i > 0 {
		if p := &m.runs[i-1]; p.lb+p.n == r.lb && p.pb+p.n == r.pb {
			p.n += r.n
			if i < len(m.runs) {
				if q := m.runs[i]; p.lb+p.n == q.lb && p.pb+p.n == q.pb {
					p.n += q.n
					m.runs = append(m.runs[:i], m.runs[i+1:]...)
				}
			}
			return
		}
	}
	if i < len(m.runs) {
		if q := &m.runs[i]; r.lb+r.n == q.lb && r.pb+r.n == q.pb {
			q.lb, q.pb, q.n = r.lb, r.pb, q.n+r.n
			return
		}
	}
	m.runs = append(m.runs, run{})
	copy(m.runs[i+1:], m.runs[i:])
	m.runs[i] = r
}

// take removes up to want blocks from the free list — at goal when goal is
// free, else from the first free run at or after the rover (wrapping) — and
// returns where they start and how many were taken (at least one).
func (a *Allocator) take(goal, want int64) (pb, n int64) {
	i := -1
	if goal >= 0 {
		j := sort.Search(len(a.free), func(j int) bool { return a.free[j].pb+a.free[j].n > goal })
		if j < len(a.free) && a.free[j].pb <= goal {
			i = j
		}
	}
	if i < 0 {
		goal = -1
		i = sort.Search(len(a.free), func(j int) bool { return a.free[j].pb+a.free[j].n > a.rover })
		if i == len(a.free) {
			i = 0
		}
	}
	f := &a.free[i]
	start := f.pb
	if goal >= 0 {
		start = goal
	} else if a.rover > f.pb && a.rover < f.pb+f.n {
		start = a.rover
	}
	n = min(want, f.pb+f.n-start)
	a.carve(i, start, n)
	a.freeBlocks -= n
	a.rover = start + n
	return start, n
}

// carve removes [pb, pb+n) from free run i, which contains it.
func (a *Allocator) carve(i int, pb, n int64) {
	f := a.free[i]
	left := run{pb: f.pb, n: pb - f.pb}
	right := run{pb: pb + n, n: f.pb + f.n - (pb + n)}
	switch {
	case left.n > 0 && right.n > 0:
		a.free[i] = left
		a.free = append(a.free, run{})
		copy(a.free[i+2:], a.free[i+1:])
		a.free[i+1] = right
	case left.n > 0:
		a.free[i] = left
	case right.n > 0:
		a.free[i] = right
	default:
		a.free = append(a.free[:i], a.free[i+1:]...)
	}
}

// release returns [pb, pb+n) to the free list, coalescing neighbours.
func (a *Allocator) release(pb, n int64) {
	if n <= 0 {
		return
	}
	a.freeBlocks += n
	i := sort.Search(len(a.free), func(i int) bool { return a.free[i].pb > pb })
	joinPrev := i > 0 && a.free[i-1].pb+a.free[i-1].n == pb
	joinNext := i < len(a.free) && pb+n == a.free[i].pb
	switch {
	case joinPrev && joinNext:
		a.free[i-1].n += n + a.free[i].n
		a.free = append(a.free[:i], a.free[i+1:]...)
	case joinPrev:
		a.free[i-1].n += n
	case joinNext:
		a.free[i].pb, a.free[i].n = pb, a.free[i].n+n
	default:
		a.free = append(a.free, run{})
		copy(a.free[i+1:], a.free[i:])
		a.free[i] = run{pb: pb, n: n}
	}
}

// check verifies the invariants; tests call it after every operation.
func (a *Allocator) check() error {
	var freeN int64
	for i, f := range a.free {
		if f.n <= 0 || f.pb < 0 || f.pb+f.n > a.blocks {
			return fmt.Errorf("free run %d %+v out of bounds", i, f)
		}
		if i > 0 && a.free[i-1].pb+a.free[i-1].n >= f.pb {
			return fmt.Errorf("free runs %d and %d overlap or touch", i-1, i)
		}
		freeN += f.n
	}
	if freeN != a.freeBlocks {
		return fmt.Errorf("free list holds %d blocks, counter says %d", freeN, a.freeBlocks)
	}
	used := make([]run, 0)
	for id, m := range a.files {
		if len(m.runs) == 0 {
			return fmt.Errorf("file %d has an empty map", id)
		}
		for i, r := range m.runs {
			if r.n <= 0 || (i > 0 && m.runs[i-1].lb+m.runs[i-1].n > r.lb) {
				return fmt.Errorf("file %d run %d %+v misordered", id, i, r)
			}
			used = append(used, r)
		}
	}
	used = append(used, a.free...)
	sort.Slice(used, func(i, j int) bool { return used[i].pb < used[j].pb })
	var next int64
	for _, r := range used {
		if r.pb != next {
			return fmt.Errorf("address space not tiled at block %d (run at %d)", next, r.pb)
		}
		next = r.pb + r.n
	}
	if next != a.blocks {
		return fmt.Errorf("address space tiled to %d of %d blocks", next, a.blocks)
	}
	return nil
}
