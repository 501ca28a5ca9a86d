package nas

import (
	"cmp"
	"github.com/nasemu/nasemu/models/slotindex"
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
// CLOCK replacement over fixed arrays and a page → slot index
// (models/slotindex). Slots
// are appended as pages are first cached, up to max; after that a new
// page takes the slot of the page the clock hand evicts. Dirty pages are
// never evicted: they are written back first.
//
// ready is when a page's data is in memory (a read in flight completes, a
// write's copy ends); a hit on a page still being read waits for it.
type pageCache struct {
	max int32

	ix    slotindex.Index // page number → slot
	ready []time.Duration
	flag  []uint8
	hand  int32

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
	return &pageCache{max: max}
}

func (pc *pageCache) len() int32 { return pc.ix.Slots() }

// lookup returns the slot of page p, or -1.
func (pc *pageCache) lookup(p int64) int32 { return pc.ix.Lookup(p) }

// page returns the page slot s holds, and false when it holds none.
func (pc *pageCache) page(s int32) (int64, bool) { return pc.ix.Key(s) }

// mustPage returns the page slot s holds (the slot must hold one).
func (pc *pageCache) mustPage(s int32) int64 {
	p, _ := pc.ix.Key(s)
	return p
}

// holds reports whether slot s holds page p.
func (pc *pageCache) holds(s int32, p int64) bool {
	k, ok := pc.ix.Key(s)
	return ok && k == p
}

// slot returns a slot for a new page: a fresh one while there is room,
// else the clock's victim. The victim may be dirty only when every page
// is; the caller must write it back before reusing it.
func (pc *pageCache) slot() int32 {
	n := pc.len()
	if n < pc.max {
		pc.ix.Grow()
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
	pc.ix.Assign(s, p)
	pc.ready[s] = ready
	pc.flag[s] = fRef
}

// drop removes the page in slot s from the cache.
func (pc *pageCache) drop(s int32) {
	if pc.flag[s]&fDirty != 0 {
		pc.dirty--
	}
	pc.ix.Clear(s)
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
		pc.pending = append(pc.pending, sweepEntry{page: pc.mustPage(s), slot: s})
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
			if pc.holds(e.slot, e.page) && pc.flag[e.slot]&fDirty != 0 {
				return e.slot
			}
		}
		if len(pc.pending) == 0 {
			return -1
		}
		pc.sweep, pc.pending = pc.pending, pc.sweep[:0]
		pc.pos = 0
		for _, e := range pc.sweep {
			if pc.holds(e.slot, e.page) {
				pc.flag[e.slot] &^= fQueued
			}
		}
		slices.SortFunc(pc.sweep, func(a, b sweepEntry) int { return cmp.Compare(a.page, b.page) })
	}
}
