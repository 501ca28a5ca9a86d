package ssd

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/timeline"
)

// Block states.
const (
	blkFree   uint8 = iota // erased, in its die's free list
	blkOpen                // a write frontier (host TLC, host SLC or GC)
	blkFull                // written up to its end; in its die's GC buckets
	blkVictim              // being relocated by GC or folding
)

// Block modes.
const (
	modeTLC uint8 = iota
	modeSLC
)

// die is the per-die FTL state: its timeline, its free blocks, its write
// frontiers, and greedy GC buckets of its full blocks by valid count.
type die struct {
	busy timeline.Timeline
	// sense books host reads, which queue only behind host reads; ops
	// remembers the operations booked on busy, so that a read can tell
	// which one is in progress (suspend.go).
	sense   timeline.Timeline
	ops     opLog
	free    []int32 // free block numbers (global), used as a stack
	hostTLC int32   // open blocks, -1 = none
	hostSLC int32
	gc      int32
	// The GC page group being filled: relocated slots wait in controller
	// memory until a whole group can be programmed.
	gcFill  int64
	gcReady time.Duration
	// buckets[v] heads a doubly linked list of full blocks with v valid
	// slots; minValid is a lower bound of the lowest non-empty bucket.
	buckets  []int32
	minValid int64
	// victim is the block being relocated (-1 = none) and victimOff the
	// next offset to examine: paced GC and idle-time folding relocate a
	// victim a few page groups at a time.
	victim    int32
	victimOff int64
	slcFIFO   []int32 // SLC blocks in the order they filled, for folding
}

// Drive is the SSD model. It is not safe for concurrent use.
type Drive struct {
	cfg  Config
	geo  geometry
	seed uint64

	fwd packedArray // LPN -> PPN+1 (0 = unmapped)
	rev packedArray // PPN -> LPN (meaningful only where fwd points back)

	// per block (global number)
	valid  []int32
	erases []uint32
	wp     []int32 // next offset to allocate
	prog   []int32 // offsets below prog are programmed (or being programmed)
	next   []int32 // bucket links
	prev   []int32
	state  []uint8
	mode   []uint8

	dies     []die
	channels []timeline.Timeline
	linkR    *timeline.Timeline // device to host
	linkW    *timeline.Timeline // host to device (== linkR for SATA)
	links    [2]timeline.Timeline
	ctrl     timeline.Timeline
	// progSlots are the controller's program slots
	// (Config.ConcurrentPrograms); nil when it can program on every die
	// at once.
	progSlots []timeline.Timeline
	admit     time.Duration // controller time per command (1/ControllerIOPS)

	// Read time variation (readtime.go): tR by page type, and the
	// drive's own generator for read-retry draws.
	tR        [4]time.Duration
	retryZero float64 // exp(-ReadRetry): P(no retry) of an unworn block
	rng       rand.PCG

	maps *mapCache // nil: the whole map is in DRAM

	// Host write frontier: the page group being filled.
	curDie    int
	curBlock  int32 // -1 = none
	curOff    int64 // first offset of the group
	curFill   int64
	curReady  time.Duration
	rr        int
	bufSlots  int             // host page groups the write buffer holds
	inFlight  []time.Duration // min-heap: program completion of buffered groups
	lastProg  time.Duration   // latest NAND program completion
	quiescent time.Duration   // when every die was last known idle

	tags    []time.Duration // min-heap: completions of a SATA drive's commands in flight (ncq.go)
	live    []int64         // scratch for relocation: LPN, PPN pairs of one page group
	mapped  int64           // user slots that hold data
	slcUsed int64           // slots in SLC blocks (valid or not) not yet erased

	st stats
}

var (
	_ models.Device   = (*Drive)(nil)
	_ models.Observer = (*Drive)(nil)
)

