package bench

import (
	"math"
	"math/rand/v2"
	"sync"
)

// zoneSet is fio's emulation of zones on a target that has none
// (zonemode=zbd on a regular file or a conventional device, fio's
// ZBD_NONE model): the file is cut into zones of zonesize, each with a
// write pointer. Writes go to a zone's write pointer, at most
// max_open_zones zones are partly written at a time, reads stay below the
// write pointer (read_beyond_wp=0), and a trim resets a zone's write
// pointer without any I/O, as fio does for emulated zones. Jobs of a run
// that use the same file share its zones.
type zoneSet struct {
	mu      sync.Mutex
	size    int64
	wp      []int64 // offset of each zone's write pointer within the file
	open    []int   // zones partly written
	maxOpen int

	// fio's zone_reset_threshold and zone_reset_frequency: once the
	// valid data of the zones written reach threshold × the writer's
	// range, every every-th write resets its zone first
	threshold float64
	every     uint64
	countdown uint64
}

// setReset sets zone_reset_threshold and zone_reset_frequency (0: no
// resets), as fio's zbd_reset_write_cnt counts down 1/frequency writes.
func (z *zoneSet) setReset(threshold, freq float64) {
	if freq <= 0 {
		return
	}
	z.threshold = threshold
	z.every = uint64(min(1/freq, math.MaxUint32))
	z.countdown = z.every
}

// resetDue reports whether a write into [lo, hi) resets its zone first.
func (z *zoneSet) resetDue(first, last int, lo, hi int64) bool {
	if z.every == 0 {
		return false
	}
	var valid int64
	for c := first; c <= last; c++ {
		valid += z.wp[c] - z.start(c)
	}
	if float64(valid) < float64(hi-lo)*z.threshold {
		return false
	}
	if z.countdown--; z.countdown > 0 {
		return false
	}
	z.countdown = z.every
	return true
}

func newZoneSet(fileSize, zoneSize int64, maxOpen int) *zoneSet {
	n := (fileSize + zoneSize - 1) / zoneSize
	z := &zoneSet{size: zoneSize, wp: make([]int64, n), maxOpen: maxOpen}
	for i := range z.wp {
		z.wp[i] = int64(i) * zoneSize
	}
	return z
}

func (z *zoneSet) start(i int) int64 { return int64(i) * z.size }
func (z *zoneSet) end(i int) int64   { return int64(i+1) * z.size }

func (z *zoneSet) isOpen(i int) bool {
	for _, o := range z.open {
		if o == i {
			return true
		}
	}
	return false
}

func (z *zoneSet) close(i int) {
	for k, o := range z.open {
		if o == i {
			z.open = append(z.open[:k], z.open[k+1:]...)
			return
		}
	}
}

// adjust moves an I/O of n bytes proposed at off, within the zones of
// [lo, hi), to where fio's zone emulation puts it. It returns false when
// there is nothing left to do (a read with no written data).
func (z *zoneSet) adjust(d Dir, off, n, lo, hi int64, rng *rand.Rand) (int64, int64, bool) {
	z.mu.Lock()
	defer z.mu.Unlock()
	first, last := int(lo/z.size), int((hi-1)/z.size)
	for len(z.wp) <= last { // a later job's range reaches further
		z.wp = append(z.wp, z.start(len(z.wp)))
	}
	i := min(max(int(off/z.size), first), last)
	switch d {
	case DirTrim: // a zone reset
		z.wp[i] = z.start(i)
		z.close(i)
		return z.start(i), min(z.size, hi-z.start(i)), true
	case DirRead:
		if z.wp[i] == z.start(i) {
			found := false
			for k := range last - first + 1 {
				c := first + (i-first+k)%(last-first+1)
				if z.wp[c] > z.start(c) {
					i, found = c, true
					break
				}
			}
			if !found {
				return 0, 0, false
			}
		}
		if off < z.start(i) || off >= z.wp[i] {
			off = z.start(i)
		}
		return off, min(n, z.wp[i]-off), true
	}
	full := func(c int) bool { return z.wp[c]+n > min(z.end(c), hi) }
	if full(i) || (!z.isOpen(i) && z.maxOpen > 0 && len(z.open) >= z.maxOpen) {
		// another open zone with room, else a fresh one, else reset this
		cands := []int{}
		for _, o := range z.open {
			if o >= first && o <= last && !full(o) {
				cands = append(cands, o)
			}
		}
		switch {
		case len(cands) > 0:
			i = cands[rng.IntN(len(cands))]
		case z.maxOpen == 0 || len(z.open) < z.maxOpen:
			for k := range last - first + 1 {
				c := first + (i-first+k)%(last-first+1)
				if !full(c) {
					i = c
					break
				}
			}
		}
		if full(i) {
			z.wp[i] = z.start(i)
			z.close(i)
		}
	}
	if z.resetDue(first, last, lo, hi) {
		z.wp[i] = z.start(i)
		z.close(i)
	}
	off = z.wp[i]
	z.wp[i] += n
	if !z.isOpen(i) {
		z.open = append(z.open, i)
	}
	if z.wp[i] >= min(z.end(i), hi) {
		z.close(i)
	}
	return off, n, true
}
