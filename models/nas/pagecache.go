package nas

import (
	"cmp"
	"slices"
	"time"
)

// Page flags.
const (
	fRef    = 1 << iota // used since the clock hand last passed
	fDirty              // newer than the storage
	fQueued             // in the writeback pending list
)

// pageCache is the NAS's page cache: which storage pages are in RAM, with
// CLOCK replacement over fixed arrays and an open-addressing index. Slots
// are appended as pages are first cached, up to max; after that a new
// page takes the slot of the page the clock hand evicts. Dirty pages are
// never evicted: they are written back first.
//
// ready is when a page's data is in memory (a read in flight completes, a
// write's copy ends); a hit on a page still being read waits for it.
type pageCache struct {
	max int32

	key   []int64 // page number + 1; 0: free
	ready []time.Duration
	flag  []uint8
	hand  int32

	index []int32 // slot + 1; 0: empty
	shift uint

	dirty   int64        // dirty pages
	pending []sweepEntry // pages dirtied since the last writeback pass began
	sweep   []sweepEntry // the current pass, in page order
	pos     int
}

type sweepEntry struct {
	page int64
	slot int32
}

func newPageCache(max int32) *pageCache {
	pc := &pageCache{max: max}
	pc.rehash(1024)
	return pc
}

func (pc *pageCache) len() int32 { return int32(len(pc.key)) }

func (pc *pageCache) bucket(p int64) uint64 {
	return (uint64(p) * 0x9E3779B97F4A7C15) >> pc.shift
}

// lookup returns the slot of page p, or -1.
func (pc *pageCache) lookup(p int64) int32 {
	mask := uint64(len(pc.index) - 1)
	for i := pc.bucket(p); ; i = (i + 1) & mask {
		s := pc.index[i]
		if s == 0 {
			return -1
		}
		if pc.key[s-1] == p+1 {
			return s - 1
		}
	}
}

func (pc *pageCache) put(p int64, s int32) {
	mask := uint64(len(pc.index) - 1)
	i := pc.bucket(p)
	for pc.index[i] != 0 {
		i = (i + 1) & mask
	}
	pc.index[i] = s + 1
}

// unindex removes page p by backward-shift deletion.
func (pc *pageCache) unindex(p int64) {
	mask := uint64(len(pc.index) - 1)
	i := pc.bucket(p)
	for pc.key[pc.index[i]-1] != p+1 {
		i = (i + 1) & mask
	}
	for {
		pc.index[i] = 0
		j := i
		for {
			j = (j + 1) & mask
			s := pc.index[j]
			if s == 0 {
				return
			}
			h := pc.bucket(pc.key[s-1] - 1)
			if (j > i && (h <= i || h > j)) || (j < i && h <= i && h > j) {
				pc.index[i] = s
				i = j
				break
			}
		}
	}
}

func (pc *pageCache) rehash(size int) {
	pc.index = make([]int32, size)
	l := 0
	for n := size; n > 1; n >>= 1 {
		l++
	}
	pc.shift = uint(64 - l)
	for s, k := range pc.key {
		if k != 0 {
			pc.put(k-1, int32(s))
		}
	}
}

// slot returns a slot for a new page: a fresh one while there is room,
// else the clock's victim. The victim may be dirty only when every page
// is; the caller must write it back before reusing it.
func (pc *pageCache) slot() int32 {
	n := pc.len()
	if n < pc.max {
		if int(n+1)*2 > len(pc.index) {
			pc.rehash(len(pc.index) * 2)
		}
		pc.key = append(pc.key, 0)
		pc.ready = append(pc.ready, 0)
		pc.flag = append(pc.flag, 0)
		return n
	}
	for i := int32(0); i < 2*n+1; i++ {
		s := pc.hand
		if pc.hand++; pc.hand == n {
			pc.hand = 0
		}
		f := pc.flag[s]
		switch {
		case f&fDirty != 0:
		case f&fRef != 0:
			pc.flag[s] = f &^ fRef
		default:
			return s
		}
	}
	return pc.hand
}

// assign gives slot s (clean) to page p.
func (pc *pageCache) assign(s int32, p int64, ready time.Duration) {
	if k := pc.key[s]; k != 0 {
		pc.unindex(k - 1)
	}
	pc.key[s] = p + 1
	pc.ready[s] = ready
	pc.flag[s] = fRef
	pc.put(p, s)
}

// drop removes the page in slot s from the cache.
func (pc *pageCache) drop(s int32) {
	if pc.flag[s]&fDirty != 0 {
		pc.dirty--
	}
	pc.unindex(pc.key[s] - 1)
	pc.key[s] = 0
	pc.flag[s] = 0
}

// markDirty makes the page in slot s dirty; it reports whether it was
// clean.
func (pc *pageCache) markDirty(s int32) bool {
	f := pc.flag[s]
	pc.flag[s] = f | fDirty | fRef
	if f&fDirty != 0 {
		return false
	}
	pc.dirty++
	if f&fQueued == 0 {
		pc.flag[s] |= fQueued
		pc.pending = append(pc.pending, sweepEntry{page: pc.key[s] - 1, slot: s})
	}
	return true
}

// clean marks the page in slot s as written back.
func (pc *pageCache) clean(s int32) {
	if pc.flag[s]&fDirty != 0 {
		pc.flag[s] &^= fDirty
		pc.dirty--
	}
}

func (pc *pageCache) isDirty(s int32) bool { return pc.flag[s]&fDirty != 0 }

// nextDirty returns the next dirty page of the current writeback pass, in
// page order (as Linux writes an inode's pages in index order), starting a
// new pass over the pages dirtied since the last one when this pass is
// done; -1 when nothing is dirty.
func (pc *pageCache) nextDirty() int32 {
	for {
		for pc.pos < len(pc.sweep) {
			e := pc.sweep[pc.pos]
			pc.pos++
			if pc.key[e.slot] == e.page+1 && pc.flag[e.slot]&fDirty != 0 {
				return e.slot
			}
		}
		if len(pc.pending) == 0 {
			return -1
		}
		pc.sweep, pc.pending = pc.pending, pc.sweep[:0]
		pc.pos = 0
		for _, e := range pc.sweep {
			if pc.key[e.slot] == e.page+1 {
				pc.flag[e.slot] &^= fQueued
			}
		}
		slices.SortFunc(pc.sweep, func(a, b sweepEntry) int { return cmp.Compare(a.page, b.page) })
	}
}
