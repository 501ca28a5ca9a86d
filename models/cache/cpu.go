package cache

import (
	"time"

	"github.com/nasemu/nasemu/models"
)

// CPU work and metadata I/O of the tier
//
// A NAS's SSD cache is a device-mapper target in the NAS's kernel: DSM's is
// Synology's fork of Facebook's flashcache. Its work per I/O follows from
// how flashcache works (its design notes, doc/flashcache-doc.txt, and its
// source):
//
//   - Every request is mapped by the target: the block's set is computed
//     and probed linearly (a set-associative hash, 512 blocks a set), a job
//     is allocated, and its completion is handed to a work queue. That is
//     the work of one more layer of the block stack, besides the block
//     layer, md and the driver that the NAS's CPU.PerIO already charges
//     for the request; lookupShare is its share of PerIO.
//   - Every I/O the target issues beyond the one the request itself stands
//     for (a read miss's fill of the SSDs, a cleaning's read from the SSD
//     and write to the array, a metadata write) goes down the block stack
//     again: a whole PerIO each. The copy on the second mirror does not:
//     the mirror is software RAID 1 below the target, in PerIO as the
//     array's own RAID is.
//   - In write-back mode, a write that dirties a clean block "synchronously
//     updates the cache metadata (to mark the cache block as dirty) and
//     completes the write" after that; a block re-dirtied skips it. Cleaning
//     a block marks it clean on flash again. Reads never update metadata.
//     The metadata (16 bytes a block) sits in 4 KiB metadata blocks after
//     the data on every cache drive (flashcache 2's metadata block size),
//     so each update is a 4 KiB write to each mirror.
//
// Where that work runs. Only the lookup and the request's own I/O run in
// the submitting context (the thread that issued the request: the protocol
// server's, on whichever core it is on). Everything else is deferred: the
// completion interrupt of the data write queues the metadata update and
// schedules the target's one work item (a single kernel work queue entry,
// which never runs on two cores at once); that work item issues the
// metadata write, and when it completes ends the user's write and every
// other write batched into it, kicks off the next queued metadata write,
// issues fills and starts cleanings; the cleaning copies run in kcopyd's
// one thread and report back to the work item. So the deferred work is
// one thread's: it queues behind itself (work), not on every core at
// once, and costs the requests in the submitting context only the cores it
// keeps busy. The model runs it on one worker thread (kcopyd's and the
// work item's share it: both follow the same completions), reported as the
// tier's "worker thread" resource.
//
// The costs scale with the NAS's own CPU.PerIO, itself set from its CPU
// class, so a faster CPU pays less for its cache in proportion. Without a
// CPU (a tier on its own, as in this package's tests) only the metadata
// I/O is modelled.

// CPU is the processor the tier's work runs on: the NAS controller's cores
// (nas.Controller implements it).
type CPU interface {
	// Compute runs fixed of work on the core that frees first, from at.
	Compute(at, fixed time.Duration, bytes int64, bytesPerSecond float64) time.Duration
	// IOCost is the CPU time of one I/O down the block stack.
	IOCost() time.Duration
}

// lookupShare is the target's own work per request (map, set probe, job,
// completion hand-off) as a share of the block stack's per-I/O work: one
// layer's bio clone, map and completion, plus a probe of a few KiB of set
// metadata and a work-queue hand-off, against PerIO's block layer, md, the
// driver and the completion interrupt. An estimate from the path's
// structure, not a measurement.
const lookupShare = 0.5

// mdEntry is the bytes of on-flash metadata per cache block (flashcache's
// struct flash_cacheblock: the disk block number and the state).
const mdEntry = 16

// mdBlock is the unit of metadata updates.
const mdBlock = 4096

// SetCPU makes the tier charge its work to cpu.
func (tr *Tier) SetCPU(cpu CPU) {
	tr.cpu = cpu
	tr.ioCost = cpu.IOCost()
	tr.lookupCost = time.Duration(float64(tr.ioCost) * lookupShare)
}