// New returns a fresh (purged) drive. seed seeds the drive's generator of
// read-retry draws (readtime.go); a drive without retries (ReadRetry 0)
// makes no random choices.
func New(cfg Config, seed uint64) (*Drive, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	g := newGeometry(cfg)
	d := &Drive{cfg: cfg, geo: g, seed: seed}
	d.rng.Seed(seed, 0x9e3779b97f4a7c15)
	d.readTimes()
	if cfg.MapCache > 0 {
		d.maps = newMapCache(int64(cfg.MapCache), g.userSlots)
	}
	d.fwd = newPackedArray(g.userSlots, g.fwdBits)
	d.rev = newPackedArray(g.totalSlots, g.revBits)
	n := g.totalBlocks
	d.valid = make([]int32, n)
	d.erases = make([]uint32, n)
	d.wp = make([]int32, n)
	d.prog = make([]int32, n)
	d.next = make([]int32, n)
	d.prev = make([]int32, n)
	d.state = make([]uint8, n)
	d.mode = make([]uint8, n)
	d.dies = make([]die, g.dies)
	d.channels = make([]timeline.Timeline, g.channels)
	if cfg.Interface == SATA {
		d.linkR, d.linkW = &d.links[0], &d.links[0]
	} else {
		d.linkR, d.linkW = &d.links[0], &d.links[1]
	}
	if cfg.ControllerIOPS > 0 {
		d.admit = time.Duration(1e9 / cfg.ControllerIOPS)
	}
	if k := cfg.ConcurrentPrograms; k > 0 && k < g.dies {
		d.progSlots = make([]timeline.Timeline, k)
	}
	d.bufSlots = int(int64(cfg.WriteBuffer) / g.groupBytes())
	d.inFlight = make([]time.Duration, 0, d.bufSlots)
	d.live = make([]int64, 0, 2*g.groupSlots)
	d.tags = make([]time.Duration, 0, ncqTags+1)
	for i := range d.dies {
		dd := &d.dies[i]
		dd.buckets = make([]int32, g.slotsPerBlock+1)
		dd.free = make([]int32, 0, g.blocksPerDie)
	}
	d.reset()
	return d, nil
}

// reset returns the drive to the factory state (all blocks erased, nothing
// mapped) without touching erase counts or timelines.
func (d *Drive) reset() {
	d.fwd.reset()
	d.rev.reset()
	g := d.geo
	for i := range d.dies {
		dd := &d.dies[i]
		dd.free = dd.free[:0]
		for b := g.blocksPerDie - 1; b >= 0; b-- {
			gb := int32(i*g.blocksPerDie + b)
			dd.free = append(dd.free, gb)
			d.state[gb], d.mode[gb], d.valid[gb], d.wp[gb], d.prog[gb] = blkFree, modeTLC, 0, 0, 0
		}
		for v := range dd.buckets {
			dd.buckets[v] = -1
		}
		dd.hostTLC, dd.hostSLC, dd.gc, dd.victim = -1, -1, -1, -1
		dd.gcFill, dd.victimOff, dd.minValid = 0, 0, 0
		dd.slcFIFO = dd.slcFIFO[:0]
	}
	d.curBlock, d.curFill = -1, 0
	d.mapped, d.slcUsed = 0, 0
}

// Config returns the drive's configuration with defaults filled in.
func (d *Drive) Config() Config { return d.cfg }

// Capacity implements models.Device: the user capacity less the extra
// over-provisioning, in whole 4 KiB units.
func (d *Drive) Capacity() int64 { return d.geo.userSlots * slotSize }

func (d *Drive) dieOf(ppn int64) int {
	return int(ppn / d.geo.slotsPerBlock / int64(d.geo.blocksPerDie))
}

func (d *Drive) channelOf(die int) int { return die % d.geo.channels }

