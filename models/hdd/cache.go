package hdd

import "math"

// The DRAM buffer: read segments with read-ahead, and a write-back cache.
//
// # Read segments and read-ahead
//
// Each media read fills a segment: the data read, then whatever the head
// reads past it while it has nothing else to do (read-ahead), up to
// ReadAhead bytes. The read-ahead is never scheduled: a segment records
// when the head reached the end of the read (t0), and byte b past it is in
// the buffer from t0 + T(b) − T(from) on, until the head is taken for
// other work (stop). A read that falls inside a segment is served from the
// buffer as soon as its last byte is there; if it hits the segment being
// filled, the read-ahead is extended past it, so a sequential stream keeps
// the head reading and runs at the media rate with no lost revolutions.
//
// # Write-back
//
// With the write cache on, a write completes once its data has crossed the
// link into the buffer. Dirty data is kept as ranges (a write that
// continues the last range extends it). Destaging is lazy: when a command
// arrives, the head's idle time since its last work is spent writing dirty
// ranges, each step taking the range that is cheapest to reach (the drive
// reorders its cached writes) and writing at most one revolution of it. A
// write that finds the buffer full waits for destage steps that free room;
// a Flush waits until every dirty byte is on the media.
//
// # Arrival
//
// Idle time can only be spent on data that is in the buffer. The head may
// have been idle long before a burst of writes arrives, and with queued
// commands a write's data may still be on the link while the drive
// answers earlier ones, so a destage step never starts before the data it
// writes has arrived: a step at time s writes a range only up to the first
// byte of a write whose data was not all in the buffer at s, and when no
// dirty byte has arrived by s the step waits for the next arrival. The
// link delivers writes in order, so their arrival times grow with
// submission order; a small ring of the latest writes' ranges and arrival
// times (see noteArrival) tells, from its newest end, which dirty bytes are
// still in flight. A write's bytes count as arrived when all of it has.

// segment is one read segment of the buffer. Its byte range [start,
// limit) lives in Drive.ranges, where the lookup on every read scans it.
type segment struct {
	from   int64   // read-ahead starts here; [start, from) arrived by t0
	zFrom  int     // zone of from
	t0     float64 // time the head reached from
	tFrom  float64 // media time T(from)
	tLimit float64 // media time and radial position of limit
	xLimit float64
	stop   float64 // time read-ahead stopped (+Inf while running)
}

// byteRange is [start, limit); empty (0, 0) for an invalid segment.
type byteRange struct{ start, limit int64 }

// arrival is a write taken into the write cache: its range and when its
// data had all crossed the link into the buffer.
type arrival struct {
	start, end int64
	in         float64
}

// arrivalRing is how many of the latest cached writes the drive remembers
// the arrival of. Only writes still on the link matter, at most the
// commands outstanding; a longer backlog (an open-loop host far ahead of
// the link) only makes destaging wait for the newest write forgotten.
const arrivalRing = 2 * maxQueueDepth

// extent is one dirty range of the write cache.
type extent struct {
	start, end int64
	tStart     float64 // media time and radial position of start
	xStart     float64
}

// avail returns when byte b−1 of the segment is in the buffer, and whether
// it ever will be.
func (d *Drive) avail(sg *segment, b int64) (float64, bool) {
	if b <= sg.from {
		return sg.t0, true
	}
	tb, _ := d.g.locate(b)
	at := sg.t0 + tb - sg.tFrom
	return at, at <= sg.stop
}

// raEnd returns when the running read-ahead reaches its limit.
func (d *Drive) raEnd() float64 {
	sg := &d.segs[d.ra]
	return sg.t0 + sg.tLimit - sg.tFrom
}

// setLimit moves the read-ahead limit of segment i, keeping at most two
// segments' worth of data in it.
func (d *Drive) setLimit(i int, limit int64) {
	r := &d.ranges[i]
	r.limit = limit
	r.start = max(r.start, limit-2*d.segBytes)
	sg := &d.segs[i]
	sg.tLimit, sg.xLimit = d.g.locate(limit)
}

