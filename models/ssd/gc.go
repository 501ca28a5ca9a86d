package ssd

import (
	"fmt"
	"math"
	"time"
)

// Garbage collection
//
// Each die manages its own blocks: a free list, open blocks (host TLC,
// host SLC, GC destination) and its full blocks in buckets by valid count.
// Once a die's free list is down to GCFreeBlocks, garbage collection picks
// the full block with the fewest valid slots (greedy), reads its valid
// slots page group by page group, programs them into the die's GC block
// (TLC) and erases it. The work is paced as controllers pace it: every
// host page group opened on the die first reclaims at least a page
// group's worth of space (more when the free list runs lower), so GC
// interleaves with host writes instead of stalling the die for a whole
// block. All of it is booked on the die's and its channel's timelines, so
// host programs queue behind it and host writes slow down in steady state.
// Only if the free list empties does a die collect whole blocks at once.
// Buckets make the victim choice O(1) amortised: a victim is the head of
// the lowest non-empty bucket, and invalidating a slot moves its block one
// bucket down.

// AnalyticWA is the write amplification of uniformly random single-unit
// writes under FIFO cleaning with no hot/cold separation, at
// over-provisioning ratio alpha = physical pages / user pages:
// WA = 1/(1-X), where X, the valid fraction of a block when it is cleaned,
// solves X = exp(-alpha*(1-X)) (Desnoyers; Hu et al.). Greedy cleaning does
// a little better, by a few per cent. It returns +Inf for alpha <= 1.
func AnalyticWA(alpha float64) float64 {
	if !(alpha > 1) {
		return math.Inf(1)
	}
	// X = exp(-alpha(1-X)) has the trivial root X = 1 and, for alpha > 1,
	// one root in (0, 1): f(X) = X - exp(-alpha(1-X)) is negative at 0
	// and positive between that root and 1 (f'(1) = 1 - alpha < 0), so
	// bisection on [0, 1] converges to it.
	lo, hi := 0.0, 1.0
	for range 200 {
		mid := (lo + hi) / 2
		if mid-math.Exp(-alpha*(1-mid)) < 0 {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo < 1e-15 {
			break
		}
	}
	x := (lo + hi) / 2
	return 1 / (1 - x)
}

func (d *Drive) bucketInsert(di int, blk int32) {
	dd := &d.dies[di]
	v := int64(d.valid[blk])
	h := dd.buckets[v]
	d.next[blk], d.prev[blk] = h, -1
	if h >= 0 {
		d.prev[h] = blk
	}
	dd.buckets[v] = blk
	dd.minValid = min(dd.minValid, v)
}

func (d *Drive) bucketRemove(di int, blk int32, v int64) {
	dd := &d.dies[di]
	n, p := d.next[blk], d.prev[blk]
	if p >= 0 {
		d.next[p] = n
	} else {
		dd.buckets[v] = n
	}
	if n >= 0 {
		d.prev[n] = p
	}
}

// invalidate drops physical slot p (its LPN was rewritten or trimmed).
func (d *Drive) invalidate(p int64) {
	blk := int32(p / d.geo.slotsPerBlock)
	if d.state[blk] == blkFull {
		di := int(blk) / d.geo.blocksPerDie
		d.bucketRemove(di, blk, int64(d.valid[blk]))
		d.valid[blk]--
		d.bucketInsert(di, blk)
		return
	}
	d.valid[blk]--
}

// closeBlock marks a written-through block full: it becomes a GC candidate.
func (d *Drive) closeBlock(blk int32) {
	if blk < 0 {
		return
	}
	di := int(blk) / d.geo.blocksPerDie
	d.state[blk] = blkFull
	d.bucketInsert(di, blk)
	if d.mode[blk] == modeSLC {
		d.dies[di].slcFIFO = append(d.dies[di].slcFIFO, blk)
	}
}

// allocBlock takes a free block of die di for a host frontier. The last
// free block is garbage collection's: relocating one victim needs at most
// one new destination block, so with one free block at the start of every
// victim GC can always proceed. If taking a block would leave none, whole
// blocks are collected first (from time t).
func (d *Drive) allocBlock(di int, mode uint8, t time.Duration) int32 {
	dd := &d.dies[di]
	for len(dd.free) < 2 {
		if !d.collect(di, t, math.MaxInt64) {
			break
		}
	}
	return d.popFree(di, mode)
}

// gcPace runs die di's paced garbage collection before a host page group
// is opened on it at time t.
func (d *Drive) gcPace(di int, t time.Duration) {
	dd := &d.dies[di]
	short := int64(d.cfg.GCFreeBlocks - len(dd.free))
	if short < 0 {
		return
	}
	budget := d.geo.groupSlots * (1 + short)
	for budget > 0 {
		if dd.victim < 0 && !d.pickVictim(di) {
			return
		}
		budget -= d.relocate(di, t, math.MaxInt64, budget)
	}
}

func (d *Drive) popFree(di int, mode uint8) int32 {
	dd := &d.dies[di]
	if len(dd.free) == 0 {
		// Validate guarantees spare blocks beyond the reserve, and every
		// collection frees more than it consumes; reaching here is a bug.
		panic(fmt.Sprintf("ssd: die %d has no free block (invariant broken)", di))
	}
	blk := dd.free[len(dd.free)-1]
	dd.free = dd.free[:len(dd.free)-1]
	d.state[blk], d.mode[blk] = blkOpen, mode
	d.wp[blk], d.prog[blk], d.valid[blk] = 0, 0, 0
	return blk
}

// collect reclaims up to budget slots of die di (finishing its current
// victim, or a new one), starting no earlier than t. It reports false when
// nothing can be reclaimed.
func (d *Drive) collect(di int, t time.Duration, budget int64) bool {
	dd := &d.dies[di]
	if dd.victim < 0 && !d.pickVictim(di) {
		return false
	}
	d.relocate(di, t, math.MaxInt64, budget)
	return true
}

// pickVictim makes die di's full block with the fewest valid slots its
// victim; it reports false when no block would yield space.
func (d *Drive) pickVictim(di int) bool {
	dd := &d.dies[di]
	v := dd.minValid
	for v <= d.geo.slotsPerBlock && dd.buckets[v] < 0 {
		v++
	}
	dd.minValid = v
	if v > d.geo.slotsPerBlock {
		return false
	}
	// Relocated data always goes to TLC, so even an SLC block whose every
	// slot is valid yields space (two thirds of a block); a TLC block
	// yields nothing once every slot is valid.
	if v >= d.geo.slotsPerBlock {
		return false
	}
	// Relocating one victim needs at most one new destination block.
	if len(dd.free) == 0 && (dd.gc < 0 || d.geo.slotsPerBlock-int64(d.wp[dd.gc]) < v) {
		return false
	}
	d.startVictim(di, dd.buckets[v])
	return true
}

// capacityOf is the number of slots block blk holds in its mode.
func (d *Drive) capacityOf(blk int32) int64 {
	if d.mode[blk] == modeSLC {
		return d.geo.slcSlots
	}
	return d.geo.slotsPerBlock
}

func (d *Drive) startVictim(di int, blk int32) {
	dd := &d.dies[di]
	d.bucketRemove(di, blk, int64(d.valid[blk]))
	d.state[blk] = blkVictim
	dd.victim, dd.victimOff = blk, 0
	d.st.gcVictims++
}

// relocate copies the valid slots of die di's victim into its GC block and
// erases the victim, page group by page group. Work starts no earlier than
// t. It stops early, to resume later, when a step would end after deadline
// (idle-time folding) or once it has reclaimed budget slots (paced GC; a
// page group with n valid slots reclaims groupSlots-n). It returns the
// slots reclaimed; dd.victim is -1 once the victim is erased.
func (d *Drive) relocate(di int, t, deadline time.Duration, budget int64) int64 {
	dd := &d.dies[di]
	g := d.geo
	blk := dd.victim
	tR := d.cfg.ReadTLC
	if d.mode[blk] == modeSLC {
		tR = d.cfg.ReadSLC
	}
	ch := &d.channels[d.channelOf(di)]
	base := int64(blk) * g.slotsPerBlock
	end := int64(d.wp[blk])
	reclaimed := int64(0)
	// One multi-plane read senses a whole page group; live slots are
	// those the forward map still points at.
	live := d.live[:0]
	for off := dd.victimOff; off < end; off += g.groupSlots {
		if reclaimed >= budget {
			dd.victimOff = off
			return reclaimed
		}
		live = live[:0]
		for p := base + off; p < base+off+g.groupSlots; p++ {
			lpn := int64(d.rev.get(p))
			if lpn < g.userSlots && int64(d.fwd.get(lpn)) == p+1 {
				live = append(live, lpn, p)
			}
		}
		n := int64(len(live) / 2)
		if n == 0 {
			reclaimed += g.groupSlots
			continue
		}
		x := transfer(n*slotSize, d.cfg.ChannelMBps)
		if deadline < math.MaxInt64 && d.stepEnd(di, t, tR, x, n) > deadline {
			dd.victimOff = off
			return reclaimed
		}
		reclaimed += g.groupSlots - n
		start, end := dd.busy.Reserve(t, tR+x)
		dd.ops.add(dieOp{start: start, end: end})
		_, ready := ch.Reserve(start+tR, x)
		for i := 0; i < len(live); i += 2 {
			d.gcPlace(di, live[i], live[i+1], ready)
		}
	}
	dd.victimOff = end
	if dd.busy.Earliest(t, d.cfg.Erase)+d.cfg.Erase > deadline {
		return reclaimed
	}
	// Slots past the write pointer (an SLC block's unused two thirds, the
	// rest of a block closed early) come back with the erase.
	reclaimed += d.capacityOf(blk) - end
	s, e := dd.busy.Reserve(t, d.cfg.Erase)
	dd.ops.add(dieOp{start: s, end: e, erase: true})
	d.erased(di, blk)
	dd.victim = -1
	return max(reclaimed, 1)
}

// stepEnd returns when a relocation step of die di from t would have
// finished with the die and its channel: the sense (tR) on the die, the
// transfer of the n live slots (x) over the channel, and, when they
// complete the GC page group, its program. Idle-time folding takes a step
// only if all of it fits before the next request: the die alone is not
// enough, for its channel may be booked later than the die (by the other
// dies on it, or by a calendar that has forgotten the channel's early
// gaps), and the data then reaches the controller, and the program that
// follows it starts, later than the sense.
func (d *Drive) stepEnd(di int, t, tR, x time.Duration, n int64) time.Duration {
	dd := &d.dies[di]
	start := dd.busy.Earliest(t, tR+x)
	ready := d.channels[d.channelOf(di)].Earliest(start+tR, x) + x
	end := max(ready, start+tR+x)
	if dd.gcFill+n >= d.geo.groupSlots {
		xg := transfer(d.geo.groupBytes(), d.cfg.ChannelMBps)
		prog := xg + d.cfg.ProgramTLC // GC writes TLC/QLC blocks
		ps, _ := d.programStart(di, end, prog)
		end = ps + prog
	}
	return end
}

// erased returns an erased block to its die's free list.
func (d *Drive) erased(di int, blk int32) {
	if d.mode[blk] == modeSLC {
		d.slcUsed -= int64(d.wp[blk])
	}
	d.erases[blk]++
	d.st.erases++
	d.state[blk], d.mode[blk] = blkFree, modeTLC
	d.wp[blk], d.prog[blk], d.valid[blk] = 0, 0, 0
	d.dies[di].free = append(d.dies[di].free, blk)
}

// gcPlace writes the slot of lpn relocated from physical slot old into die
// di's GC block; the page group is programmed once full.
func (d *Drive) gcPlace(di int, lpn, old int64, ready time.Duration) {
	dd := &d.dies[di]
	if dd.gc < 0 {
		dd.gc = d.popFree(di, modeTLC)
	}
	p := int64(dd.gc)*d.geo.slotsPerBlock + int64(d.wp[dd.gc])
	d.wp[dd.gc]++
	d.valid[old/d.geo.slotsPerBlock]-- // the victim: in no bucket
	d.fwd.set(lpn, uint64(p+1))
	d.rev.set(p, uint64(lpn))
	d.valid[dd.gc]++
	d.st.gcCopied++
	dd.gcFill++
	dd.gcReady = max(dd.gcReady, ready)
	if dd.gcFill == d.geo.groupSlots {
		d.programGC(di)
	}
}

// programGC programs die di's GC page group (padded if partial).
func (d *Drive) programGC(di int) {
	dd := &d.dies[di]
	blk := dd.gc
	g := d.geo.groupSlots
	d.wp[blk] = int32((int64(d.wp[blk]) + g - 1) / g * g)
	d.program(di, blk, dd.gcReady)
	d.prog[blk] = d.wp[blk]
	dd.gcFill, dd.gcReady = 0, 0
	if int64(d.wp[blk]) >= d.geo.slotsPerBlock {
		dd.gc = -1
		d.closeBlock(blk)
	}
}
