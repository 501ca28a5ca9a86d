package raid

import "time"

// The write coalescer (Config.Coalesce).
//
// Intel RST keeps a write-back buffer above its RAID 5 rows ("Volume
// Write-Back Cache and Coalescer"; see Config.Coalesce). Review 001 shows
// what it does and does not gather on an RST RAID 5 with a 128 KiB strip:
// sequential writes smaller than the strip are "almost ten times" slower,
// the read-modify-write price of every partial-strip write, while writes
// of a strip or more reach over 400 MB/s, the full-stripe rate of the
// members. So the coalescer gathers whole strips: a write covering whole
// chunks of a row, but not all of the row, is acknowledged into the buffer
// and held; when later writes have supplied every data chunk of the row,
// the row is written as one full-stripe write. A write covering only part
// of a chunk goes through as a partial-stripe write (partialWrite), as
// without the coalescer.
//
// A held row is written out (as the partial-stripe write it is) when the
// table has no room for a new row (the oldest goes), before a read or
// trim touching it, and on Flush, which completes only after the held
// rows are on the members. A row is held only while every member of it is
// in sync; a held row whose member fails later is written out by
// partialWrite's degraded rules.

// gatherRows bounds the rows held at once. A row waits only until its
// stream's next write, so one row per interleaved sequential stream is
// enough; 64 is an implementation bound, well above the streams any
// reference job interleaves, not a fitted figure.
const gatherRows = 64

// heldRow is one row in the coalescer: the data chunks written so far as
// a bit mask (chunk i of the row is bit i).
type heldRow struct {
	seg   *segment
	row   int64
	mask  uint64
	seq   uint64 // insertion order, for evicting the oldest
	valid bool
}

// gatherable reports whether a partial write of [ws, we) in row of s may
// be held: the coalescer is on, the range is whole chunks, the row is
// narrow enough for the mask and every member is in sync there.
func (a *Array) gatherable(s *segment, row, ws, we int64) bool {
	if a.held == nil || ws%s.chunk != 0 || we%s.chunk != 0 || s.width() > 64 {
		return false
	}
	moff := s.base + row*s.chunk
	for _, m := range s.members {
		if !a.inSync(m, moff, s.chunk) {
			return false
		}
	}
	return true
}

// gather adds the whole chunks [ws, we) of row to the coalescer and
// writes the row as a full stripe once all its data chunks are there.
func (a *Array) gather(s *segment, at time.Duration, row, ws, we int64) error {
	var h *heldRow
	free := -1
	for i := range a.held {
		e := &a.held[i]
		if e.valid && e.seg == s && e.row == row {
			h = e
			break
		}
		if !e.valid && free < 0 {
			free = i
		}
	}
	if h == nil {
		if free < 0 {
			oldest := 0
			for i := range a.held {
				if a.held[i].seq < a.held[oldest].seq {
					oldest = i
				}
			}
			if err := a.writeOut(&a.held[oldest], at); err != nil {
				return err
			}
			free = oldest
		}
		a.heldSeq++
		h = &a.held[free]
		*h = heldRow{seg: s, row: row, seq: a.heldSeq, valid: true}
	}
	for i := ws / s.chunk; i < we/s.chunk; i++ {
		h.mask |= 1 << uint(i)
	}
	if h.mask == 1<<uint(s.width())-1 {
		h.valid = false
		return a.fullStripe(s, at, row)
	}
	return nil
}

// writeOut writes a held row's chunks as partial-stripe writes (one per
// run of consecutive chunks) and frees its slot.
func (a *Array) writeOut(h *heldRow, at time.Duration) error {
	h.valid = false
	c, w := h.seg.chunk, h.seg.width()
	for i := 0; i < w; {
		if h.mask&(1<<uint(i)) == 0 {
			i++
			continue
		}
		j := i
		for j < w && h.mask&(1<<uint(j)) != 0 {
			j++
		}
		if err := a.partialWrite(h.seg, at, h.row, int64(i)*c, int64(j)*c); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// writeOutRange writes out the held rows of s that overlap the segment's
// bytes [off, end); all rows of every segment when s is nil.
func (a *Array) writeOutRange(s *segment, at time.Duration, off, end int64) error {
	for i := range a.held {
		h := &a.held[i]
		if !h.valid {
			continue
		}
		if s != nil {
			rowBytes := s.chunk * int64(s.width())
			if h.seg != s || (h.row+1)*rowBytes <= off || h.row*rowBytes >= end {
				continue
			}
		}
		if err := a.writeOut(h, at); err != nil {
			return err
		}
	}
	return nil
}
