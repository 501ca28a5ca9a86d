package hdd

import (
	"math"
	"math/bits"
)

// Native Command Queuing under reservation.
//
// A real drive holds up to 32 commands and, each time the head frees up,
// starts the one it can reach soonest (shortest positioning time first,
// SPTF). Here a command's completion is fixed when it is submitted, so a
// command answered earlier cannot be overtaken later. The drive instead
// keeps the positions (not the identities) of the commands that are queued
// but not yet served. When a media command arrives it adds its position to
// that set, the head's next slot goes to the cheapest position in the set
// (seek plus rotational wait from where the head will be), and that
// position leaves the set. The arriving command completes at the end of
// that slot.
//
// The head therefore follows exactly the path a greedy SPTF scheduler
// would, over the same set of queued positions, so throughput and the head
// position (which drives locality and rotation) are those of SPTF. What is
// not reproduced is which command finishes in which slot: completions keep
// submission order, so latency has FIFO's narrow spread instead of SPTF's
// starvation tail; mean latency is the same by Little's law. The set is
// trimmed to the commands actually outstanding (counted from the
// completion times already given out), so an idle drive forgets positions
// whose commands have long completed.
//
// Each command adds one position and each slot removes one, so in a steady
// closed loop the set keeps the positions SPTF has passed over so far, and
// each decision faces the choice a real SPTF scheduler faces after each
// completion: the sequence of decisions is statistically the same process,
// and the rotational arithmetic uses each slot's true start time. One
// detail matters at low depth: a host that reissues a command the moment
// another completes is late for the decision the drive makes at that
// completion, by the lag from the completion to the new command being
// decoded (at least one command overhead). It is not too late: the head
// spends the positioning time of the command it chose first (a seek and on
// average half a revolution, milliseconds) getting there, and a drive
// re-sorts its queue when a command arrives (ATA NCQ and SCSI tagged
// queuing leave the order to the drive, SATA II/ATA8-ACS; rotational
// position ordering re-evaluates on arrival), so the newcomer wins the slot
// when it can be reached sooner even though it arrived late. Such a command
// is therefore a candidate whose positioning starts that lag after the
// decision; since the lag (a fraction of a millisecond) is short against
// a seek, the head is taken to be where the decision found it. At QD2 the
// drive thus chooses between the queued command and the late one, the
// +15–25 % that 7200 rpm drives show over QD1 rather than none.
// Only when the queue grows (a burst) must positions be invented: the
// recent commands' positions stand in for the commands that will follow.
// ncq_test.go checks throughput against an event-driven SPTF simulator
// that revises its choice the same way.

// pending is the position of a queued media command.
type pending struct {
	start, end int64
	tStart     float64 // media times and radial positions of both ends
	tEnd       float64
	xStart     float64
	xEnd       float64
	write      bool
}

// recentWindows is the span of each of the latest commands in the drive,
// for counting the queue (see queueAt): a ring, stored as parallel arrays
// and a bit mask so that the count is a few instructions per command.
type recentWindows struct {
	at, done [maxQueueDepth]int64 // arrival and completion, whole ns
	media    uint32               // bit i: command i used the media
	next     int                  // the ring position written next
	// The latest completion among each group of windowGroup consecutive
	// ring positions: a group that completed more than a command overhead
	// before t has nothing to count.
	groupDone [maxQueueDepth / windowGroup]int64
}

// windowGroup is the size of the groups of recentWindows.groupDone.
const windowGroup = 8

// queueAt returns how many commands, and how many media commands, are in
// the drive at time t, counting one arriving then, and when the latest
// media command that completed less than a command overhead before t
// completed (−Inf if none did: the arriving command replaces none).
func (d *Drive) queueAt(t float64) (all, media int, reissuedAfter float64) {
	all, media = 1, 1
	if t >= d.recentMaxDone {
		// Everything remembered has completed: the common QD1 case.
		if t-d.lastMediaDone < d.ovh {
			return all, media, d.lastMediaDone
		}
		return all, media, math.Inf(-1)
	}
	// Every command's arrival and completion are whole ns (t comes from
	// a time.Duration, completions are rounded), so they are compared as
	// integers, and each test is one unsigned comparison: x lies in
	// [lo, hi) exactly when x − lo < hi − lo as unsigned numbers (for lo ≤
	// hi; a command never completes before it arrives). The results are
	// collected as bits and counted at the end, without branches: at a
	// deep queue whether a window is open is a coin toss for the branch
	// predictor, and all 32 are tested for every command.
	// Only commands completing after t − ovh count for anything, and at
	// a deep queue those are the latest few, so most groups are skipped
	// whole. (Times are far below 2⁶³ ns apart: no difference overflows.)
	w := &d.recent
	ti, ovh := int64(t), uint64(d.ovh)
	var open uint32 // in the drive at t
	closedDone := int64(math.MinInt64)
	for g, last := range w.groupDone {
		if ti-last >= int64(ovh) {
			continue
		}
		for i := g * windowGroup; i < (g+1)*windowGroup; i++ {
			open |= b2u(uint64(ti-w.at[i]) < uint64(w.done[i]-w.at[i])) << i
			// A media command that completed less than ovh before t
			// (rare, so the branch is predicted).
			if uint64(ti-w.done[i]) < ovh && w.media&(1<<i) != 0 {
				closedDone = max(closedDone, w.done[i])
			}
		}
	}
	all += bits.OnesCount32(open)
	media += bits.OnesCount32(open & w.media)
	if closedDone == math.MinInt64 {
		return all, media, math.Inf(-1)
	}
	return all, media, float64(closedDone)
}