// Submit implements models.Device.
//
// Reads of never-written or trimmed LBAs return without a NAND read, as
// real controllers do (the map says there is nothing to read); datasheet
// random-read figures are measured on written data, so benchmarks must
// write their span first.
//
// Writes are acknowledged once their data is in the DRAM write buffer;
// NAND programs happen per full multi-plane page group. A write that does
// not cover a whole 4 KiB mapping unit at its head or tail merges with that
// unit's old contents: if the unit is still in the write buffer the merge
// is free, otherwise the old unit is read from NAND first
// (read-modify-write) and the write's data is ready only after that read.
// Trims of partial units are ignored, as most drives do.
func (d *Drive) Submit(at time.Duration, r models.Request) (time.Duration, error) {
	if err := models.CheckRange(r, d.Capacity()); err != nil {
		return at, fmt.Errorf("ssd: %w", err)
	}
	if r.Op.IsFileOp() {
		return at, nil
	}
	if d.slcUsed > 0 && at > d.quiescent+foldIdle {
		d.fold(at)
	}
	queued := d.cfg.Interface == SATA && (r.Op == models.Read || r.Op == models.Write)
	if queued {
		at = d.tag(at)
	}
	_, t := d.ctrl.Reserve(at, d.admit)
	t += d.cfg.CommandOverhead
	var done time.Duration
	switch r.Op {
	case models.Read:
		done = d.read(t, r)
	case models.Write:
		done = d.write(t, r)
	case models.Trim:
		d.trim(r)
		done = t
		d.st.trims++
	case models.Flush:
		d.flushGroup()
		done = max(t, d.lastProg)
	}
	if queued {
		d.tags = pushTime(d.tags, done)
	}
	d.quiescent = max(d.quiescent, done, d.lastProg)
	return done, nil
}

// read senses the request's page groups, all issued at t on their dies,
// and sends the data over the link in the request's order as it comes in:
// the link carries one page group's data while the dies sense the rest, as
// a drive's DMA engine sends each group's data out of its buffer once it
// is there (SATA data FISes and NVMe's transfers both go in order within a
// command). Slots that need no sense (never written, trimmed, or still in
// the write buffer) are ready at t.
func (d *Drive) read(t time.Duration, r models.Request) time.Duration {
	d.st.hostRead += r.Length
	if r.Length == 0 {
		return t
	}
	first, last := r.Offset/slotSize, (r.End()-1)/slotSize
	if d.maps != nil {
		t = d.mapLookup(t, first, last)
	}
	// A run is consecutive slots of one page group, which share a
	// (multi-plane) sense, or consecutive slots that need none (page -1).
	link := t
	runFirst, runN, runPage := first, int64(0), int64(-1)
	for lpn := first; lpn <= last; lpn++ {
		page := int64(-1)
		if p := int64(d.fwd.get(lpn)) - 1; p >= 0 {
			blk := p / d.geo.slotsPerBlock
			if p-blk*d.geo.slotsPerBlock < int64(d.prog[blk]) {
				page = p / d.geo.groupSlots
			}
		}
		if runN > 0 && page == runPage {
			runN++
			continue
		}
		if runN > 0 {
			link = d.sendRun(t, r, runPage, runFirst, runN, link)
		}
		runFirst, runN, runPage = lpn, 1, page
	}
	return d.sendRun(t, r, runPage, runFirst, runN, link)
}

// sendRun senses n slots of page group page from t (none for page -1) and
// sends the request's bytes of them over the link once they are in the
// controller and the run before them has gone (link); it returns when they
// have crossed.
func (d *Drive) sendRun(t time.Duration, r models.Request, page, lpn, n int64, link time.Duration) time.Duration {
	ready := t
	if page >= 0 {
		ready = d.readPage(t, page*d.geo.groupSlots, n)
	}
	lo, hi := max(lpn*slotSize, r.Offset), min((lpn+n)*slotSize, r.End())
	_, end := d.linkR.Reserve(max(ready, link), transfer(hi-lo, d.cfg.LinkMBps))
	return end
}

// readPage senses the page group holding PPN p (tR of its page type and
// any read-retry steps, readtime.go) and moves n slots of it over the
// channel; it returns when the data is in the controller.
func (d *Drive) readPage(t time.Duration, p, n int64) time.Duration {
	di := d.dieOf(p)
	x := transfer(n*slotSize, d.cfg.ChannelMBps)
	return d.hostRead(di, t, d.senseTime(p, x), x)
}

