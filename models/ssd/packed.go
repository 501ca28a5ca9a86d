package ssd

// packedArray is a fixed-width bit-packed array of unsigned integers whose
// storage is allocated in chunks on first write, so that a 4 TB drive's
// mapping tables cost memory only for the part that has been written, and
// a full one costs width bits per entry (no padding to bytes or words).
// Unwritten entries read as 0.
type packedArray struct {
	width  uint
	mask   uint64
	chunks [][]uint64
}

// chunkShift sets 2^12 entries per chunk: width*2^12 bits is a whole number
// of words, so no entry straddles two chunks. The reverse map is written
// where blocks are open — on every die at once, and an SLC-mode block of
// a QLC drive fills only a quarter of its pages — so a chunk much larger
// than a block's pages would be allocated (and zeroed) for a few entries:
// with 2^16 entries a sweep point of six QLC SSDs held 1.9 GB of mostly
// empty chunks. The chunk table costs a slice header per 2^12 entries
// (about 1.5 MB for a 1 TB drive's reverse map).
const chunkShift = 12

func newPackedArray(n int64, width uint) packedArray {
	nchunks := (n + 1<<chunkShift - 1) >> chunkShift
	return packedArray{width: width, mask: 1<<width - 1, chunks: make([][]uint64, nchunks)}
}

func (a *packedArray) get(i int64) uint64 {
	c := a.chunks[i>>chunkShift]
	if c == nil {
		return 0
	}
	bit := uint64(i&(1<<chunkShift-1)) * uint64(a.width)
	w, off := bit>>6, bit&63
	v := c[w] >> off
	if off+uint64(a.width) > 64 {
		v |= c[w+1] << (64 - off)
	}
	return v & a.mask
}

func (a *packedArray) set(i int64, v uint64) {
	c := a.chunks[i>>chunkShift]
	if c == nil {
		if v == 0 {
			return
		}
		c = make([]uint64, (uint64(a.width)<<chunkShift)/64+1)
		a.chunks[i>>chunkShift] = c
	}
	bit := uint64(i&(1<<chunkShift-1)) * uint64(a.width)
	w, off := bit>>6, bit&63
	c[w] = c[w]&^(a.mask<<off) | v<<off
	if off+uint64(a.width) > 64 {
		sh := 64 - off
		c[w+1] = c[w+1]&^(a.mask>>sh) | v>>sh
	}
}

// reset drops all storage: every entry reads 0 again.
func (a *packedArray) reset() { clear(a.chunks) }
