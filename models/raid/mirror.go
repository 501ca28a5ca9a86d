package raid

import (
	"time"

	"github.com/nasemu/nasemu/models"
)

// pickCopy returns the member of s, other than exclude, that holds
// current data for member bytes [off, off+n) and whose queue this array
// expects to drain first (members idle at `at` count as equally free).
// Ties go to the lower index, so a lone sequential stream stays on one
// member, as md's read balancing keeps it. It returns -1 when no copy is
// in sync.
func (a *Array) pickCopy(s *segment, at time.Duration, exclude int, off, n int64) int {
	best := -1
	for _, m := range s.members {
		if m == exclude || !a.inSync(m, off, n) {
			continue
		}
		if best < 0 || max(a.free[m], at) < max(a.free[best], at) {
			best = m
		}
	}
	return best
}

// mirror serves RAID 1 (n-way): a read goes whole to one member, a write
// or trim to every member in sync for the range (a member being rebuilt
// gets the writes below its rebuild position; the rebuild copies the rest).
func (a *Array) mirror(s *segment, at time.Duration, op models.Op, off, end int64) error {
	moff, n := s.base+off, end-off
	if op == models.Read {
		m := a.pickCopy(s, at, -1, moff, n)
		if m < 0 {
			return a.lostErr()
		}
		return a.queue(m, op, moff, n, at)
	}
	for _, m := range s.members {
		if a.inSync(m, moff, n) {
			if err := a.queue(m, op, moff, n, at); err != nil {
				return err
			}
		}
	}
	return nil
}

// mirrorStriped serves RAID 10 in md's "near 2" layout with an even
// member count: chunk c of the array is on mirror pair c mod (n/2), at row
// c div (n/2), on both members of the pair. Each chunk piece of a read goes
// to the member of its pair that frees up first.
func (a *Array) mirrorStriped(s *segment, at time.Duration, op models.Op, off, end int64) error {
	for off < end {
		local, moff := s.locate(off)
		n := min(end-off, s.chunk-s.inChunk(off))
		m0, m1 := s.members[local], s.members[local+1]
		ok0, ok1 := a.inSync(m0, moff, n), a.inSync(m1, moff, n)
		if op == models.Read {
			m := m0
			switch {
			case ok0 && ok1:
				if max(a.free[m1], at) < max(a.free[m0], at) {
					m = m1
				}
			case ok1:
				m = m1
			case !ok0:
				return a.lostErr()
			}
			if err := a.queue(m, op, moff, n, at); err != nil {
				return err
			}
		} else {
			if ok0 {
				if err := a.queue(m0, op, moff, n, at); err != nil {
					return err
				}
			}
			if ok1 {
				if err := a.queue(m1, op, moff, n, at); err != nil {
					return err
				}
			}
		}
		off += n
	}
	return nil
}
