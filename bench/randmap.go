package bench

import (
	"math/bits"
	"math/rand/v2"
)

// randMap is fio's random map: without norandommap a uniform random job
// covers every block of a file once per pass. A block is drawn at random;
// when it was used in this pass the next free block after it (wrapping)
// is taken instead, as fio's axmap_next_free does; an I/O marks every
// block it covers. When every block is used the pass ends and the map is
// cleared.
type randMap struct {
	bits []uint64
	n    uint64 // blocks
	used uint64
}

// maxRandMapBlocks bounds a stream's random maps (bits summed over its
// files: 32 MiB). A job over more blocks than that draws from a
// permutation of the blocks instead (still each block once per pass).
const maxRandMapBlocks = 1 << 28

func newRandMap(n uint64) *randMap {
	return &randMap{bits: make([]uint64, (n+63)/64), n: n}
}

// pick draws a block that this pass has not used.
func (m *randMap) pick(rng *rand.Rand) uint64 {
	if m.used >= m.n {
		clear(m.bits)
		m.used = 0
	}
	b := rng.Uint64N(m.n)
	if m.bits[b/64]&(1<<(b%64)) == 0 {
		return b
	}
	// the next free block at or after b, wrapping
	w := b / 64
	word := ^m.bits[w] &^ (1<<(b%64) - 1)
	for range len(m.bits) + 1 {
		if word != 0 {
			if f := w*64 + uint64(bits.TrailingZeros64(word)); f < m.n {
				return f
			}
		}
		w++
		if w == uint64(len(m.bits)) {
			w = 0
		}
		word = ^m.bits[w]
	}
	return b // unreachable: used < n
}

// mark marks blocks [b, b+k) used.
func (m *randMap) mark(b, k uint64) {
	for i := b; i < min(b+k, m.n); i++ {
		if m.bits[i/64]&(1<<(i%64)) == 0 {
			m.bits[i/64] |= 1 << (i % 64)
			m.used++
		}
	}
}
