package cache

import (
	"time"

	"github.com/nasemu/nasemu/models"
)

// stream is one sequential stream the bypass detector follows.
type stream struct {
	next int64  // offset just past the stream's last request
	run  int64  // bytes the stream has run sequentially
	used uint64 // tick of last use, for replacement
}

// sequential reports whether r belongs to a sequential stream that has run
// for at least SequentialBypass bytes (a single request that large counts).
func (tr *Tier) sequential(r models.Request) bool {
	tr.tick++
	limit := int64(tr.cfg.SequentialBypass)
	victim := 0
	for i := range tr.streams {
		st := &tr.streams[i]
		if st.run > 0 && st.next == r.Offset {
			st.next, st.used = r.End(), tr.tick
			st.run += r.Length
			return !tr.cfg.KeepSequential && st.run >= limit
		}
		if st.used < tr.streams[victim].used {
			victim = i
		}
	}
	tr.streams[victim] = stream{next: r.End(), run: r.Length, used: tr.tick}
	return !tr.cfg.KeepSequential && r.Length >= limit
}

// read serves a read from the cache when every sector it touches is
// cached, and from the backing device otherwise, filling the cache after
// the miss completes.
func (tr *Tier) read(at time.Duration, r models.Request) (time.Duration, error) {
	off, end := r.Offset, r.End()
	first := off - off%tr.block
	hit, dirty := true, false
	for base := first; base < end; base += tr.block {
		s := tr.t.lookup(base / tr.block)
		if s < 0 {
			hit = false
			continue
		}
		m := tr.sectorMask(base, off, end)
		if tr.t.valid[s]&m != m {
			hit = false
		}
		if tr.t.dirty[s]&m != 0 {
			dirty = true
		}
	}
	if tr.sequential(r) && !dirty {
		tr.bypassedBytes += r.Length
		tr.backingWaits++
		return tr.backing.Submit(at, r)
	}
	if hit {
		tr.hits++
		return tr.readCached(at, off, end)
	}
	tr.misses++
	done, err := tr.backing.Submit(at, r)
	if err != nil {
		return at, err
	}
	// Fill: the data is in memory once the miss completes; writing it to
	// the SSD does not delay the reply.
	for base := first; base < end; base += tr.block {
		b := base / tr.block
		s := tr.t.lookup(b)
		if s < 0 {
			if s, err = tr.allocate(done, b); err != nil {
				return done, err
			}
		} else {
			tr.t.touch(s)
		}
		fill := tr.sectorMask(base, off, end) &^ tr.t.valid[s]
		if fill == 0 {
			continue
		}
		if _, err := tr.writeSlot(done, s, fill, false); err != nil {
			return done, err
		}
		tr.t.valid[s] |= fill
		tr.fills += int64(popcount(fill)) * tr.sector
	}
	return done, nil
}

// readCached reads [off, end) from the cache drives: one read per block
// (blocks are not contiguous on the SSD). With mirrors, reads alternate
// between the copies.
func (tr *Tier) readCached(at time.Duration, off, end int64) (time.Duration, error) {
	done := at
	for base := off - off%tr.block; base < end; base += tr.block {
		s := tr.t.lookup(base / tr.block)
		tr.t.touch(s)
		lo, hi := max(off, base), min(end, base+tr.block)
		drive, dOff := tr.where(s, 0)
		if tr.rw {
			tr.mirrorRR = (tr.mirrorRR + 1) % len(tr.drives)
			drive = tr.mirrorRR
		}
		e, err := tr.drives[drive].Submit(at, models.Request{Op: models.Read, Offset: dOff + lo - base, Length: hi - lo})
		if err != nil {
			return at, err
		}
		done = max(done, e)
	}
	return done, nil
}

// writeSlot writes the sectors m of slot s to the cache drives (every
// mirror in read-write mode), one write per contiguous run, and returns
// when the last completes.
//
// A host write's writes (own) are issued by their caller; a fill's (own is
// false) by the tier's worker thread, one I/O each (cpu.go). The mirrors'
// copies of one write are one I/O to the CPU: the cache's mirror is
// software RAID 1 below the target, whose work the block stack's per-I/O
// cost includes, as it does for the array's own RAID.
func (tr *Tier) writeSlot(at time.Duration, s int32, m uint64, own bool) (time.Duration, error) {
	done := at
	err := runs(m, func(first, n int) error {
		drive, off := tr.where(s, first)
		req := models.Request{Op: models.Write, Offset: off, Length: int64(n) * tr.sector}
		t := at
		if !own {
			t = tr.work(at, tr.ioCost)
		}
		if !tr.rw {
			e, err := tr.drives[drive].Submit(t, req)
			done = max(done, e)
			return err
		}
		for _, d := range tr.drives {
			e, err := d.Submit(t, req)
			if err != nil {
				return err
			}
			done = max(done, e)
		}
		return nil
	})
	return done, err
}

// allocate gives block b a slot: a fresh one while the cache has room,
// else the least recently used clean one. If every slot is dirty the
// victim is flushed first, at `at`.
func (tr *Tier) allocate(at time.Duration, b int64) (int32, error) {
	s := tr.t.grow()
	if s < 0 {
		s = tr.t.victim()
		if tr.t.dirty[s] != 0 {
			if _, err := tr.flushSlot(at, s); err != nil {
				return s, err
			}
		}
	}
	tr.t.assign(s, b)
	return s, nil
}
