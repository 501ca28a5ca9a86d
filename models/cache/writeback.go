package cache

import (
	"cmp"
	"math/bits"
	"slices"
	"time"

	"github.com/nasemu/nasemu/models"
)

func popcount(m uint64) int { return bits.OnesCount64(m) }

// write lands a write on the cache drives (read-write mode). A write of a
// long sequential stream bypasses the cache and invalidates what it held.
// When the write would push dirty data past the limit, it waits for the
// flushes that make room.
func (tr *Tier) write(at time.Duration, r models.Request) (time.Duration, error) {
	off, end := r.Offset, r.End()
	first := off - off%tr.block
	if tr.sequential(r) {
		tr.invalidate(off, end)
		tr.bypassedBytes += r.Length
		tr.backingUnflushed = true
		tr.backingWaits++
		return tr.backing.Submit(at, r)
	}
	var grow int64 // blocks that become dirty
	for base := first; base < end; base += tr.block {
		if s := tr.t.lookup(base / tr.block); s < 0 || tr.t.dirty[s] == 0 {
			grow++
		}
	}
	start := at
	if tr.dirtyBlocks+grow > tr.dirtyLimit {
		tr.backingWaits++
		t, err := tr.flushUntil(at, tr.dirtyLimit-grow)
		if err != nil {
			return at, err
		}
		start = max(start, t)
	}
	done := start
	for base := first; base < end; base += tr.block {
		b := base / tr.block
		s := tr.t.lookup(b)
		var err error
		if s < 0 {
			if s, err = tr.allocate(start, b); err != nil {
				return at, err
			}
		} else {
			tr.t.touch(s)
		}
		m := tr.sectorMask(base, off, end)
		t := start
		if base != first {
			// The target maps a request block by block, each
			// block's write a further I/O from the submitting
			// context (cpu.go).
			t = tr.charge(start, tr.ioCost)
		}
		e, err := tr.writeSlot(t, s, m, true)
		if err != nil {
			return at, err
		}
		if tr.t.dirty[s] == 0 {
			// A clean block turns dirty: its metadata is on flash
			// before the write completes (cpu.go).
			if e, err = tr.updateMetadata(e, s); err != nil {
				return at, err
			}
		}
		done = max(done, e)
		tr.markDirty(s, m, done)
	}
	return done, nil
}

// markDirty records that sectors m of slot s hold data newer than the
// array since t, and queues the slot for the flusher.
func (tr *Tier) markDirty(s int32, m uint64, t time.Duration) {
	fresh := m &^ tr.t.dirty[s]
	tr.dirtyBytes += int64(popcount(fresh)) * tr.sector
	if tr.t.dirty[s] == 0 {
		tr.t.dirtyAt[s] = t
		tr.dirtyBlocks++
	}
	tr.t.dirty[s] |= m
	tr.t.valid[s] |= m
	if !tr.t.queued[s] {
		tr.t.queued[s] = true
		tr.pending = append(tr.pending, sweepEntry{block: tr.t.block(s), slot: s})
	}
}

// lane returns the flush lane that frees first.
func (tr *Tier) lane() int {
	li := 0
	for i, l := range tr.lanes {
		if l < tr.lanes[li] {
			li = i
		}
	}
	return li
}

// background issues the flushes the flusher could have started before at:
// flush work fills the time the lanes were idle, and the I/O it reserves
// on the array competes with foreground requests.
func (tr *Tier) background(at time.Duration) error {
	for tr.dirtyBytes > 0 {
		li := tr.lane()
		if tr.lanes[li] >= at {
			return nil
		}
		s := tr.nextDirty()
		if s < 0 {
			return nil
		}
		done, err := tr.cleanOn(li, max(tr.lanes[li], tr.t.dirtyAt[s]), s)
		if err != nil {
			return err
		}
		tr.lanes[li] = done
	}
	return nil
}

// flushUntil flushes, from `at` on, until at most target blocks are
// dirty, and returns when the last of those flushes completes.
func (tr *Tier) flushUntil(at time.Duration, target int64) (time.Duration, error) {
	last := at
	for tr.dirtyBlocks > max(target, 0) {
		s := tr.nextDirty()
		if s < 0 {
			break
		}
		li := tr.lane()
		done, err := tr.cleanOn(li, max(tr.lanes[li], at, tr.t.dirtyAt[s]), s)
		if err != nil {
			return at, err
		}
		tr.lanes[li] = done
		last = max(last, done)
	}
	return last, nil
}

// nextDirty returns the next dirty slot of the current pass in address
// order, starting a new pass (a sorted snapshot of the blocks dirtied since
// the last one) when the current one is done; -1 when nothing is dirty.
func (tr *Tier) nextDirty() int32 {
	for {
		for tr.sweepPos < len(tr.sweep) {
			e := tr.sweep[tr.sweepPos]
			tr.sweepPos++
			if tr.t.holds(e.slot, e.block) && tr.t.dirty[e.slot] != 0 {
				return e.slot
			}
		}
		if len(tr.pending) == 0 {
			return -1
		}
		tr.sweep, tr.pending = tr.pending, tr.sweep[:0]
		tr.sweepPos = 0
		for _, e := range tr.sweep {
			tr.t.queued[e.slot] = false
		}
		slices.SortFunc(tr.sweep, func(a, b sweepEntry) int { return cmp.Compare(a.block, b.block) })
	}
}

// cleanOn cleans slot s on flush lane li from at (flushSlot) and returns
// when the array has its data. The block is marked clean on flash
// (cpu.go) when the lane starts its next job: the mark is not needed for
// durability (a block left marked dirty is only cleaned again after a
// crash), so flashcache batches it with later ones instead of waiting.
func (tr *Tier) cleanOn(li int, at time.Duration, s int32) (time.Duration, error) {
	if p := tr.laneMark[li]; p >= 0 {
		tr.laneMark[li] = -1
		if _, err := tr.updateMetadata(at, p); err != nil {
			return at, err
		}
	}
	done, err := tr.flushSlot(at, s)
	if err == nil {
		tr.laneMark[li] = s
	}
	return done, err
}

// flushSlot copies the dirty sectors of slot s to the backing device: each
// contiguous run is read from a cache drive and then written to the array.
// The slot counts as clean from now on; the return is when the array has
// the data.
func (tr *Tier) flushSlot(at time.Duration, s int32) (time.Duration, error) {
	d := tr.t.dirty[s]
	base := tr.t.block(s) * tr.block
	// The cleaning job, on the tier's worker thread (cpu.go): the
	// target's own work, then per run a read from an SSD and a write to
	// the array, one I/O each.
	at = tr.work(at, tr.lookupCost)
	done := at
	err := runs(d, func(first, n int) error {
		_, off := tr.where(s, first)
		length := int64(n) * tr.sector
		tr.mirrorRR = (tr.mirrorRR + 1) % len(tr.drives)
		rd, err := tr.drives[tr.mirrorRR].Submit(tr.work(at, tr.ioCost), models.Request{Op: models.Read, Offset: off, Length: length})
		if err != nil {
			return err
		}
		pos := base + int64(first)*tr.sector
		length = min(length, tr.Capacity()-pos)
		wd, err := tr.backing.Submit(tr.work(rd, tr.ioCost), models.Request{Op: models.Write, Offset: pos, Length: length})
		if err != nil {
			return err
		}
		done = max(done, wd)
		tr.flushedBytes += length
		return nil
	})

	tr.dirtyBytes -= int64(popcount(d)) * tr.sector
	if d != 0 {
		tr.dirtyBlocks--
	}
	tr.t.dirty[s] = 0
	return done, err
}
