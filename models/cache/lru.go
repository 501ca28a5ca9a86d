package cache

import "time"

// blockTable is the cache directory: which array block each cache slot
// holds, which of its sectors are valid and dirty, the LRU order of the
// slots, and an open-addressing index from block number to slot. A slot's
// number is also its place on the cache drives, so a block keeps its SSD
// location while it is cached.
//
// Everything lives in parallel slices indexed by slot (no pointers, no
// per-block allocation). The slices grow by append until max slots are in
// use; after that, new blocks take the slot of an evicted one.
type blockTable struct {
	max int32 // slots the cache has room for

	key     []int64         // block number + 1; 0: slot holds nothing
	valid   []uint64        // per sector: holds the block's data
	dirty   []uint64        // per sector: newer than the array
	dirtyAt []time.Duration // when the slot last went from clean to dirty
	queued  []bool          // slot is in the flusher's pending list
	prev    []int32         // LRU links; -1 ends the list
	next    []int32

	head, tail int32 // most and least recently used; -1 when empty

	index []int32 // slot + 1; 0: empty bucket. Length is a power of two.
	shift uint    // 64 - log2(len(index)), for Fibonacci hashing
}

func newBlockTable(max int32) *blockTable {
	t := &blockTable{max: max, head: -1, tail: -1}
	t.rehash(1024)
	return t
}

func (t *blockTable) len() int32 { return int32(len(t.key)) }

// bucket returns the home bucket of block number b.
func (t *blockTable) bucket(b int64) uint64 {
	return (uint64(b) * 0x9E3779B97F4A7C15) >> t.shift
}

// lookup returns the slot holding block b, or -1.
func (t *blockTable) lookup(b int64) int32 {
	mask := uint64(len(t.index) - 1)
	for i := t.bucket(b); ; i = (i + 1) & mask {
		s := t.index[i]
		if s == 0 {
			return -1
		}
		if t.key[s-1] == b+1 {
			return s - 1
		}
	}
}

// put indexes slot s under block b (b must not be indexed).
func (t *blockTable) put(b int64, s int32) {
	mask := uint64(len(t.index) - 1)
	i := t.bucket(b)
	for t.index[i] != 0 {
		i = (i + 1) & mask
	}
	t.index[i] = s + 1
}

// unindex removes block b from the index by backward-shift deletion, which
// keeps linear probing correct without tombstones.
func (t *blockTable) unindex(b int64) {
	mask := uint64(len(t.index) - 1)
	i := t.bucket(b)
	for t.key[t.index[i]-1] != b+1 {
		i = (i + 1) & mask
	}
	for {
		t.index[i] = 0
		j := i
		for {
			j = (j + 1) & mask
			s := t.index[j]
			if s == 0 {
				return
			}
			h := t.bucket(t.key[s-1] - 1)
			// Move the entry at j back to i unless its home lies cyclically
			// in (i, j].
			if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
				t.index[i] = s
				i = j
				break
			}
		}
	}
}

func (t *blockTable) rehash(size int) {
	t.index = make([]int32, size)
	t.shift = uint(64 - log2(size))
	for s, k := range t.key {
		if k != 0 {
			t.put(k-1, int32(s))
		}
	}
}

func log2(n int) int {
	l := 0
	for n > 1 {
		n >>= 1
		l++
	}
	return l
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
	if int(n+1)*2 > len(t.index) {
		t.rehash(len(t.index) * 2)
	}
	t.key = append(t.key, 0)
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
	if k := t.key[s]; k != 0 {
		t.unindex(k - 1)
	}
	t.key[s] = b + 1
	t.valid[s], t.dirty[s] = 0, 0
	t.put(b, s)
	t.touch(s)
}
