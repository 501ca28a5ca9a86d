package emu

import (
	"fmt"
	"io"
	"iter"
	"sync"

	"github.com/nasemu/nasemu/models"
)

// Store holds a volume's bytes. Reads of bytes never written return zeros.
// Offsets beyond Size are errors wrapping models.ErrOutOfRange.
// Implementations are safe for concurrent use.
type Store interface {
	io.ReaderAt
	io.WriterAt
	// Sync makes every completed write durable.
	Sync() error
	// Size returns the store's size in bytes.
	Size() int64
	// Close releases the store.
	io.Closer
}

// Trimmer is implemented by stores that can forget a range: later reads of
// it return zeros and the space is released.
type Trimmer interface {
	Trim(off, n int64) error
}

// checkRange validates an access of n bytes at off on a store of size.
func checkRange(off, n, size int64) error {
	if off < 0 || n < 0 || off+n > size || off+n < off {
		return fmt.Errorf("%w: [%d, +%d) on a store of %d bytes", models.ErrOutOfRange, off, n, size)
	}
	return nil
}

// memChunk is the allocation unit of a MemStore: small enough that sparse
// random writes stay cheap, large enough that the map stays small.
const memChunk = 64 << 10

// MemStore is a sparse in-memory store: only chunks that were written take
// memory.
type MemStore struct {
	mu     sync.RWMutex
	size   int64
	chunks map[int64]*[memChunk]byte
	closed bool
}

var (
	_ Store   = (*MemStore)(nil)
	_ Trimmer = (*MemStore)(nil)
)

// NewMemStore returns an empty sparse store of the given size.
func NewMemStore(size int64) *MemStore {
	return &MemStore{size: size, chunks: map[int64]*[memChunk]byte{}}
}

// Size implements Store.
func (s *MemStore) Size() int64 { return s.size }

// ReadAt implements io.ReaderAt.
func (s *MemStore) ReadAt(p []byte, off int64) (int, error) {
	if err := checkRange(off, int64(len(p)), s.size); err != nil {
		return 0, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return 0, ErrClosed
	}
	for at, q := range pieces(p, off) {
		if c := s.chunks[at.idx]; c != nil {
			copy(q, c[at.in:])
		} else {
			clear(q)
		}
	}
	return len(p), nil
}

// WriteAt implements io.WriterAt.
func (s *MemStore) WriteAt(p []byte, off int64) (int, error) {
	if err := checkRange(off, int64(len(p)), s.size); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, ErrClosed
	}
	for at, q := range pieces(p, off) {
		c := s.chunks[at.idx]
		if c == nil {
			c = new([memChunk]byte)
			s.chunks[at.idx] = c
		}
		copy(c[at.in:], q)
	}
	return len(p), nil
}

// chunkPos is a place in a MemStore: a chunk's index and an offset in it.
type chunkPos struct{ idx, in int64 }

// pieces splits p, at offset off of the store, at chunk boundaries: for
// each piece its place and the part of p it is.
func pieces(p []byte, off int64) iter.Seq2[chunkPos, []byte] {
	return func(yield func(chunkPos, []byte) bool) {
		for done := 0; done < len(p); {
			pos := off + int64(done)
			idx, in := pos/memChunk, pos%memChunk
			n := min(len(p)-done, memChunk-int(in))
			if !yield(chunkPos{idx, in}, p[done:done+n]) {
				return
			}
			done += n
		}
	}
}

// Trim implements Trimmer: whole chunks in the range are freed, partial
// ones zeroed.
func (s *MemStore) Trim(off, n int64) error {
	if err := checkRange(off, n, s.size); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	for pos, end := off, off+n; pos < end; {
		idx, in := pos/memChunk, pos%memChunk
		k := min(end-pos, memChunk-in)
		if c := s.chunks[idx]; c != nil {
			if k == memChunk {
				delete(s.chunks, idx)
			} else {
				clear(c[in : in+k])
			}
		}
		pos += k
	}
	return nil
}

// Sync implements Store; memory is as durable as it gets.
func (s *MemStore) Sync() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	return nil
}

// Close implements Store and frees the memory.
func (s *MemStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed, s.chunks = true, nil
	return nil
}

// Allocated returns the bytes of memory the store holds.
func (s *MemStore) Allocated() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return int64(len(s.chunks)) * memChunk
}

// writeZeros writes n zero bytes at off, a megabyte at a time.
func writeZeros(w io.WriterAt, off, n int64) error {
	zero := make([]byte, min(n, 1<<20))
	for pos := off; pos < off+n; {
		k := min(int64(len(zero)), off+n-pos)
		if _, err := w.WriteAt(zero[:k], pos); err != nil {
			return fmt.Errorf("writing zeros at %d: %w", pos, err)
		}
		pos += k
	}
	return nil
}