func (d *Drive) write(t time.Duration, r models.Request) time.Duration {
	d.st.hostWritten += r.Length
	if r.Length == 0 {
		return t
	}
	first, last := r.Offset/slotSize, (r.End()-1)/slotSize
	// Read-modify-write of partial head and tail units that hold data on NAND.
	rmw := t
	if r.Offset%slotSize != 0 {
		rmw = max(rmw, d.readOld(t, first))
	}
	if r.End()%slotSize != 0 && (last != first || r.Offset%slotSize == 0) {
		rmw = max(rmw, d.readOld(t, last))
	}
	// Move the data group by group: a new page group needs a free buffer
	// slot, which the earliest-completing program in flight releases.
	linkT := t
	var done time.Duration
	for lpn := first; lpn <= last; {
		if d.curBlock < 0 || d.curFill == d.geo.groupSlots {
			linkT = max(linkT, d.bufferSlot())
			d.openGroup(linkT)
		}
		n := min(last-lpn+1, d.geo.groupSlots-d.curFill)
		lo, hi := max(lpn*slotSize, r.Offset), min((lpn+n)*slotSize, r.End())
		_, arrived := d.linkW.Reserve(linkT, transfer(hi-lo, d.cfg.LinkWriteMBps))
		linkT = arrived
		ready := max(arrived, rmw)
		for i := int64(0); i < n; i++ {
			d.place(lpn + i)
		}
		d.curReady = max(d.curReady, ready)
		done = ready
		lpn += n
		if d.curFill == d.geo.groupSlots {
			d.issueHostGroup()
		}
	}
	return done
}

// readOld reads the NAND copy of lpn for a read-modify-write and returns
// when it is in the controller (t when there is nothing to read).
func (d *Drive) readOld(t time.Duration, lpn int64) time.Duration {
	p := int64(d.fwd.get(lpn)) - 1
	if p < 0 {
		return t
	}
	blk := p / d.geo.slotsPerBlock
	if p-blk*d.geo.slotsPerBlock >= int64(d.prog[blk]) {
		return t
	}
	return d.readPage(t, p, 1)
}

// bufferSlot returns when the write buffer has room for one more page
// group: at once while fewer than bufSlots programs are in flight, else
// when the earliest of them completes.
func (d *Drive) bufferSlot() time.Duration {
	var t time.Duration
	for len(d.inFlight) >= max(d.bufSlots, 1) {
		t = max(t, d.inFlight[0])
		d.inFlight = popTime(d.inFlight)
	}
	return t
}

func (d *Drive) pushInFlight(t time.Duration) { d.inFlight = pushTime(d.inFlight, t) }