// cached looks [a, b) up in the buffer for a read ready at cmd and returns
// when the data is in the buffer.
func (d *Drive) cached(a, b int64, cmd float64) (float64, bool) {
	// Both scans test containment with one branch, not two: the offset
	// of a random read lies before a range's start about half the time,
	// so a branch on that alone is mispredicted about as often. [a, b)
	// lies in [start, end) exactly when a − start and end − b are both
	// ≥ 0, that is when their OR is; offsets lie in [0, capacity], so
	// neither difference overflows.
	for i := range d.dirty {
		if e := &d.dirty[i]; (a-e.start)|(e.end-b) >= 0 {
			return cmd, true
		}
	}
	for i, r := range d.ranges {
		if (a-r.start)|(r.limit-b) < 0 {
			continue
		}
		at, ok := d.avail(&d.segs[i], b)
		if !ok {
			continue
		}
		if i == d.ra && cmd <= d.raEnd() {
			// The head is still streaming into this segment: keep it going.
			if limit := min(d.g.capacity, b+d.raBytes); limit > r.limit {
				d.setLimit(i, limit)
			}
		}
		return at, true
	}
	return 0, false
}

// startReadAhead makes the range p, just read from the media by end, a
// segment and lets the head read on past it.
func (d *Drive) startReadAhead(p pending, end float64) {
	if len(d.segs) == 0 {
		return
	}
	i := d.segNext
	if d.segNext++; d.segNext == len(d.segs) { // round robin (no division per read)
		d.segNext = 0
	}
	d.segs[i] = segment{from: p.end, zFrom: d.g.zoneOf(p.end), t0: end, tFrom: p.tEnd, stop: math.Inf(1)}
	d.ranges[i] = byteRange{start: p.start}
	d.setLimit(i, min(d.g.capacity, p.end+d.raBytes))
	d.ra = i
}

// takeHead stops a running read-ahead at time s (when the head is needed
// for other work) and places the head where the read-ahead left it.
func (d *Drive) takeHead(s float64) {
	if d.ra < 0 {
		return
	}
	sg := &d.segs[d.ra]
	if end := d.raEnd(); s >= end {
		sg.stop, d.headX = end, sg.xLimit
	} else {
		sg.stop = s
		d.headX = d.g.xAtTime(sg.tFrom+max(s-sg.t0, 0), sg.zFrom)
	}
	if d.traceHead != nil {
		d.traceHead(sg.t0, sg.stop, sg.from, d.ranges[d.ra].limit, workReadAhead)
	}
	d.ra = -1
}

// invalidate drops read segments that overlap a write to [a, b).
func (d *Drive) invalidate(a, b int64) {
	for i := range d.ranges {
		if r := &d.ranges[i]; a < r.limit && r.start < b {
			*r = byteRange{}
		}
	}
}

// idleFrom returns when the head has nothing to do: its last committed
// work is done and any read-ahead has reached its limit.
func (d *Drive) idleFrom() float64 {
	if d.ra >= 0 {
		return max(d.headFree, d.raEnd())
	}
	return d.headFree
}

// noteArrival remembers that the data of a cached write to [a, b) was all
// in the buffer at in.
func (d *Drive) noteArrival(a, b int64, in float64) {
	if d.arrLen == len(d.arr) {
		// Arrivals grow along the ring: the one forgotten is the newest
		// forgotten so far.
		d.arrForgot = d.arr[d.arrNext].in
	} else {
		d.arrLen++
	}
	d.arr[d.arrNext] = arrival{start: a, end: b, in: in}
	d.arrNext = (d.arrNext + 1) % len(d.arr)
}

// inFlight returns how many of the newest remembered writes were still
// arriving at s. Arrivals grow along the ring, so they are its newest end.
func (d *Drive) inFlight(s float64) int {
	k := 0
	for k < d.arrLen && d.arr[(d.arrNext-1-k+len(d.arr))%len(d.arr)].in > s {
		k++
	}
	return k
}

