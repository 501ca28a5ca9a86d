package cache

import (
	"time"

	"github.com/nasemu/nasemu/models/slotindex"
)

// blockTable is the cache directory: which array block each cache slot
// holds, which of its sectors are valid and dirty, the LRU order of the
// slots, and the index from block number to slot (models/slotindex). A
// slot's number is also its place on the cache drives, so a block keeps
// its SSD location while it is cached.
//
// Everything lives in parallel slices indexed by slot (no pointers, no
// per-block allocation). The slices grow by append until max slots are in
// use; after that, new blocks take the slot of an evicted one.
type blockTable struct {
	max int32 // slots the cache has room for

	ix      slotindex.Index // block number → slot
	valid   []uint64        // per sector: holds the block's data
	dirty   []uint64        // per sector: newer than the array
	dirtyAt []time.Duration // when the slot last went from clean to dirty
	queued  []bool          // slot is in the flusher's pending list
	prev    []int32         // LRU links; -1 ends the list
	next    []int32

	head, tail int32 // most and least recently used; -1 when empty
}

func newBlockTable(max int32) *blockTable {
	return &blockTable{max: max, head: -1, tail: -1}
}

func (t *blockTable) len() int32 { return t.ix.Slots() }

// lookup returns the slot holding block b, or -1.
func (t *blockTable) lookup(b int64) int32 { return t.ix.Lookup(b) }

// block returns the block slot s holds (the slot must hold one).
func (t *blockTable) block(s int32) int64 {
	b, _ := t.ix.Key(s)
	return b
}

// holds reports whether slot s holds block b.
func (t *blockTable) holds(s int32, b int64) bool {
	k, ok := t.ix.Key(s)
	return ok && k == b
}

// unlink removes slot s from the LRU list.
func (t *blockTable) unlink(s int32) {
	p, n := t.prev[s], t.next[s]
	if p >= 0 {
		t.next[p] = n
	} else {
		t.head = n
	}
	if n >= 0 {
		t.prev[n] = p
	} else {
		t.tail = p
	}
}

// pushFront makes slot s the most recently used.
func (t *blockTable) pushFront(s int32) {
	t.prev[s], t.next[s] = -1, t.head
	if t.head >= 0 {
		t.prev[t.head] = s
	} else {
		t.tail = s
	}
	t.head = s
}

// touch marks slot s as just used.
func (t *blockTable) touch(s int32) {
	if t.head != s {
		t.unlink(s)
		t.pushFront(s)
	}
}

// victim returns the least recently used clean slot. Dirty slots met at
// the tail get a second chance at the front (they cannot be dropped until
// flushed), which keeps the search amortised O(1). When every slot is
// dirty it returns the tail anyway; the caller must flush it first.
func (t *blockTable) victim() int32 {
	for i := int32(0); i < t.len(); i++ {
		s := t.tail
		if t.dirty[s] == 0 {
			return s
		}
		t.touch(s)
	}
	return t.tail
}

// grow adds a fresh slot, if there is room, and returns it (or -1).
func (t *blockTable) grow() int32 {
	n := t.len()
	if n >= t.max {
		return -1
	}
	t.ix.Grow()
	t.valid = append(t.valid, 0)
	t.dirty = append(t.dirty, 0)
	t.dirtyAt = append(t.dirtyAt, 0)
	t.queued = append(t.queued, false)
	t.prev = append(t.prev, -1)
	t.next = append(t.next, -1)
	t.pushFront(n)
	return n
}

// assign gives slot s (fresh or a clean victim) to block b, dropping what
// it held, and makes it the most recently used.
func (t *blockTable) assign(s int32, b int64) {
	t.ix.Assign(s, b)
	t.valid[s], t.dirty[s] = 0, 0
	t.touch(s)
}