// pushTime adds t to the min-heap h.
func pushTime(h []time.Duration, t time.Duration) []time.Duration {
	h = append(h, t)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if h[p] <= h[i] {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
	return h
}

// popTime removes the least time of the min-heap h, which is not empty.
func popTime(h []time.Duration) []time.Duration {
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	siftDown(h)
	return h
}

// openGroup starts a new host page group, in SLC mode while the SLC cache
// has room, else in TLC mode, on the die that frees up first (ties go
// round robin, so an idle drive stripes consecutive groups over all dies):
// a die busy with garbage collection gets no new host data.
func (d *Drive) openGroup(t time.Duration) {
	di := d.rr
	for i := range d.dies {
		if d.dies[i].busy.BusyUntil() < d.dies[di].busy.BusyUntil() {
			di = i
		}
	}
	d.rr = (di + 1) % d.geo.dies
	dd := &d.dies[di]
	d.gcPace(di, t)
	useSLC := d.slcRoom()
	var blk int32
	if useSLC {
		if dd.hostSLC < 0 {
			dd.hostSLC = d.allocBlock(di, modeSLC, t)
		}
		blk = dd.hostSLC
		d.slcUsed += d.geo.groupSlots
	} else {
		if dd.hostTLC < 0 {
			dd.hostTLC = d.allocBlock(di, modeTLC, t)
		}
		blk = dd.hostTLC
	}
	d.curDie, d.curBlock = di, blk
	d.curOff = int64(d.wp[blk])
	d.wp[blk] += int32(d.geo.groupSlots)
	d.curFill = 0
	d.curReady = 0
}

// place maps lpn to the next slot of the open host group.
func (d *Drive) place(lpn int64) {
	p := int64(d.curBlock)*d.geo.slotsPerBlock + d.curOff + d.curFill
	d.curFill++
	d.remap(lpn, p)
}

// remap points lpn at physical slot p, invalidating its old copy.
func (d *Drive) remap(lpn, p int64) {
	if old := int64(d.fwd.get(lpn)) - 1; old >= 0 {
		d.invalidate(old)
	} else {
		d.mapped++
		if d.maps != nil {
			d.maps.written[lpn>>mapPageShift] = true
		}
	}
	d.fwd.set(lpn, uint64(p+1))
	d.rev.set(p, uint64(lpn))
	d.valid[p/d.geo.slotsPerBlock]++
}

// issueHostGroup programs the filled (or, on Flush, padded) host group.
func (d *Drive) issueHostGroup() {
	if d.curBlock < 0 {
		return
	}
	end := d.program(d.curDie, d.curBlock, d.curReady)
	d.prog[d.curBlock] = int32(d.curOff + d.geo.groupSlots)
	d.pushInFlight(end)
	if d.mode[d.curBlock] == modeTLC && int64(d.wp[d.curBlock]) >= d.geo.slotsPerBlock ||
		d.mode[d.curBlock] == modeSLC && int64(d.wp[d.curBlock]) >= d.geo.slcSlots {
		dd := &d.dies[d.curDie]
		if dd.hostTLC == d.curBlock {
			dd.hostTLC = -1
		} else {
			dd.hostSLC = -1
		}
		d.closeBlock(d.curBlock)
	}
	d.curBlock, d.curFill = -1, 0
}

// flushGroup programs a partly filled host group, padding it: Flush must
// make every acknowledged write durable. Relocated data waiting in a GC
// page group needs no flush: a controller keeps its source block until the
// copy is programmed (the model erases the source early, which only moves
// an erase a little earlier in time).
func (d *Drive) flushGroup() {
	if d.curBlock >= 0 && d.curFill > 0 {
		d.issueHostGroup()
	}
}

// program moves one page group, whose data is ready at `ready`, into die
// di's page buffer over its channel and programs it; it returns the
// completion time.
func (d *Drive) program(di int, blk int32, ready time.Duration) time.Duration {
	dd := &d.dies[di]
	tProg := d.cfg.ProgramTLC
	if d.mode[blk] == modeSLC {
		tProg = d.cfg.ProgramSLC
	}
	x := transfer(d.geo.groupBytes(), d.cfg.ChannelMBps)
	at, slot := ready, -1
	if d.progSlots != nil {
		at, slot = d.programStart(di, ready, x+tProg)
	}
	start, end := dd.busy.Reserve(at, x+tProg)
	if slot >= 0 {
		d.progSlots[slot].Reserve(start, x+tProg)
	}
	if _, xferEnd := d.channels[d.channelOf(di)].Reserve(start, x); xferEnd > start+x {
		end = xferEnd + tProg // the channel was busy: the program starts late
	}
	op := dieOp{start: start, end: end}
	if d.mode[blk] != modeSLC {
		// A word line's page groups are one array operation
		// (suspend.go); an SLC page group is a word line of its own.
		k := int64(d.prog[blk]) / d.geo.groupSlots % int64(d.geo.cellBits)
		op.rest = time.Duration(int64(d.geo.cellBits)-1-k) * (x + tProg)
	}
	dd.ops.add(op)
	d.st.nandWritten += d.geo.groupBytes()
	d.lastProg = max(d.lastProg, end)
	return end
}

// programStart returns when a program of die di taking dur (channel
// transfer and tPROG), whose data is ready at `ready`, can start: the
// earliest time from which both the die and one of the controller's
// program slots are free for dur, and which slot (-1 when the controller
// has no limit below its die count). It books nothing.
func (d *Drive) programStart(di int, ready, dur time.Duration) (time.Duration, int) {
	dd := &d.dies[di]
	if d.progSlots == nil {
		return dd.busy.Earliest(ready, dur), -1
	}
	// Each step moves t to the later of the two resources' earliest
	// starts; neither start is ever earlier than t, and both calendars
	// end, so t stops where both are free.
	t := ready
	for {
		t = dd.busy.Earliest(t, dur)
		k := timeline.Snuggest(d.progSlots, t, dur)
		s := d.progSlots[k].Earliest(t, dur)
		if s == t {
			return t, k
		}
		t = s
	}
}

func (d *Drive) trim(r models.Request) {
	first := (r.Offset + slotSize - 1) / slotSize
	end := r.End() / slotSize
	for lpn := first; lpn < end; lpn++ {
		if old := int64(d.fwd.get(lpn)) - 1; old >= 0 {
			d.invalidate(old)
			d.fwd.set(lpn, 0)
			d.mapped--
		}
	}
}
