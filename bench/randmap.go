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
// cleared. A second level marks the words that are full, so the search
// for a free block skips 4096 used blocks per word it reads (fio's axmap
// is layered the same way).
type randMap struct {
	bits []uint64
	full []uint64 // bit w: bits[w] is all ones
	n    uint64   // blocks
	used uint64
}

// Bounds of the random maps (bits): per job instance, and over a group's
// instances. A job over more blocks than that draws from a permutation
// of the blocks instead (still each block once per pass).
const (
	maxRandMapBlocks      = 1 << 25 // 4 MiB: 128 GiB of 4 KiB blocks
	maxGroupRandMapBlocks = 1 << 30 // 128 MiB
)

func newRandMap(n uint64) *randMap {
	w := (n + 63) / 64
	m := &randMap{bits: make([]uint64, w), full: make([]uint64, (w+63)/64), n: n}
	m.reset()
	return m
}

// reset starts a pass: every block free. The bits of a partial last word
// past n count as used, so that a word is full when its blocks are.
func (m *randMap) reset() {
	clear(m.bits)
	clear(m.full)
	m.used = 0
	if r := m.n % 64; r != 0 {
		m.bits[len(m.bits)-1] = ^uint64(0) << r
	}
}

// pick draws a block that this pass has not used.
func (m *randMap) pick(rng *rand.Rand) uint64 {
	if m.used >= m.n {
		m.reset()
	}
	b := rng.Uint64N(m.n)
	w := b / 64
	if free := ^m.bits[w] &^ (1<<(b%64) - 1); free != 0 {
		return w*64 + uint64(bits.TrailingZeros64(free))
	}
	next := w + 1
	if next == uint64(len(m.bits)) {
		next = 0
	}
	if c, ok := m.nextFreeWord(next); ok {
		return c*64 + uint64(bits.TrailingZeros64(^m.bits[c]))
	}
	return b // unreachable: used < n
}

// nextFreeWord returns the first word at or after start, wrapping, that
// has a free block.
func (m *randMap) nextFreeWord(start uint64) (uint64, bool) {
	words := uint64(len(m.bits))
	for range 2 {
		for c := start; c < words; {
			s := ^m.full[c/64] >> (c % 64)
			if s == 0 {
				c = (c/64 + 1) * 64
				continue
			}
			if c += uint64(bits.TrailingZeros64(s)); c < words {
				return c, true
			}
			break
		}
		start = 0
	}
	return 0, false
}

// mark marks blocks [b, b+k) used.
func (m *randMap) mark(b, k uint64) {
	for i := b; i < min(b+k, m.n); i++ {
		w := i / 64
		if m.bits[w]&(1<<(i%64)) == 0 {
			m.bits[w] |= 1 << (i % 64)
			m.used++
			if m.bits[w] == ^uint64(0) {
				m.full[w/64] |= 1 << (w % 64)
			}
		}
	}
}