// arrived returns how many bytes from the start of e were in the buffer at
// s, given the k writes still arriving then.
func (d *Drive) arrived(e *extent, k int) int64 {
	n := e.end - e.start
	for j := 0; j < k && n > 0; j++ {
		r := &d.arr[(d.arrNext-1-j+len(d.arr))%len(d.arr)]
		if r.start < e.start+n && e.start < r.end {
			n = max(r.start-e.start, 0)
		}
	}
	return n
}

// destageFrom returns the first time from s on when some dirty data is in
// the buffer to be destaged.
func (d *Drive) destageFrom(s float64) float64 {
	for {
		s = max(s, d.arrForgot)
		k := d.inFlight(s)
		if k == 0 {
			return s
		}
		for i := range d.dirty {
			if d.arrived(&d.dirty[i], k) > 0 {
				return s
			}
		}
		// Wait for the oldest write still arriving.
		s = d.arr[(d.arrNext-k+len(d.arr))%len(d.arr)].in
	}
}

// destageIdle spends the head's idle time before until on destaging data
// that is in the buffer. A step that starts before until runs to its end
// (it is not preempted).
func (d *Drive) destageIdle(until float64) {
	for len(d.dirty) > 0 {
		s := d.destageFrom(d.idleFrom())
		if s >= until {
			return
		}
		d.takeHead(s)
		d.destageOne(s)
	}
}

// destageNow destages one step as soon as the head is free after now and
// there is data in the buffer to destage.
func (d *Drive) destageNow(now float64) {
	s := d.destageFrom(max(now, d.headFree))
	d.takeHead(s)
	d.destageOne(s)
}

// destageOne writes up to one revolution of the dirty data cheapest to
// reach from the head at time s (head taken, s ≥ headFree, and some dirty
// data in the buffer at s: see destageFrom).
func (d *Drive) destageOne(s float64) {
	k := d.inFlight(s)
	best, bestSeek, bestCost, bestN := -1, 0.0, 0.0, int64(0)
	for i := range d.dirty {
		e := &d.dirty[i]
		n := e.end - e.start
		if k > 0 {
			if n = d.arrived(e, k); n == 0 {
				continue // its first bytes are still on the link
			}
		}
		sk := d.seek.time(abs(e.xStart - d.headX))
		if best >= 0 && sk >= bestCost {
			continue // the rotational wait can only add to it
		}
		cost := sk + d.g.rotWait(s+sk, e.tStart)
		if best < 0 || cost < bestCost {
			best, bestSeek, bestCost, bestN = i, sk, cost, n
		}
	}
	e := &d.dirty[best]
	w := min(bestN, d.g.trackBytesAt(e.start))
	tEnd, xEnd := d.g.locate(e.start + w)
	end := s + bestCost + (tEnd - e.tStart)
	d.noteSeek(bestSeek, bestCost-bestSeek)
	d.headFree, d.headX = end, xEnd
	d.headNs += end - s
	d.lastWriteEnd = max(d.lastWriteEnd, end)
	if d.traceHead != nil {
		d.traceHead(s, end, e.start, e.start+w, workDestage)
	}
	d.mediaBytesWritten += w
	d.dirtyBytes -= w
	d.destages++
	e.start, e.tStart, e.xStart = e.start+w, tEnd, xEnd
	if e.start == e.end {
		d.dirty = append(d.dirty[:best], d.dirty[best+1:]...)
	}
}

// absorb takes [a, b), whose data is all in the buffer at in, into the
// write cache once there is room, destaging from now on if needed, and
// returns when the room was there.
func (d *Drive) absorb(a, b int64, now, in float64) float64 {
	ready := now
	n := b - a
	for {
		last := len(d.dirty) - 1
		coalesce := last >= 0 && d.dirty[last].end == a
		if d.dirtyBytes+n <= d.wcBytes && (coalesce || len(d.dirty) < d.cfg.WriteCacheEntries) {
			if coalesce {
				d.dirty[last].end = b
			} else {
				ta, xa := d.g.locate(a)
				d.dirty = append(d.dirty, extent{start: a, end: b, tStart: ta, xStart: xa})
			}
			d.dirtyBytes += n
			d.noteArrival(a, b, in)
			return ready
		}
		d.destageNow(now)
		ready = max(ready, d.headFree)
	}
}
