package ssd

import "time"

// Program and erase suspend.
//
// A TLC program takes about a millisecond and a block erase several, while
// a page read takes tens of microseconds: a read that waited for the die to
// finish would take twenty times its own time, and under a mixed load the
// reads queued behind programs would hold the host's queue while the drive's
// other dies sit idle. Enterprise SSDs (and most current client drives)
// therefore suspend the program or erase in progress for a host read: the
// die stops the incremental-step pulse and verify loop at its next safe
// point (ONFI's suspend commands; the loop steps of a ~1 ms TLC program are
// some tens of microseconds, so the wait is about half a step), senses the
// page, moves it out over the channel and resumes, and the program ends
// later by that time. A read then takes about tR plus the suspend latency
// however busy the die is writing (G. Wu and X. He, "Reducing SSD Read
// Latency via NAND Flash Program and Erase Suspension", FAST 2012).
//
// Drives suspend erases first: an erase takes several milliseconds, and
// its loops (a few erase pulses, each verified) are long, so a read waits
// up to one of them (MQSim, Tavakkol et al., FAST 2018, models erase-only
// suspend as its default for that reason). Enterprise controllers also
// suspend programs, a fixed number of times per program so that writes
// still progress (Intel's patent application "Method, system, and
// apparatus for multi-tiered progressive memory program operation suspend
// and resume"); client SATA controllers of the same generations do not
// document it. Config.ProgramSuspend and Config.EraseSuspend say which a
// drive does and how long it waits for the safe point.
//
// The model books host reads on a die's sense timeline, where they queue
// only behind other reads; when the die's busy timeline shows a program or
// erase at that moment that the die suspends, the read starts that
// operation's suspend latency later and the die's work is pushed back by
// the read and the suspend/resume overhead, booked into the die's next
// idle time (the suspended operations end later by that much, so the die's
// capacity is conserved). A read that finds an operation the die does not
// suspend waits for the die as on a drive without suspend. Garbage
// collection reads are the controller's own and do not suspend.

// suspends reports whether the dies suspend programs or erases for reads.
func (c Config) suspends() bool { return c.ProgramSuspend > 0 || c.EraseSuspend > 0 }

// readSuspending senses tR and moves x of data on die di for a host read
// arriving at t when the die can suspend programs or erases; it returns
// when the data is in the controller.
func (d *Drive) readSuspending(di int, t, tR, x time.Duration) time.Duration {
	dd := &d.dies[di]
	work := tR + x // the die holds the data until it is out
	start := dd.sense.Earliest(t, work)
	if dd.busy.Earliest(start, work) > start {
		// Programming or erasing: suspend at the next safe point, if the
		// die suspends what it is doing.
		wait := d.cfg.ProgramSuspend
		if start < dd.eraseEnd && start+work > dd.eraseStart {
			wait = d.cfg.EraseSuspend
		}
		if wait > 0 {
			start, _ = dd.sense.Reserve(start+wait, work)
			dd.busy.ReserveSplit(start, work+wait)
		} else {
			start, _ = dd.busy.Reserve(start, work)
			dd.sense.Reserve(start, work)
		}
	} else {
		dd.sense.Reserve(start, work)
		dd.busy.Reserve(start, work)
	}
	_, end := d.channels[d.channelOf(di)].Reserve(start+tR, x)
	return end
}
