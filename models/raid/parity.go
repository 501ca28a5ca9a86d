package raid

import (
	"time"

	"github.com/nasemu/nasemu/models"
)

// parityRead serves reads of RAID 5 and RAID 6: each chunk piece is read
// from the member holding it, or, when that member is failed or not yet
// rebuilt there, reconstructed from the rest of its row (degraded.go).
func (a *Array) parityRead(s *segment, at time.Duration, off, end int64) error {
	if err := a.writeOutRange(s, at, off, end); err != nil {
		return err
	}
	w := int64(s.width())
	for off < end {
		local, moff := s.locate(off)
		n := min(end-off, s.chunk-s.inChunk(off))
		m := s.members[local]
		var err error
		if a.inSync(m, moff, n) {
			err = a.queue(m, models.Read, moff, n, at)
		} else {
			err = a.degradedRead(s, at, s.chunkOf(off)/w, local, moff, n)
		}
		if err != nil {
			return err
		}
		off += n
	}
	return nil
}

// parityWrite serves writes of RAID 5 and RAID 6 row by row. A row whose
// data chunks are all overwritten is a full-stripe write: the new parity
// is computed from the new data alone, so data and parity are written with
// no reads. Any other row is a partial-stripe write (partialWrite).
func (a *Array) parityWrite(s *segment, at time.Duration, off, end int64) error {
	rowBytes := s.chunk * int64(s.width())
	for off < end {
		row := off / rowBytes
		rs := row * rowBytes
		ws, we := off-rs, min(end, rs+rowBytes)-rs
		var err error
		switch {
		case ws == 0 && we == rowBytes:
			err = a.fullStripe(s, at, row)
		case a.gatherable(s, row, ws, we):
			err = a.gather(s, at, row, ws, we)
		default:
			err = a.partialWrite(s, at, row, ws, we)
		}
		if err != nil {
			return err
		}
		off = rs + we
	}
	return nil
}

// fullStripe writes every chunk of row, data and parity, with no reads.
func (a *Array) fullStripe(s *segment, at time.Duration, row int64) error {
	a.c.fullStripeWrites++
	moff := s.base + row*s.chunk
	for _, m := range s.members {
		if a.inSync(m, moff, s.chunk) {
			if err := a.queue(m, models.Write, moff, s.chunk, at); err != nil {
				return err
			}
		}
	}
	return nil
}

