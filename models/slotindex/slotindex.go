// Package slotindex maps keys (block or page numbers) to the slots of a
// table that a cache keeps in parallel slices: the NAS page cache and the
// SSD cache tier's block directory. Slots are numbered from 0 and only
// grow; a slot holds at most one key and a key is in at most one slot.
// Keys are any int64 but −1.
//
// The index is open addressing with linear probing and Fibonacci hashing
// over fixed arrays — no pointers, no allocation per key — kept at most
// half full, with backward-shift deletion so that no tombstones build up.
//
// The tables of a large cache do not fit the CPU caches, and on the hot
// path (a cache miss: look the key up, evict a slot's key, insert the new
// one) every array read at a random place is a memory access. So each
// bucket holds, beside the slot, the key's 32-bit hash: a probe compares
// hashes in the bucket array itself and reads the slot's key only when
// they match (almost only when it is the key), and deletion finds the
// home bucket of the entries it shifts from their hash, without reading
// their keys.
package slotindex

// Index is the key → slot map. The zero value is empty and ready to use.
type Index struct {
	keys []int64 // per slot: key + 1; 0 when the slot holds nothing
	// per bucket: 0 when empty, else hash<<32 | (slot + 1). Length: a
	// power of two, at most 2³².
	index []uint64
	shift uint // 32 − log2(len(index)): a hash's home bucket is hash >> shift
}

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
	h := hash(k)
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

// Assign makes slot s hold key k, dropping the key it held. No other slot
// may hold k.
func (x *Index) Assign(s int32, k int64) {
	x.Clear(s)
	x.keys[s] = k + 1
	x.place(hash(k), s)
}

// Clear empties slot s.
func (x *Index) Clear(s int32) {
	k := x.keys[s]
	if k == 0 {
		return
	}
	mask := uint32(len(x.index) - 1)
	i := hash(k-1) >> x.shift
	for uint32(x.index[i]) != uint32(s+1) {
		i = (i + 1) & mask
	}
	// Backward-shift deletion: move later entries of the probe run back
	// unless their home bucket lies cyclically in (i, j].
	for {
		x.index[i] = 0
		j := i
		for {
			j = (j + 1) & mask
			e := x.index[j]
			if e == 0 {
				x.keys[s] = 0
				return
			}
			h := uint32(e>>32) >> x.shift
			if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
				x.index[i] = e
				i = j
				break
			}
		}
	}
}

// place puts slot s, whose key hashes to h, in the first free bucket from
// h's home.
func (x *Index) place(h uint32, s int32) {
	mask := uint32(len(x.index) - 1)
	i := h >> x.shift
	for x.index[i] != 0 {
		i = (i + 1) & mask
	}
	x.index[i] = uint64(h)<<32 | uint64(uint32(s+1))
}

// hash is Fibonacci hashing: the top 32 bits of k times 2⁶⁴/φ. Its top
// log2(buckets) bits are the home bucket.
func hash(k int64) uint32 {
	return uint32((uint64(k) * 0x9E3779B97F4A7C15) >> 32)
}

// slotOf returns the slot of a non-empty bucket entry.
func slotOf(e uint64) int32 { return int32(uint32(e)) - 1 }

func (x *Index) rehash(size int) {
	x.index = make([]uint64, size)
	l := uint(0)
	for n := size; n > 1; n >>= 1 {
		l++
	}
	x.shift = 32 - l
	for s, k := range x.keys {
		if k != 0 {
			x.place(hash(k-1), int32(s))
		}
	}
}