// b2u is 1 for true and 0 for false (compiled to a flag set, not a branch).
func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// remember stores a command's span in the ring of recent commands.
func (d *Drive) remember(at, done float64, media bool) {
	d.recentMaxDone = max(d.recentMaxDone, done)
	if media {
		d.lastMediaDone = max(d.lastMediaDone, done)
	}
	w := &d.recent
	w.at[w.next], w.done[w.next] = int64(at), int64(done)
	w.media = w.media&^(1<<w.next) | b2u(media)<<w.next
	g := w.next / windowGroup
	last := w.done[g*windowGroup]
	for _, c := range w.done[g*windowGroup+1 : (g+1)*windowGroup] {
		last = max(last, c)
	}
	w.groupDone[g] = last
	w.next = (w.next + 1) % len(w.at)
}

// queued reports whether a position starting at byte a is in the queue.
func (d *Drive) queued(a int64) bool {
	for i := 0; i < d.qLen; i++ {
		if d.queue[i].start == a {
			return true
		}
	}
	return false
}

// mediaOp serves one media command (ready for the mechanism at cmd; the
// queue as found by queueAt) through the SPTF slot model. It returns when
// the slot ends and the range the head transferred in it, which is where
// the head now is: the arriving command's own range unless another queued
// one was cheaper.
func (d *Drive) mediaOp(cmd float64, a, b int64, isWrite bool) (end float64, c pending) {
	others := max(min(d.qMedia, d.cfg.QueueDepth)-1, 0)
	// Positions beyond the commands still outstanding were served already.
	if drop := d.qLen - others; drop > 0 {
		copy(d.queue[:], d.queue[drop:d.qLen])
		d.qLen -= drop
	}
	// When the queue has grown (the start of a burst), the positions of
	// the commands that will follow are not known yet; the most recent
	// commands' positions stand in for them.
	for k := 1; d.qLen < others && k <= d.histLen; k++ {
		h := d.hist[(d.histNext-k+len(d.hist))%len(d.hist)]
		if !d.queued(h.start) {
			d.queue[d.qLen] = h
			d.qLen++
		}
	}
	var p pending
	p.start, p.end = a, b
	p.tStart, p.xStart, p.tEnd, p.xEnd = d.g.locateRange(a, b)
	p.write = isWrite
	d.queue[d.qLen] = p
	d.qLen++
	d.hist[d.histNext] = p
	d.histNext = (d.histNext + 1) % len(d.hist)
	d.histLen = min(d.histLen+1, len(d.hist))

	s := max(cmd, d.headFree)
	d.takeHead(s)
	// The arriving command (the last position) replaces one that completed
	// less than a command overhead ago: the drive made the decision this
	// slot stands for when that one completed, and this command joins it
	// late by the time from that completion until it was decoded. Its
	// positioning starts that much after the slot's start (see above).
	// When the head waits for this command anyway (s == cmd), there is no
	// earlier decision to join.
	// Alone in the queue it has no rival to be late for.
	late := 0.0
	if s > cmd && d.qLen > 1 && !math.IsInf(d.qReissuedAfter, -1) {
		late = max(cmd-d.qReissuedAfter, 0)
	}
	newest := d.qLen - 1
	best, bestSeek, bestCost := 0, 0.0, 0.0
	// A candidate whose seek alone is no cheaper than the best is
	// skipped. The seek time never falls as the distance grows (each
	// step of seekCurve.time is a monotone float operation), and the best
	// cost only falls, so once a seek over distance far is skipped, every
	// later one at least as far would be too: it is skipped on its
	// distance, without the seek curve's square root.
	far := math.Inf(1)
	for i := 0; i < d.qLen; i++ {
		c := &d.queue[i]
		dist := abs(c.xStart - d.headX)
		if i > 0 && dist >= far {
			continue
		}
		sk := d.seek.time(dist)
		lag := 0.0
		if i == newest {
			lag = late
		}
		if i > 0 && lag+sk >= bestCost {
			if lag == 0 {
				far = min(far, dist)
			}
			continue // the rotational wait can only add to it
		}
		cost := lag + sk + d.g.rotWait(s+lag+sk, c.tStart)
		if i == 0 || cost < bestCost {
			best, bestSeek, bestCost = i, sk, cost
		}
	}
	c = d.queue[best]
	copy(d.queue[best:], d.queue[best+1:d.qLen])
	d.qLen--

	end = s + bestCost + (c.tEnd - c.tStart)
	d.noteSeek(bestSeek, bestCost-bestSeek)
	d.headFree, d.headX = end, c.xEnd
	d.headNs += end - s
	if d.traceHead != nil {
		kind := workRead
		if c.write {
			kind = workWrite
		}
		d.traceHead(s, end, c.start, c.end, kind)
	}
	if c.write {
		d.mediaBytesWritten += c.end - c.start
	} else {
		d.mediaBytesRead += c.end - c.start
	}
	return end, c
}

// abs is |x| by clearing the sign bit (math.Abs) rather than by a branch
// on the sign: it is taken of the head's travel to every candidate
// position, inward or outward at random, and a branch on that is
// mispredicted half the time. (It differs from a branch only for −0,
// which it makes +0; both are a zero seek.)
func abs(x float64) float64 { return math.Abs(x) }
