package ssd

import (
	"math"
	"time"
)

// Dynamic SLC cache
//
// Consumer drives write host data into free TLC blocks programmed in SLC
// mode (one bit per cell: a third of the block's TLC capacity, a quarter
// of a QLC one's, programmed several times faster). The cache is not a
// reserved area: its capacity is what the free space the drive can lend
// holds in SLC mode — the user capacity not holding data, at 1/CellBits
// density — on top of SLCCacheMin (the static part, carved from the
// factory spare area), and never more than SLCCacheMax, the firmware's
// limit. A drive whose limit is small keeps its whole cache until it is
// nearly full; one that lends every free block (SLCCacheMax near a third
// of the capacity) loses cache with every byte of data. A host page group
// goes to SLC while the SLC slots in use (valid or stale, until their
// block is erased) leave room for it; once the cache is full, writes go
// straight to TLC at TLC speed, and the SLC blocks still holding data
// are folded by garbage collection as free blocks run out.
//
// Folding empties the cache: the valid data of SLC blocks is read (SLC
// tR) and programmed into TLC blocks, and the SLC blocks are erased. It
// runs lazily in idle time: when a request arrives more than foldIdle after
// the drive last finished work, every die spends its idle gap folding, one
// page group at a time, never past the new request's arrival. When the
// drive runs short of free blocks, garbage collection folds too: an SLC
// block holds at most a third of a TLC block's slots, so greedy victim
// choice picks SLC blocks first.

// foldIdle is how long the drive must be idle before it starts folding:
// controllers wait for a pause in the workload so that they do not fold
// between the requests of a burst (vendors do not publish the delay; tens
// of milliseconds is typical of client firmware idle detection).
const foldIdle = 10 * time.Millisecond

// slcCapacity returns the current SLC cache capacity in slots: the static
// part and what the user space not holding data holds in SLC mode, up to
// the firmware's limit.
func (d *Drive) slcCapacity() int64 {
	if d.cfg.SLCCacheMax == 0 {
		return 0
	}
	hi, lo := int64(d.cfg.SLCCacheMax)/slotSize, int64(d.cfg.SLCCacheMin)/slotSize
	free := max(d.geo.userSlots-d.mapped, 0)
	return min(hi, lo+free/int64(d.geo.cellBits))
}

// slcRoom reports whether the next host page group may go to SLC.
func (d *Drive) slcRoom() bool {
	return d.cfg.SLCCacheMax > 0 && d.slcUsed+d.geo.groupSlots <= d.slcCapacity()
}

// fold spends every die's idle time before `at` folding SLC blocks into TLC.
//
// The dies fold side by side, in rounds of foldRound of simulated time, so
// that what they book on a shared channel is booked roughly in time order:
// the channel's calendar remembers only its latest intervals
// (timeline.Window), and a die folding its whole idle gap after another
// die on its channel had booked its own would find the channel's early
// gaps forgotten and fold almost nothing.
func (d *Drive) fold(at time.Duration) {
	for di := range d.dies {
		dd := &d.dies[di]
		// The open SLC block is closed as it is (its unwritten pages come
		// back when it is erased) unless the host group being filled is in
		// it.
		if dd.hostSLC >= 0 && (dd.hostSLC != d.curBlock || d.curFill == 0) {
			if dd.hostSLC == d.curBlock {
				d.curBlock = -1
			}
			d.closeBlock(dd.hostSLC)
			dd.hostSLC = -1
		}
	}
	from := at
	for di := range d.dies {
		from = min(from, d.dies[di].busy.BusyUntil())
	}
	for round := from + foldRound; ; round += foldRound {
		more := false
		for di := range d.dies {
			more = d.foldDie(di, min(round, at)) || more
		}
		if !more || round >= at {
			return
		}
	}
}

// foldRound is the span of simulated time the dies fold in turn (see
// fold): a few page-group steps of a QLC die (a program of 2–4 ms), short
// enough that two or four dies on a channel book fewer intervals in one
// round than its calendar remembers.
const foldRound = 10 * time.Millisecond

// foldDie folds die di's SLC blocks until deadline and reports whether
// the die has more to fold (it stopped for the deadline, not for want of
// SLC blocks or free blocks).
func (d *Drive) foldDie(di int, deadline time.Duration) bool {
	dd := &d.dies[di]
	for {
		if dd.victim < 0 {
			if len(dd.free) == 0 {
				return false // GC will fold under pressure instead
			}
			blk := d.nextSLC(di)
			if blk < 0 {
				return false
			}
			d.startVictim(di, blk)
			d.st.folds++
		}
		d.relocate(di, dd.busy.BusyUntil(), deadline, math.MaxInt64)
		if dd.victim >= 0 {
			return true // out of idle time
		}
	}
}

// nextSLC pops die di's oldest full SLC block, or returns -1.
func (d *Drive) nextSLC(di int) int32 {
	dd := &d.dies[di]
	for len(dd.slcFIFO) > 0 {
		blk := dd.slcFIFO[0]
		dd.slcFIFO = dd.slcFIFO[1:]
		if d.state[blk] == blkFull && d.mode[blk] == modeSLC {
			return blk
		}
	}
	return -1
}
