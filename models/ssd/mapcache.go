package ssd

import "time"

// Mapping-table cache (DRAM-less drives)
//
// A drive with DRAM holds its whole forward map there (4 bytes per 4 KiB
// unit: about 1 GB per TB). A DRAM-less drive keeps the map on NAND and
// caches map pages in its controller's SRAM or, over NVMe, in the host
// memory buffer the host lends it (HMB, NVMe 1.2; hosts lend some tens of
// MiB). A 4 KiB map page holds 1024 entries, the map of 4 MiB of user
// data, so a 64 MiB cache reaches 64 GiB. A host read whose map page is
// not cached first reads that page from NAND — the map lives in SLC-mode
// blocks: tR SLC and a 4 KiB transfer on the die that holds it (map pages
// are striped over the dies) — and only then knows where its data is:
// random reads over a span beyond the cache's reach cost two NAND reads.
// The cache evicts by CLOCK (second chance), as controller firmware does
// for want of memory for LRU lists. Not modelled: the map pages that
// writes dirty and the controller writes back.

// mapPageShift: a map page of 4 KiB holds 1024 4-byte entries.
const mapPageShift = 10

// mapCache is the CLOCK-managed set of cached map pages.
type mapCache struct {
	slot  []int32 // map page held by each cache slot, -1 = empty
	ref   []bool  // CLOCK reference bits
	where []int32 // per map page: its slot + 1, 0 = not cached
	// written marks map pages that map any data: a page that never did
	// is not on NAND (the controller's top-level table says so), and a
	// read of its range needs no map read.
	written []bool
	hand    int
}

func newMapCache(cacheBytes, userSlots int64) *mapCache {
	n := max(int(cacheBytes/slotSize), 1)
	pages := (userSlots + 1<<mapPageShift - 1) >> mapPageShift
	m := &mapCache{slot: make([]int32, n), ref: make([]bool, n), where: make([]int32, pages), written: make([]bool, pages)}
	for i := range m.slot {
		m.slot[i] = -1
	}
	return m
}

// touch marks map page mp used and reports whether it was cached; a
// missing page is brought in, evicting by CLOCK.
func (m *mapCache) touch(mp int64) bool {
	if s := m.where[mp]; s > 0 {
		m.ref[s-1] = true
		return true
	}
	for m.ref[m.hand] {
		m.ref[m.hand] = false
		if m.hand++; m.hand == len(m.slot) {
			m.hand = 0
		}
	}
	if old := m.slot[m.hand]; old >= 0 {
		m.where[old] = 0
	}
	m.slot[m.hand], m.where[mp], m.ref[m.hand] = int32(mp), int32(m.hand+1), true
	if m.hand++; m.hand == len(m.slot) {
		m.hand = 0
	}
	return false
}

// mapLookup returns when the map entries of lpns first..last are known to
// the controller: at t if their map pages are cached, else once the
// missing pages are read from NAND.
func (d *Drive) mapLookup(t time.Duration, first, last int64) time.Duration {
	known := t
	for mp := first >> mapPageShift; mp <= last>>mapPageShift; mp++ {
		if !d.maps.written[mp] || d.maps.touch(mp) {
			continue
		}
		d.st.mapMisses++
		di := int(mp % int64(d.geo.dies))
		x := transfer(slotSize, d.cfg.ChannelMBps)
		known = max(known, d.hostRead(di, t, d.cfg.ReadSLC, x))
	}
	return known
}
