// Package digest hashes a model's answers into one number: the trace
// column of the golden tables (package golden), which pins a row bit for
// bit beside the figures that say what moved.
package digest

import (
	"encoding/binary"
	"hash"
	"hash/fnv"
	"math"

	"github.com/nasemu/nasemu/models"
)

// Digest is a running FNV-1a hash of 64-bit values and strings. The zero
// value is not ready: use New.
type Digest struct {
	h   hash.Hash64
	buf [8]byte
}

// New returns an empty digest.
func New() *Digest { return &Digest{h: fnv.New64a()} }

// Uint adds v as 8 little-endian bytes.
func (d *Digest) Uint(v uint64) {
	binary.LittleEndian.PutUint64(d.buf[:], v)
	d.h.Write(d.buf[:])
}

// Int adds v as 8 little-endian bytes.
func (d *Digest) Int(v int64) { d.Uint(uint64(v)) }

// Float adds the bits of v, so that any change of a value shows.
func (d *Digest) Float(v float64) { d.Uint(math.Float64bits(v)) }

// String adds the bytes of s.
func (d *Digest) String(s string) { d.h.Write([]byte(s)) }

// Counters adds each counter's name and the bits of its value.
func (d *Digest) Counters(cs []models.Counter) {
	for _, c := range cs {
		d.String(c.Name)
		d.Float(c.Value)
	}
}

// Sum returns the digest of everything added so far.
func (d *Digest) Sum() uint64 { return d.h.Sum64() }
