// Package slotindex maps keys (block or page numbers) to the slots of a
// table that a cache keeps in parallel slices: the NAS page cache and the
// SSD cache tier's block directory. Slots are numbered from 0 and only
// grow; a slot holds at most one key and a key is in at most one slot.
//
// The index is open addressing with linear probing and Fibonacci hashing
// over fixed arrays — no pointers, no allocation per key — kept at most
// half full, with backward-shift deletion so that no tombstones build up.
package slotindex

// Index is the key → slot map. The zero value is empty and ready to use.
type Index struct {
	keys  []int64 // per slot: key + 1; 0 when the slot holds nothing
	index []int32 // per bucket: slot + 1; 0 when empty. Length: a power of two.
	shift uint    // 64 - log2(len(index))
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
	mask := uint64(len(x.index) - 1)
	for i := x.bucket(k); ; i = (i + 1) & mask {
		s := x.index[i]
		if s == 0 {
			return -1
		}
		if x.keys[s-1] == k+1 {
			return s - 1
		}
	}
}

// Assign makes slot s hold key k, dropping the key it held. No other slot
// may hold k.
func (x *Index) Assign(s int32, k int64) {
	x.Clear(s)
	x.keys[s] = k + 1
	mask := uint64(len(x.index) - 1)
	i := x.bucket(k)
	for x.index[i] != 0 {
		i = (i + 1) & mask
	}
	x.index[i] = s + 1
}

// Clear empties slot s.
func (x *Index) Clear(s int32) {
	k := x.keys[s]
	if k == 0 {
		return
	}
	mask := uint64(len(x.index) - 1)
	i := x.bucket(k - 1)
	for x.index[i] != s+1 {
		i = (i + 1) & mask
	}
	// Backward-shift deletion: move later entries of the probe run back
	// unless their home bucket lies cyclically in (i, j].
	for {
		x.index[i] = 0
		j := i
		for {
			j = (j + 1) & mask
			t := x.index[j]
			if t == 0 {
				x.keys[s] = 0
				return
			}
			h := x.bucket(x.keys[t-1] - 1)
			if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
				x.index[i] = t
				i = j
				break
			}
		}
	}
}

func (x *Index) bucket(k int64) uint64 {
	return (uint64(k) * 0x9E3779B97F4A7C15) >> x.shift
}

func (x *Index) rehash(size int) {
	x.index = make([]int32, size)
	l := uint(0)
	for n := size; n > 1; n >>= 1 {
		l++
	}
	x.shift = 64 - l
	mask := uint64(size - 1)
	for s, k := range x.keys {
		if k == 0 {
			continue
		}
		i := x.bucket(k - 1)
		for x.index[i] != 0 {
			i = (i + 1) & mask
		}
		x.index[i] = int32(s) + 1
	}
}