// charge runs d of the tier's work in the submitting context from at (on
// the core that frees first) and returns when it is done.
func (tr *Tier) charge(at, d time.Duration) time.Duration {
	if tr.cpu == nil || d <= 0 {
		return at
	}
	return tr.cpu.Compute(at, d, 0, 0)
}

// work runs d of the tier's deferred work from at: on the target's one
// worker thread, after the work booked on it before, and on a core; it
// returns when it is done.
//
// The worker holds work booked ahead for every request in flight that
// will need it (a read miss's fill, for when the array has the data; a
// cleaning's array write, for when its SSD read is done), out of order,
// so its calendar is a timeline.Core. With a Timeline's 32 intervals it
// forgot future bookings past some 32 requests in flight and placed
// nothing before them, the metadata writes that end host writes included:
// at QD256 a 90/10 mix of read misses and writes ran 11 % below what the
// array allowed (TestWorkerHoldsDeepQueues).
func (tr *Tier) work(at, d time.Duration) time.Duration {
	if tr.cpu == nil || d <= 0 {
		return at
	}
	start, end := tr.worker.Reserve(at, d)
	return max(end, tr.cpu.Compute(start, d, 0, 0))
}

// mdBytes is the metadata area of a cache of blocks slots on each drive.
func mdBytes(blocks int64) int64 {
	return (blocks*mdEntry + mdBlock - 1) / mdBlock * mdBlock
}

// mdWrite is the last write issued (or scheduled) to a metadata block.
type mdWrite struct{ start, end time.Duration }

// mdIndex is the metadata block that holds slot s's entry. Flashcache's
// cache is set-associative: a set holds the blocks of 512 consecutive
// disk blocks, and its 512 entries fill two 4 KiB metadata blocks; the
// tier's slots are not laid out by set, so the entry's block follows its
// disk block's half of that run of 512.
func (tr *Tier) mdIndex(s int32) int64 { return tr.t.block(s) / (mdBlock / mdEntry) }

// updateMetadata updates slot s's entry on flash from at and returns when
// it is there, batching as flashcache does ("if we have pending metadata
// updates to multiple cache blocks which fall on the same metadata
// sector, we batch these updates into 1 flash metadata write"): a
// metadata block has at most one write in flight; an update that arrives
// while one is joins the next write of the block, which starts when the
// one in flight ends and carries every update queued until then. Each
// write goes to every cache drive, issued by the CPU first.
func (tr *Tier) updateMetadata(at time.Duration, s int32) (time.Duration, error) {
	k := tr.mdIndex(s)
	w := tr.md[k]
	switch {
	case at < w.start:
		// The block's next write is queued behind one in flight and
		// not started yet: the update rides along.
		tr.mdBatched++
		return w.end, nil
	case at < w.end:
		at = w.end // queued behind the write in flight
	}
	off := tr.mdBase + k%(tr.mdArea/mdBlock)*mdBlock
	t := tr.work(at, tr.ioCost) // one I/O, mirrored below (writeSlot)
	done := at
	for _, d := range tr.drives {
		e, err := d.Submit(t, models.Request{Op: models.Write, Offset: off, Length: mdBlock})
		if err != nil {
			return at, err
		}
		done = max(done, e)
	}
	tr.md[k] = mdWrite{start: at, end: done}
	tr.mdWrites++
	return done, nil
}

// Resources implements models.Accountant: the worker thread of the tier's
// deferred work, when the tier has a CPU (listed busy or not, so that
// every snapshot has the same entries).
func (tr *Tier) Resources(at time.Duration) []models.Resource {
	if tr.cpu == nil {
		return nil
	}
	return []models.Resource{{Name: "worker thread", Class: models.ClassCPU, Units: 1, Busy: tr.worker.BookedBy(at)}}
}

var _ models.Accountant = (*Tier)(nil)
