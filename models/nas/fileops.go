package nas

import (
	"time"

	"github.com/nasemu/nasemu/models"
)

// journalMax commits the running transaction early when it grows this
// large (a quarter of the journal, as jbd2 does when it fills).
func (c *Controller) journalMax() int64 { return c.journalSize / 4 }

// inodePage returns the metadata page that holds the inode and directory
// entry of the file a file operation names. File operations identify
// their file by Offset (the front ends pass the volume address of the
// file's first byte); the page is a hash of it within the metadata area.
func (c *Controller) inodePage(file int64) int64 {
	h := (uint64(file) + 1) * 0x9E3779B97F4A7C15
	return c.metaBase + int64(h%uint64(c.metaPages))
}

// fileOp charges a file operation: CPU for the lookup and the inode and
// directory work; a read of the inode page when it is not cached (open,
// stat, and the lookup of create and remove); and for create and remove a
// dirty inode page and a journal record, written back lazily. Close costs
// CPU only: timestamps were dirtied by the writes themselves.
func (c *Controller) fileOp(at time.Duration, r models.Request) (time.Duration, error) {
	c.metadataOps++
	t := c.cpu.run(at, c.cfg.CPU.PerFileOp+c.netRequest())
	if r.Op == models.Close {
		return t, nil
	}
	pg := c.inodePage(r.Offset)
	s := c.pc.lookup(pg)
	if s < 0 {
		c.misses++
		d, err := c.readPage(t, pg)
		if err != nil {
			return d, err
		}
		t = d
		s = c.pc.lookup(pg)
	} else {
		c.hits++
		c.pc.flag[s] |= fRef
		t = max(t, c.pc.ready[s])
	}
	if r.Op != models.Create && r.Op != models.Remove {
		return t, nil
	}
	if !c.pc.isDirty(s) && c.pc.dirty+1 > c.dirtyLimit {
		w, err := c.writebackUntil(t, c.dirtyLimit-1)
		if err != nil {
			return w, err
		}
		t = max(t, w)
	}
	c.dirty(s, t)
	if c.journalPending == 0 {
		c.journalOpen = t
	}
	c.journalPending += int64(c.cfg.JournalPerOp)
	if c.journalPending >= c.journalMax() {
		if _, err := c.commit(t); err != nil {
			return t, err
		}
	}
	return t, nil
}

// commit writes the running journal transaction at t, sequentially at the
// journal's head, and returns when it is on the storage.
func (c *Controller) commit(t time.Duration) (time.Duration, error) {
	if c.journalPending == 0 {
		return t, nil
	}
	n := (c.journalPending + c.ps - 1) / c.ps * c.ps
	n = min(n, c.journalSize)
	c.journalPending = 0
	if c.journalHead+n > c.journalSize {
		c.journalHead = 0
	}
	off := c.journalBase + c.journalHead
	c.journalHead += n
	c.journalBytes += n
	d := c.cpu.run(t, c.cfg.CPU.PerIO)
	return c.submit(d, models.Request{Op: models.Write, Offset: off, Length: n})
}
