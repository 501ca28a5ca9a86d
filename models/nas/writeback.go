package nas

import (
	"time"

	"github.com/nasemu/nasemu/models"
)

// lane returns the writeback lane that frees first.
func (c *Controller) lane() int {
	li := 0
	for i, l := range c.lanes {
		if l < c.lanes[li] {
			li = i
		}
	}
	return li
}

// background issues the writeback and journal commits that would have
// started before at: writeback runs while dirty pages exceed the
// background ratio, or once the oldest have waited DirtyExpire, on
// WritebackDepth lanes, filling idle time and competing with foreground
// requests for the storage.
func (c *Controller) background(at time.Duration) error {
	if c.journalPending > 0 && c.journalOpen+c.cfg.JournalInterval <= at {
		if _, err := c.commit(c.journalOpen + c.cfg.JournalInterval); err != nil {
			return err
		}
	}
	for c.pc.dirty > 0 {
		li := c.lane()
		lt := c.lanes[li]
		if lt >= at {
			return nil
		}
		if c.pc.dirty <= c.dirtyBackground {
			exp := c.dirtySince + c.cfg.DirtyExpire
			if exp >= at {
				return nil
			}
			lt = max(lt, exp)
		}
		s := c.pc.nextDirty()
		if s < 0 {
			return nil
		}
		done, err := c.writeback(lt, s)
		if err != nil {
			return err
		}
		c.lanes[li] = done
	}
	return nil
}

// writebackUntil writes back, from at on, until at most target pages are
// dirty, and returns when the last of those writes completes.
func (c *Controller) writebackUntil(at time.Duration, target int64) (time.Duration, error) {
	last := at
	for c.pc.dirty > max(target, 0) {
		s := c.pc.nextDirty()
		if s < 0 {
			break
		}
		li := c.lane()
		done, err := c.writeback(max(at, c.lanes[li]), s)
		if err != nil {
			return at, err
		}
		c.lanes[li] = done
		last = max(last, done)
	}
	return last, nil
}

// writeback writes the dirty page in slot s, merged with the dirty pages
// that follow it up to WritebackMax, to the storage: checksums and
// encryption are computed now, on the way out. The pages are clean from
// now on; the return is when the storage has them.
func (c *Controller) writeback(t time.Duration, s int32) (time.Duration, error) {
	first := c.pc.mustPage(s)
	start := max(t, c.pc.ready[s])
	c.pc.clean(s)
	n := int64(1)
	maxPages := c.writebackPages(first * c.ps)
	for n < maxPages {
		q := c.pc.lookup(first + n)
		if q < 0 || !c.pc.isDirty(q) {
			break
		}
		start = max(start, c.pc.ready[q])
		c.pc.clean(q)
		n++
	}
	if c.pc.dirty == 0 {
		c.dirtySince = 0
	}
	off := first * c.ps
	length := min(n*c.ps, c.cap-off)
	d := c.dataPath(start, c.cfg.CPU.PerIO, length, wSum|wCrypt)
	c.writebackBytes += length
	done, err := c.submit(d, models.Request{Op: models.Write, Offset: off, Length: length})
	if err == nil {
		c.writingBack(done, n)
	}
	return done, err
}

// writebackPages returns the most pages one writeback I/O from off may
// take: WritebackMax, cut back to end on a stripe boundary of striped
// storage (or stretched to the next one when a stripe is larger).
//
// Linux's writeback submits a run of contiguous dirty pages under one
// block plug, and md's RAID 5/6 handles the stripes of those bios together
// once the plug is released: every stripe the run covers whole is a
// full-stripe write, and only its two ends can need the reads of a partial
// stripe (drivers/md/raid5.c: raid5_make_request adds each bio's pages to
// their stripe heads, raid5_unplug releases them together, and a stripe
// that would need reads first is delayed while full-stripe writes are
// pending, preread_bypass_threshold). The model sends a run as I/Os of up
// to WritebackMax; cut anywhere else, each would end in a partial stripe
// that a real array never sees, and a parity array of disks would pay a
// read-modify-write for every one.
func (c *Controller) writebackPages(off int64) int64 {
	limit := int64(c.cfg.WritebackMax)
	if c.stripe > 0 {
		next := (off/c.stripe + 1) * c.stripe // the first boundary after off
		if end := (off + limit) / c.stripe * c.stripe; end > off {
			next = end
		}
		limit = next - off
	}
	return (limit + c.ps - 1) / c.ps
}
