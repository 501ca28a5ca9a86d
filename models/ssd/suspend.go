package ssd

import "time"

// Host reads first; program and erase suspend.
//
// A TLC program takes about a millisecond and a block erase several, while
// a page read takes tens of microseconds. A flash controller keeps a queue
// of operations per die and serves the host's reads before the programs,
// garbage-collection copies and erases queued on the same die: read
// priority scheduling (RPS, the baseline of G. Wu and X. He, "Reducing SSD
// Read Latency via NAND Flash Program and Erase Suspension", FAST 2012;
// MQSim's transaction scheduling unit, Tavakkol et al., FAST 2018, serves a
// die's user reads, then its writes, then its erases, and garbage
// collection's queues after the user's unless free blocks run out:
// TSU_Base and TSU_OutofOrder in CMU-SAFARI/MQSim). It does not preempt
// the operation in progress: a read that finds its die programming or
// erasing waits for that operation to end, and only for that one. FIFO, a
// read behind every operation queued before it, is the paper's other
// baseline; its suspend cuts read latency by 75.4 % against FIFO and by
// 50.5 % against RPS.
//
// The operation in progress is the die's whole array operation. A
// multi-level cell stores a bit of each of its word line's pages (lower,
// upper, extra: a "linked page group"), and the die programs the word
// line's pages in one array operation (the one-shot program of 3D
// charge-trap TLC; the pre-reads and program array operation of a linked
// page group in Intel's patent "Read quality of service for non-volatile
// memory", US 11,138,102, whose reads otherwise starve behind it). The
// model books programs a page group at a time, tPROG each, so a read that
// lands in the program of a word line's k-th page group waits for the
// word line's later page groups as well (dieOp.rest), as if they followed
// at once. They may not have come yet, but the wait is what a read waits
// for on average on a die whose word lines are programmed one-shot: it
// finds the die busy as often (the die's time is the same), and busy with
// an operation of the whole word line's length, in a uniformly random
// page group of it.
//
// Enterprise SSDs (and most current client drives) go further and
// suspend the program or erase in progress for a host read: the die stops
// the incremental-step pulse and verify loop at its next safe point
// (ONFI's suspend commands; the loop steps of a ~1 ms TLC program are
// some tens of microseconds, so the wait is about half a step), senses the
// page, moves it out over the channel and resumes, and the program ends
// later by that time. A read then takes about tR plus the suspend latency
// however busy the die is writing (Wu and He).
//
// Drives suspend erases first: an erase takes several milliseconds, and
// its loops (a few erase pulses, each verified) are long, so a read waits
// up to one of them (MQSim models erase-only suspend as its default for
// that reason). Enterprise controllers also suspend programs, a fixed
// number of times per program so that writes still progress (Intel's
// patent application "Method, system, and apparatus for multi-tiered
// progressive memory program operation suspend and resume"); client SATA
// controllers of the same generations do not document it.
// Config.ProgramSuspend and Config.EraseSuspend say which a drive does and
// how long it waits for the safe point.
//
// The model books a die's programs, erases and garbage-collection reads
// on its busy timeline as they are queued, and remembers the last of them
// (opLog). Host reads are booked on the die's sense timeline, where they
// queue only behind other host reads. A read that arrives while the busy
// timeline shows an operation in progress starts when that operation ends,
// or after its suspend latency when the die suspends that kind of
// operation and the latency is the shorter wait; the operations queued
// behind it are pushed back by the read (and the suspend and resume
// overhead): that time is booked into the die's next idle time, so the
// die's capacity is conserved.

// opLogSize is how many of its last operations a die remembers: more than
// a die has booked ahead of the present in steady-state garbage
// collection (a host page group's program and the relocation that paces
// it, some ten operations).
const opLogSize = 32

// dieOp is one operation booked on a die's busy timeline: a page group's
// program, an erase, or a garbage-collection read.
type dieOp struct {
	start, end time.Duration
	// rest is how long the array operation goes on after end: the
	// programs of the word line's later page groups.
	rest  time.Duration
	erase bool
}

// opLog is a ring of a die's last operations, which never overlap.
type opLog struct {
	ops  [opLogSize]dieOp
	next int
}

func (l *opLog) add(op dieOp) {
	l.ops[l.next] = op
	l.next = (l.next + 1) % opLogSize
}

// at returns the operation in progress at t, if the log holds one.
func (l *opLog) at(t time.Duration) (dieOp, bool) {
	for i := range l.ops {
		if op := l.ops[i]; op.start <= t && t < op.end {
			return op, true
		}
	}
	return dieOp{}, false
}

// hostRead senses tR and moves x of data on die di for a host read
// arriving at t; it returns when the data is in the controller.
func (d *Drive) hostRead(di int, t, tR, x time.Duration) time.Duration {
	dd := &d.dies[di]
	work := tR + x // the die holds the data until it is out
	start := dd.sense.Earliest(t, work)
	if dd.busy.Earliest(start, work) > start {
		// The read goes ahead of the work queued on the die, after the
		// array operation in progress (if any) or its suspend.
		arrive := start
		var wait, overhead time.Duration
		if op, ok := dd.ops.at(start); ok {
			wait = op.end + op.rest - start
			s := d.cfg.ProgramSuspend
			if op.erase {
				s = d.cfg.EraseSuspend
			}
			if s > 0 && s < wait {
				wait, overhead = s, s
			}
		}
		start, _ = dd.sense.Reserve(start+wait, work)
		dd.busy.ReserveSplit(arrive, work+overhead)
	} else {
		dd.sense.Reserve(start, work)
		dd.busy.Reserve(start, work)
	}
	_, end := d.channels[d.channelOf(di)].Reserve(start+tR, x)
	return end
}
