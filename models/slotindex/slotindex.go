// Package slotindex maps keys (block or page numbers) to the slots of a
// table that a cache keeps in parallel slices: the NAS page cache and the
// SSD cache tier's block directory. Slots are numbered from 0 and only
// grow; a slot holds at most one key and a key is in at most one slot.
// Keys are any int64 but −1.
//
// The index is open addressing with linear probing over fixed arrays —
// no pointers, no allocation per key. Each bucket holds, beside the slot,
// the key's 32-bit hash: a probe compares hashes in the bucket array
// itself and reads the slot's key only when they match (almost only when
// it is the key).
//
// # Runs of keys
//
// Caches are read and written in runs of consecutive keys (a 1 MiB write
// is 256 pages, writeback merges neighbours), and with every key hashed
// to a random bucket each of them is a memory access of its own. So keys
// are hashed a group of 16 at a time (Fibonacci hashing of k/16) and the
// key's place in its group is added to the home bucket: the 16 keys of a
// group have consecutive home buckets, two cache lines, and a run of keys
// walks the bucket array in order. Groups still land at random, so random
// keys cost what they did.
//
// # Lazy deletion
//
// The tables of a large cache do not fit the CPU caches, and on the hot
// path (a cache miss: look the key up, evict a slot's key, insert the new
// one) every array read at a random place is a memory access. Removing
// the evicted key's bucket would be one more such access per miss, so it
// is not removed: a slot's key (keys, read in slot order as a clock hand
// or an LRU tail walks them) is the truth, and a bucket whose slot no
// longer holds the bucket's key is stale. A lookup already checks the
// slot's key, so it skips stale buckets as it skips hash collisions. Stale
// buckets only lengthen probe runs; when live and stale buckets together
// fill maxLoad of the table, it is rebuilt from keys (a pass in slot
// order), which removes every stale bucket: a cache that keeps evicting
// rebuilds once per (maxLoad − ½) × buckets evictions, at least once per
// half its slots.
package slotindex

import "github.com/nasemu/nasemu/models/internal/prefetch"

// Index is the key → slot map. The zero value is empty and ready to use.
type Index struct {
	keys []int64 // per slot: key + 1; 0 when the slot holds nothing
	// per bucket: 0 when empty, else hash<<32 | (slot + 1), live or stale
	// (see Lazy deletion). Length: a power of two, at most 2³², at least
	// twice the slots.
	index []uint64
	shift uint // 32 − log2(len(index)): a hash's home bucket is hash >> shift
	used  int  // buckets not empty
}

// maxLoadNum/maxLoadDen is the share of buckets, live or stale, that
// triggers a rebuild.
const maxLoadNum, maxLoadDen = 3, 4

// Slots returns how many slots there are.
func (x *Index) Slots() int32 { return int32(len(x.keys)) }

// Grow adds an empty slot and returns its number.
func (x *Index) Grow() int32 {
	n := int32(len(x.keys))
	if int(n+1)*2 > len(x.index) {
		x.rehash(max(1024, 2*len(x.index)))
	}
	x.keys = append(x.keys, 0)
	return n
}

// Key returns the key slot s holds, and false when it holds none.
func (x *Index) Key(s int32) (int64, bool) {
	k := x.keys[s]
	return k - 1, k != 0
}

// Lookup returns the slot holding key k, or -1.
func (x *Index) Lookup(k int64) int32 {
	if len(x.index) == 0 {
		return -1
	}
	h := x.hash(k)
	mask := uint32(len(x.index) - 1)
	for i := h >> x.shift; ; i = (i + 1) & mask {
		e := x.index[i]
		if e == 0 {
			return -1
		}
		if uint32(e>>32) == h {
			if s := slotOf(e); x.keys[s] == k+1 {
				return s
			}
		}
	}
}

// Prefetch starts loading the bucket where a lookup of k begins, without
// waiting for it (see models.Prefetcher).
func (x *Index) Prefetch(k int64) {
	if len(x.index) > 0 {
		prefetch.Uint64(&x.index[x.hash(k)>>x.shift])
	}
}

// Assign makes slot s hold key k, dropping the key it held. No other slot
// may hold k.
func (x *Index) Assign(s int32, k int64) {
	if x.keys[s] == k+1 {
		return // its bucket is still there: buckets leave only in a rebuild
	}
	x.keys[s] = k + 1 // the bucket of the key it held, if any, is stale
	if x.used+1 > len(x.index)/maxLoadDen*maxLoadNum {
		x.rehash(len(x.index)) // places k too
		return
	}
	x.place(x.hash(k), s)
}

// Clear empties slot s; its bucket goes stale.
func (x *Index) Clear(s int32) { x.keys[s] = 0 }

// place puts slot s, whose key hashes to h, in the first free bucket from
// h's home.
func (x *Index) place(h uint32, s int32) {
	mask := uint32(len(x.index) - 1)
	i := h >> x.shift
	for x.index[i] != 0 {
		i = (i + 1) & mask
	}
	x.index[i] = uint64(h)<<32 | uint64(uint32(s+1))
	x.used++
}

// groupBits sets 2^groupBits keys per group (see Runs of keys).
const groupBits = 4

// hash returns k's hash for the current table: Fibonacci hashing of k's
// group (the top 32 bits of k>>groupBits times 2⁶⁴/φ) plus k's place in
// its group in the home bucket's bits, so that a group's keys have
// consecutive homes. Its top log2(buckets) bits are the home bucket. It
// depends on the table's size, so a rebuild hashes every key afresh.
func (x *Index) hash(k int64) uint32 {
	g := uint32((uint64(k>>groupBits) * 0x9E3779B97F4A7C15) >> 32)
	return g + uint32(k&(1<<groupBits-1))<<x.shift
}

// slotOf returns the slot of a non-empty bucket entry.
func slotOf(e uint64) int32 { return int32(uint32(e)) - 1 }

// rehash rebuilds the buckets, size of them, from the slots' keys: no
// stale bucket is left.
func (x *Index) rehash(size int) {
	if len(x.index) == size {
		clear(x.index)
	} else {
		x.index = make([]uint64, size)
	}
	l := uint(0)
	for n := size; n > 1; n >>= 1 {
		l++
	}
	x.shift = 32 - l
	x.used = 0
	for s, k := range x.keys {
		if k != 0 {
			x.place(x.hash(k-1), int32(s))
		}
	}
}
