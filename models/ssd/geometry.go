package ssd

import "math/bits"

// slotSize is the mapping unit of the FTL: 4 KiB, the host's usual block
// and the granularity of every address the model keeps.
const slotSize = 4096

// geometry is the derived shape of a drive in slots (4 KiB mapping units).
//
// A physical slot number (PPN) is block*slotsPerBlock + offset, where the
// global block number is die*blocksPerDie + block-in-die. Inside a block,
// offsets run page group by page group: a page group is one page on every
// plane, programmed together, groupSlots slots. A block in SLC mode holds
// one bit per cell, so only its first slcSlots offsets (1/CellBits) are used.
type geometry struct {
	dies          int
	channels      int
	blocksPerDie  int
	groupSlots    int64 // slots per multi-plane page group (program unit)
	slotsPerPage  int64 // slots per plane page (read unit)
	slotsPerBlock int64 // TLC
	cellBits      int   // bits per cell of the native mode (pages per word line)
	slcSlots      int64 // SLC: 1/CellBits of the native block, whole page groups
	totalBlocks   int
	totalSlots    int64 // raw NAND in slots (TLC)
	userSlots     int64 // addressable user slots after extra over-provisioning
	fwdBits       uint  // bits per forward-map entry (PPN+1, 0 = unmapped)
	revBits       uint  // bits per reverse-map entry (LPN)
}

func newGeometry(c Config) geometry {
	var g geometry
	g.channels = c.Channels
	g.dies = c.Channels * c.DiesPerChannel
	g.blocksPerDie = c.BlocksPerDie
	g.slotsPerPage = int64(c.PageSize) / slotSize
	g.groupSlots = g.slotsPerPage * int64(c.Planes)
	g.slotsPerBlock = g.groupSlots * int64(c.PagesPerBlock)
	cb := c.CellBits
	if cb == 0 {
		cb = 3
	}
	g.cellBits = cb
	g.slcSlots = g.groupSlots * int64(c.PagesPerBlock/cb)
	g.totalBlocks = g.dies * c.BlocksPerDie
	g.totalSlots = int64(g.totalBlocks) * g.slotsPerBlock
	user := int64(float64(c.Capacity) * (1 - c.Overprovision))
	g.userSlots = user / slotSize
	g.fwdBits = uint(bits.Len64(uint64(g.totalSlots)))
	g.revBits = uint(max(1, bits.Len64(uint64(max(g.userSlots-1, 0)))))
	return g
}

func (g geometry) groupBytes() int64 { return g.groupSlots * slotSize }

// mappingBytes is the memory the mapping state takes when every user slot
// has been written: the bit-packed forward map (one entry per user slot)
// and reverse map (one entry per physical slot). Validity needs no bitmap:
// physical slot p is valid iff fwd[rev[p]] == p.
func (g geometry) mappingBytes() int64 {
	return (g.userSlots*int64(g.fwdBits) + g.totalSlots*int64(g.revBits) + 7) / 8
}

// blockBytes is the memory of the per-block arrays (valid count, erase
// count, write and program pointers, bucket links, state).
func (g geometry) blockBytes() int64 {
	return int64(g.totalBlocks)*(4*6+2) + int64(g.dies)*(g.slotsPerBlock+1)*4
}

// MappingBytes returns the memory the model's mapping state (forward and
// reverse maps) takes once every user page of a drive of this
// configuration has been written, without building the drive.
func (c Config) MappingBytes() int64 {
	return newGeometry(c.withDefaults()).mappingBytes()
}

// UserPages returns the number of 4 KiB user pages of a drive of this
// configuration.
func (c Config) UserPages() int64 { return newGeometry(c.withDefaults()).userSlots }