// parityTrim passes a trim down only for whole rows, to the data and
// parity chunks of the row alike, as md does (it ignores discards of
// partial stripes, whose parity still covers live data). Partial rows
// complete at once without member I/O.
func (a *Array) parityTrim(s *segment, at time.Duration, off, end int64) error {
	if err := a.writeOutRange(s, at, off, end); err != nil {
		return err
	}
	rowBytes := s.chunk * int64(s.width())
	for row := (off + rowBytes - 1) / rowBytes; (row+1)*rowBytes <= end; row++ {
		moff := s.base + row*s.chunk
		for _, m := range s.members {
			if a.inSync(m, moff, s.chunk) {
				if err := a.queue(m, models.Trim, moff, s.chunk, at); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Partial-stripe writes.
//
// The new parity over the written byte range [lo, hi) of the row's chunks
// can be computed two ways:
//
//   - read-modify-write (RMW): read the old data being overwritten and the
//     old parity, then P' = P ⊕ D ⊕ D' (and Q likewise). Reads: the touched
//     data chunks plus every parity chunk.
//   - reconstruct-write (RCW): read the data of the row that is not being
//     overwritten and compute the parity from scratch. Reads: every data
//     chunk with bytes in [lo, hi) that the write leaves alone.
//
// The write phase (new data and new parity) is the same either way and
// starts when the last read completes (rw submits it after the request's
// other member I/O). Like md (rmw_level's default) the
// array picks the way with fewer member reads and, on a tie, RCW. A 4 KiB
// write to a RAID 5 of four or more members thus costs 2 reads + 2 writes;
// to a RAID 6 of six or more 3 reads + 3 writes (with four or five members
// RCW is cheaper: 1 or 2 reads + 3 writes).
//
// There is no stripe cache: every partial-stripe write pays its reads
// (unless the coalescer gathers it, gather.go), which is what md does for synchronous
// writes narrower than a stripe (its stripe cache holds 4 KiB stripe heads
// just long enough for one request; the next sequential write touches
// other ones). Sequential small writes become full-stripe writes only when
// a write-back cache above the array gathers them, and that cache is a
// layer of its own (the NAS page cache, a cache tier), not the array's.
//
// Degraded rows: a way that would read a member that is not in sync is not
// possible; when neither is (RAID 6 with one touched and one untouched
// chunk lost) the array reads everything the RCW needs that survives plus
// the surviving parity, reconstructs the missing data and writes. When
// every parity member of the row is lost the data is just written.
func (a *Array) partialWrite(s *segment, at time.Duration, row, ws, we int64) error {
	c := s.chunk
	d := s.width()
	rowOff := s.base + row*c
	first, last := int(ws/c), int((we-1)/c)
	lo, hi := ws-int64(first)*c, we-int64(last)*c
	if first != last {
		lo, hi = 0, c
	}
	p, q := s.parityLocal(row)
	parityAlive := 0
	for _, l := range [2]int{p, q} {
		if l >= 0 && a.inSync(s.members[l], rowOff, c) {
			parityAlive++
		}
	}
	rmwOK, rcwOK := true, true
	rmwReads, rcwReads := parityAlive, 0
	for i := 0; i < d; i++ {
		alive := a.inSync(s.members[s.dataLocal(row, i)], rowOff, c)
		if i >= first && i <= last {
			if alive {
				rmwReads++
			} else {
				rmwOK = false
			}
		}
		if nlo, nhi := rcwNeed(i, first, last, lo, hi, ws-int64(first)*c, we-int64(last)*c, c); nhi > nlo {
			if alive {
				rcwReads++
			} else {
				rcwOK = false
			}
		}
	}
	const (
		noParity = iota
		rmw
		rcw
		reconstruct
	)
	mode := reconstruct
	switch {
	case parityAlive == 0:
		mode = noParity
	case rmwOK && (!rcwOK || rmwReads < rcwReads):
		mode = rmw
		a.c.readModifyWrites++
	case rcwOK:
		mode = rcw
		a.c.reconstructWrites++
	default:
		a.c.reconstructWrites++
	}

	a.reads, a.wrs = a.reads[:0], a.wrs[:0]
	for i := 0; i < d; i++ {
		m := s.members[s.dataLocal(row, i)]
		if !a.inSync(m, rowOff, c) {
			continue
		}
		if i >= first && i <= last {
			si, ei := max(ws-int64(i)*c, 0), min(we-int64(i)*c, c)
			a.wrs = append(a.wrs, memberIO{member: m, off: rowOff + si, n: ei - si})
			if mode == rmw {
				a.reads = append(a.reads, memberIO{member: m, off: rowOff + si, n: ei - si})
			}
		}
		if mode == rcw || mode == reconstruct {
			if nlo, nhi := rcwNeed(i, first, last, lo, hi, ws-int64(first)*c, we-int64(last)*c, c); nhi > nlo {
				a.reads = append(a.reads, memberIO{member: m, off: rowOff + nlo, n: nhi - nlo})
			}
		}
	}
	if mode != noParity {
		for _, l := range [2]int{p, q} {
			if l < 0 || !a.inSync(s.members[l], rowOff, c) {
				continue
			}
			m := s.members[l]
			a.wrs = append(a.wrs, memberIO{member: m, off: rowOff + lo, n: hi - lo})
			if mode == rmw || mode == reconstruct {
				a.reads = append(a.reads, memberIO{member: m, off: rowOff + lo, n: hi - lo})
			}
		}
	}
	readsDone := at
	for _, io := range a.reads {
		done, err := a.submitMember(io.member, models.Read, io.off, io.n, at)
		if err != nil {
			return err
		}
		readsDone = max(readsDone, done)
	}
	for _, io := range a.wrs {
		io.at = readsDone
		a.later = append(a.later, io)
		// Keep the write phases in time order.
		for k := len(a.later) - 1; k > 0 && a.later[k-1].at > a.later[k].at; k-- {
			a.later[k-1], a.later[k] = a.later[k], a.later[k-1]
		}
	}
	a.done = max(a.done, readsDone)
	return nil
}

// rcwNeed returns the chunk-relative byte range of data chunk i that a
// reconstruct-write must read: the parity range [lo, hi) less what the
// write overwrites in chunk i. Chunks first..last are written; the first
// from sFirst to its end (or to eLast when first == last), the last from
// its start to eLast, the ones between whole. The result is empty or one
// piece.
func rcwNeed(i, first, last int, lo, hi, sFirst, eLast, c int64) (int64, int64) {
	switch {
	case i < first || i > last:
		return lo, hi
	case first == last:
		return 0, 0
	case i == first:
		return 0, sFirst
	case i == last:
		return eLast, c
	}
	return 0, 0
}
