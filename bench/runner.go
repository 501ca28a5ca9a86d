package bench

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/ssd"
)

// Options control a run.
type Options struct {
	// Seed seeds every job instance's offsets and mixes (unless the job
	// sets randseed); with a simulated target the same seed gives the same
	// report.
	Seed uint64
	// Suite names the suite the jobs come from, for the report.
	Suite string
	// Limits bound a run's resources; the zero value is DefaultLimits.
	Limits Limits
}

// Run runs jobs against t and returns the report. Jobs run in groups:
// a job with Stonewall (and the first job) starts a group, and so does a
// job with wait_for naming a job of the group it would join; the jobs of a
// group run at the same time, groups one after another. When a group fails
// (a server that goes away mid-run), Run returns the report of the groups
// that finished together with the error.
func Run(t Target, jobs []Job, opt Options) (*Report, error) {
	jobs = append([]Job(nil), jobs...)
	lim := opt.Limits.withDefaults()
	for i := range jobs {
		jobs[i].EnsureDefaults()
		if err := jobs[i].Validate(); err != nil {
			return nil, err
		}
	}
	groups := splitGroups(jobs)
	for _, g := range groups {
		if err := lim.check(jobs[g[0]:g[1]]); err != nil {
			return nil, err
		}
	}
	rep := &Report{Target: t.Name(), Mode: t.Mode(), Suite: opt.Suite, Device: DeviceCounters{Source: "none"}}
	if d, ok := t.(Describer); ok {
		rep.Description = d.Description()
	}
	genesis := time.Duration(-1) // when the first group's clock started
	zones := map[string]*zoneSet{}
	disk := startDiskUtil(t)
	for _, g := range groups {
		res, err := runGroup(t, jobs[g[0]:g[1]], g[0], opt.Seed, &genesis, zones)
		if err != nil {
			if cs, ok := t.(CounterSource); ok {
				rep.Device = cs.DeviceCounters()
			}
			return rep, err
		}
		rep.Results = append(rep.Results, res...)
	}
	if cs, ok := t.(CounterSource); ok {
		rep.Device = cs.DeviceCounters()
	}
	rep.DiskUtil = disk.end()
	return rep, nil
}

// diskRun is a target's disk statistics and accounts at a run's start.
type diskRun struct {
	t        Target
	before   []diskCounters
	accounts []models.Account
	members  memberCounters
}

// startDiskUtil snapshots the statistics of the device under t, if it
// has any.
func startDiskUtil(t Target) *diskRun {
	ds, ok := unwrapTarget(t).(diskStater)
	if !ok {
		return nil
	}
	before, ok := ds.diskStats()
	if !ok {
		return nil
	}
	r := &diskRun{t: t, before: before}
	if src, ok := unwrapTarget(t).(AccountSource); ok {
		r.accounts = src.Accounts(t.Clock().Now())
	}
	if sim, ok := unwrapTarget(t).(*Sim); ok {
		r.members = memberStats(sim.dev)
	}
	return r
}

// end returns the run's disk_util.
func (r *diskRun) end() []DiskUtil {
	if r == nil {
		return nil
	}
	after, ok := unwrapTarget(r.t).(diskStater).diskStats()
	if !ok {
		return nil
	}
	out := diskUtil(r.before, after)
	sim, ok := unwrapTarget(r.t).(*Sim)
	if ok && len(out) == 1 && r.accounts != nil {
		now := r.t.Clock().Now()
		u := aggrUtil(r.accounts, sim.Accounts(now), now-r.before[0].at)
		out[0].DiskAggr = diskAggr(r.members, memberStats(sim.dev), u)
	}
	return out
}

// splitGroups returns the [lo, hi) index ranges of the groups: a new group
// starts at a stonewall and at a job that waits for a job of the group so
// far (fio wait_for).
func splitGroups(jobs []Job) [][2]int {
	var out [][2]int
	lo := 0
	for i := 1; i <= len(jobs); i++ {
		if i < len(jobs) && !jobs[i].Stonewall && !waitsInGroup(jobs[lo:i], jobs[i].WaitFor) {
			continue
		}
		out = append(out, [2]int{lo, i})
		lo = i
	}
	return out
}

func waitsInGroup(group []Job, name string) bool {
	if name == "" {
		return false
	}
	for _, g := range group {
		if g.Name == name && g.WaitFor != name {
			return true
		}
	}
	return false
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	set(&d.Jobs, l.Jobs)
	set(&d.Instances, l.Instances)
	set(&d.Outstanding, l.Outstanding)
	set(&d.Bytes, l.Bytes)
	set(&d.Files, l.Files)
	set(&d.FileSize, l.FileSize)
	return d
}

// set overrides a default with v when v is given (positive).
func set[T int | int64](dst *T, v T) {
	if v > 0 {
		*dst = v
	}
}

// check refuses a group that would hold more than the limits allow.
func (l Limits) check(group []Job) error {
	var inst, outstanding int
	var bytes float64
	for i := range group {
		j := &group[i]
		bad := func(format string, a ...any) error {
			return fmt.Errorf("%w: %s: job %q: %s", ErrJob, j.Pos, j.Name, fmt.Sprintf(format, a...))
		}
		inst += j.NumJobs
		outstanding += j.IODepth * j.NumJobs
		bytes += float64(j.IODepth) * float64(j.NumJobs) * float64(maxIOSize(j))
		switch {
		case j.NrFiles*j.NumJobs > l.Files:
			return bad("nrfiles × numjobs = %d files, more than the limit of %d", j.NrFiles*j.NumJobs, l.Files)
		case j.FileSize > l.FileSize || j.FileSizeMax > l.FileSize || float64(j.Size) > float64(l.FileSize)*float64(j.NrFiles):
			return bad("a file of more than %d bytes", l.FileSize)
		case inst > l.Instances:
			return bad("%d job instances (numjobs summed over the group), more than the limit of %d", inst, l.Instances)
		case outstanding > l.Outstanding:
			return bad("%d I/Os in flight (iodepth × numjobs summed over the group), more than the limit of %d", outstanding, l.Outstanding)
		case bytes > float64(l.Bytes):
			return bad("%.0f bytes in flight (iodepth × numjobs × largest block summed over the group), more than the limit of %d", bytes, l.Bytes)
		}
	}
	return nil
}

// jobRun is the shared state of one job's instances: its statistics and,
// on the wall clock, the lock that orders its instances' bookkeeping.
type jobRun struct {
	job    *Job
	mu     sync.Mutex
	cols   []*collector // one per instance, or one shared
	all    *collector   // every instance's I/O (steady state)
	steady bool         // the steady-state criterion is met
	ssAt   time.Duration
	ssLast int // the last second checked
	active int // instances still running
	// PTS rounds (Steady.RoundIOs): the current round's completions,
	// bytes and start, and the metric of each round closed.
	ssIOs, ssBytes int64
	ssFrom         time.Duration
	ssRounds       []float64
}

// group is the shared state of a group's streams.
type group struct {
	failed atomic.Bool
	exit   atomic.Bool         // an exitall job ended
	zones  map[string]*zoneSet // emulated zones by file, kept over the run

	// Free space promised to the files that file-by-file uploads create
	// in the timed phase, by file; given back when the group is over.
	promised map[string]int64
	flowMu   sync.Mutex
	flows    map[int]*flowState // flow control by flow_id
	// mapBlocks is the bits of random maps the group's instances hold
	mapBlocks atomic.Uint64
}

// opKind is what a slot does next.
type opKind uint8

const (
	opIO    opKind = iota // an I/O of direction dir, done as the job's engine does it
	opFlush               // fsync or fdatasync
	opOpen                // open (or create) the current file: file-by-file jobs
	opClose               // close it
	opPark                // a slot waits without an operation (latency_target's depth, flow, a thinktime's quiesce)
)

// op is one operation a slot performs.
type op struct {
	kind    opKind
	dir     Dir
	file    *fileState
	off, n  int64
	arrival time.Duration // intended issue time of rate-limited jobs, else -1
	verify  bool          // a read that checks what a write of this job stored
	final   bool          // a verify read of the phase after the main loop (fio's do_verify)
	zero    bool          // a verify read of a range trimmed since: it reads zeros
	ext     int           // a verify-trim's extent, index+1 in the stream's written (0: none)
}

// fileState is one file of a job instance.
type fileState struct {
	name   string
	index  int
	lo, hi int64 // the I/O range within the file
	f      File
	pos    int64 // next sequential offset (or bytes issued, file by file)
	seed   uint64
	zones  *zoneSet // zonemode=zbd
	used   *randMap // the blocks random I/O used in this pass (nil: norandommap, or a permutation)
	perm   uint64   // next index of the permutation of blocks, where there is no map
}

// extent is a range a job wrote, for verify.
type extent struct {
	f      *fileState
	off, n int64
	trim   uint8 // verify-trim: trimNone, trimInFlight, trimDone
}

// The states of a written extent under verify-trim.
const (
	trimNone uint8 = iota
	trimInFlight
	trimDone
)

// maxVerifyExtents bounds the writes a job remembers for verify.
const maxVerifyExtents = 1 << 22

// stream is one instance of a job ("job N of numjobs"): its files,
// random source and progress. All of its slots share it.
type stream struct {
	jr     *jobRun
	job    *Job
	t      Target
	g      *group
	col    *collector
	rng    *rand.Rand
	blocks *blockPicker
	sizes  [3]*sizePicker
	align  int64
	units  uint64 // align units of the smallest file range

	files  []*fileState
	cur    int
	thread int // the instance's index in its group (OpenFlags.Thread)

	budget   int64 // bytes left to issue; <0: unlimited (time based)
	ios      int64 // I/Os left to issue (number_ios); <0: unlimited
	passes   int   // file-by-file passes left
	readPct  int
	scramble bool // writes mark their buffer first (scrambles)
	start    time.Duration
	measure  time.Duration // completions from here on count
	deadline time.Duration // no new I/O from here on; 0: none
	arrival  [3]time.Duration
	iopsGap  [3]float64 // ns between arrivals of an IOPS-paced direction
	rateB    [3]int64   // bytes per second of a bandwidth-paced direction
	// rateRestarted: the rate schedule (arrival) restarted at measure.
	rateRestarted bool

	writes       int        // since the last fsync
	lastWritten  *fileState // what a pending fsync flushes
	flushPending bool
	ending       bool // the job's I/O is done; verify and end_fsync may follow
	endSync      int  // files flushed at the end so far
	inflight     int
	err          error

	randLeft  int // I/Os before the next random offset (rw=randread:N)
	lastOff   int64
	lastFile  *fileState
	trimmed   *op // trimwrite: the write that follows a trim
	seqIdx    int
	seqBase   uint64
	lfsr      uint64
	spr       *sprandom     // sprandom=1
	cpuFree   time.Duration // when the instance's thread is free (hostCall)
	flow      *flowState    // flow=: the flow it shares with other jobs
	flowIOs   int64         // I/Os it issued under flow control
	timeless  int           // I/Os in a row that took no simulated time
	sprDone   bool
	zoneStart int64
	zoneDone  int64
	think     thinker // thinktime (think.go)
	active    int     // operations in flight, parked slots left out

	written    []extent
	verified   int
	verifying  bool
	verifySeed uint64

	// verify-trim (fio trim_percentage): indexes of written extents
	// chosen to be trimmed, in order; writes logged since the last batch;
	// trims left in the current batch
	trimList  []int
	sinceTrim int64
	trimBatch int

	qd, qdLo, qdHi int // latency_target: allowed depth and search bounds
	winEnd         time.Duration
	win            *hdrhistogram.Histogram
}

// slot is one outstanding-I/O position of a stream (iodepth of them).
type slot struct {
	st   *stream
	idx  int
	op   op
	at   time.Duration // when the current operation was issued
	busy bool          // an operation is outstanding (virtual clock)
	buf  []byte        // real targets only
	// spin: a real target's clock spins the CPU until then before it
	// waits for the operation's issue time (thinktime_spin).
	spin time.Duration

	// slat is how long an asynchronous engine took to hand the current
	// operation to the kernel: from when it was prepared to when the
	// submitting system call returned (fio's slat; else 0). at is then
	// the time that call returned, as fio takes its issue time, so that
	// at to completion is fio's clat and at-slat to completion its lat.
	slat time.Duration
	// lead is, where the engine submits synchronously (no slat), the
	// time from the operation's preparation (fio's start_time) to at
	// (its issue_time): the filling of a write's buffer, which fio's lat
	// counts and its clat does not.
	lead time.Duration
}

// exhausted reports whether the stream has issued all it should.
func (st *stream) exhausted() bool {
	if st.trimmed != nil { // a trimwrite's write follows its trim
		return false
	}
	return (st.budget == 0 && !st.job.FileByFile) || st.ios == 0
}

// next decides the slot's next operation, given that the slot became free
// at now. It returns the time to issue it and false when the slot retires.
// When the last slot of an exitall job retires, the group's other jobs
// stop issuing (fio exitall).
func (st *stream) next(sl *slot, now time.Duration) (time.Duration, bool) {
	at, ok := st.decide(sl, now)
	if !ok && st.inflight == 0 && st.job.ExitAll && st.err == nil {
		st.g.exit.Store(true)
	}
	if !ok && st.inflight == 0 && st.flow != nil {
		st.flow.leave(st.flowIOs, int64(st.job.Flow))
		st.flow = nil
	}
	return at, ok
}

// decide is next without exitall's effect.
func (st *stream) decide(sl *slot, now time.Duration) (time.Duration, bool) {
	if st.err != nil || st.g.failed.Load() {
		return 0, false
	}
	at, wait := st.thinkGate(sl, max(now, st.start))
	if wait {
		return at, st.park(sl)
	}
	j := st.job
	if (st.deadline > 0 && at >= st.deadline) || st.g.exit.Load() || st.jr.steady {
		st.ending = true
	}
	if j.LatTarget > 0 && !st.ending && sl.idx >= st.qd {
		// beyond the allowed depth: look again when the window ends
		wake := st.winEnd
		if wake <= at {
			wake = at + j.LatWindow
		}
		return wake, st.park(sl)
	}
	o := op{arrival: -1}
	switch {
	case st.trimBatch > 0 && !st.verifying && st.nextTrim(&o):
		// a batch of verify-trims; fio's backlog verify goes first, and
		// its final verify phase after the main loop's trims
	case (st.verifying || st.ending || st.exhausted()) && st.verifyPending():
		if !st.verifying { // not verify_backlog's: the final phase
			st.col.beginVerify(at)
			o.final = true
		}
		st.nextVerify(&o) // of writes that completed
	case st.trimBatch > 0 && st.nextTrim(&o):
	case st.ending || st.exhausted():
		st.ending = true
		if !(j.EndFsync || j.FsyncOnClose) || j.CreateOnly || st.inflight > 0 || st.endSync >= len(st.files) || j.Kind != KindBlock {
			return 0, false
		}
		o.kind, o.file = opFlush, st.files[st.endSync]
		st.endSync++
	case st.flushPending:
		st.flushPending = false
		o.kind, o.file = opFlush, st.lastWritten
	case j.FileByFile:
		if !st.nextInFile(&o) {
			return 0, false
		}
	case j.Kind.fileEngine():
		if !st.nextFileOp(&o) {
			st.ending = true
			return 0, false
		}
	default:
		if st.flow != nil && !st.flow.admit(st.flowIOs, int64(j.Flow)) {
			return st.flowWait(at), st.park(sl)
		}
		st.flowIOs++
		st.nextIO(&o)
	}
	if o.kind == opIO && !o.verify && o.ext == 0 {
		if gap, paced := st.gap(o.dir, o.n); paced {
			if j.RampTime > 0 && !st.rateRestarted && at >= st.measure {
				// fio restarts its rate schedule when the ramp ends
				// (reset_all_stats): what the ramp fell behind by is
				// not made up in the measured window.
				st.rateRestarted = true
				st.arrival = [3]time.Duration{st.measure, st.measure, st.measure}
			}
			if st.deadline > 0 && st.arrival[o.dir] >= st.deadline { // the next arrival is too late
				st.ending = true
				return st.decide(sl, now)
			}
			o.arrival = st.arrival[o.dir]
			at = max(at, o.arrival)
			st.arrival[o.dir] += time.Duration(gap)
		}
	}
	sl.op = o
	st.inflight++
	if o.kind != opPark { // (nextIO parks a slot it has nothing for)
		st.active++
		st.think.horizon = max(st.think.horizon, at)
	}
	if o.kind == opIO {
		st.col.issued(st.inflight)
	}
	st.thinkIssued(&sl.op, at)
	return at, true
}

// park makes the slot wait without an I/O (until the stream's next
// completion frees work for it).
func (st *stream) park(sl *slot) bool {
	sl.op = op{kind: opPark, arrival: -1}
	st.inflight++
	return true
}

// gap returns the time to the next arrival of direction d for a paced job.
func (st *stream) gap(d Dir, n int64) (float64, bool) {
	var g float64
	switch {
	case st.iopsGap[d] > 0:
		g = st.iopsGap[d]
	case st.rateB[d] > 0:
		g = float64(n) * float64(time.Second) / float64(st.rateB[d])
	default:
		return 0, false
	}
	if st.job.Poisson {
		g = st.rng.ExpFloat64() * g
	}
	return g, true
}

// nextIO picks a block I/O of an ordinary (all files open) job.
func (st *stream) nextIO(o *op) {
	j := st.job
	if st.trimmed != nil { // trimwrite: write what was just trimmed
		*o = *st.trimmed
		st.trimmed = nil
		st.account(o, false)
		return
	}
	f := st.pickFile()
	o.kind, o.file = opIO, f
	switch {
	case j.RW.trims():
		o.dir = DirTrim
	case st.readPct == 100:
		o.dir = DirRead
	case st.readPct == 0 || st.rng.IntN(100) >= st.readPct:
		o.dir = DirWrite
	}
	n := j.bsOf(o.dir)
	switch {
	case st.sizes[o.dir] != nil:
		n = st.sizes[o.dir].pick(st.rng)
	case j.BSMax[o.dir] > n:
		n += st.rng.Int64N((j.BSMax[o.dir]-n)/st.align+1) * st.align
	}
	n = min(n, f.hi-f.lo)
	o.off = st.offset(f, o.dir, n)
	if st.sprDone { // SPRandom has written the drive once
		st.ending = true
		o.kind = opPark
		return
	}
	o.n = min(n, f.hi-o.off)
	if f.zones != nil {
		var ok bool
		if o.off, o.n, ok = f.zones.adjust(o.dir, o.off, o.n, f.lo, f.hi, st.rng); !ok {
			st.ending = true // nothing written to read (fio: read_beyond_wp=0)
			o.kind = opPark
			return
		}
	}
	if st.budget > 0 {
		o.n = min(o.n, st.budget)
	}
	if j.RW == TrimWrite || j.RW == RandTrimWrite {
		w := *o
		w.dir = DirWrite
		st.trimmed = &w
	}
	st.account(o, true)
}

// account charges an I/O to the budgets (the write after a trimwrite's
// trim is part of the same step) and schedules fsyncs.
func (st *stream) account(o *op, charge bool) {
	j := st.job
	if charge && st.budget > 0 {
		st.budget = max(st.budget-o.n, 0)
	}
	if charge && st.ios > 0 {
		st.ios--
	}
	if o.dir == DirWrite {
		if every := max(j.Fsync, j.Fdatasync); every > 0 {
			st.lastWritten = o.file
			if st.writes++; st.writes >= every {
				st.writes, st.flushPending = 0, true
			}
		}
	}
}

// pickFile returns the file of the next I/O (file_service_type).
func (st *stream) pickFile() *fileState {
	if len(st.files) == 1 {
		return st.files[0]
	}
	switch st.job.FileService {
	case "random":
		return st.files[st.rng.IntN(len(st.files))]
	case "sequential":
		f := st.files[st.cur]
		if f.pos >= f.hi && !st.job.RW.Random() {
			st.cur = (st.cur + 1) % len(st.files)
			f = st.files[st.cur]
		}
		return f
	}
	f := st.files[st.cur]
	st.cur = (st.cur + 1) % len(st.files)
	return f
}

// offset returns the offset of an I/O of n bytes in f.
func (st *stream) offset(f *fileState, d Dir, n int64) int64 {
	j := st.job
	random := j.RW.Random()
	if p := j.PctRandom[d]; p != 0 {
		random = p > 0 && (p == 100 || st.rng.IntN(100) < p)
	}
	if j.RandNr > 1 && random {
		if st.randLeft > 0 && st.lastFile == f {
			st.randLeft--
			off := st.lastOff
			if !j.SeqIdentical {
				off = f.pos
			}
			if off+n <= f.hi {
				f.pos = off + n
				return off
			}
		}
		st.randLeft = j.RandNr - 1
	}
	var off int64
	if random {
		u, ok := st.pickUnit(f)
		if !ok {
			st.sprDone = true
			return f.lo
		}
		if f.used != nil {
			f.used.mark(u, uint64((n+st.align-1)/st.align))
		}
		off = f.lo + int64(u)*st.align
		if off+n > f.hi {
			off = f.lo + (f.hi-n-f.lo)/st.align*st.align
		}
	} else {
		off = st.seqOffset(f, n)
	}
	st.lastOff, st.lastFile = off, f
	f.pos = off + n
	return off
}

// pickUnit draws an alignment unit of the job's range in f; false when
// SPRandom's pass is over.
func (st *stream) pickUnit(f *fileState) (uint64, bool) {
	j := st.job
	switch {
	case st.spr != nil:
		return st.spr.next(func() (uint64, bool) {
			if f.perm >= st.units {
				return 0, false
			}
			f.perm++
			return st.blocks.scatter(f.perm - 1), true
		})
	case f.used != nil:
		return f.used.pick(st.rng), true
	case j.Distribution.Kind == Uniform && j.RandomMap && !j.LFSR:
		f.perm++
		return st.blocks.scatter(f.perm % st.units), true
	}
	return st.pickOther(), true
}

// pickOther is pickUnit for sequences, LFSR and non-uniform
// distributions.
func (st *stream) pickOther() uint64 {
	j := st.job
	switch {
	case j.Distribution.Kind == Sequence:
		s := j.Distribution.Seq
		u := st.seqBase + s[st.seqIdx]
		if st.seqIdx++; st.seqIdx == len(s) {
			st.seqIdx = 0
			if j.Distribution.SeqStride {
				st.seqBase += uint64(len(s))
			}
		}
		return u % st.units
	case j.LFSR && j.Distribution.Kind == Uniform:
		u := st.blocks.scatter(st.lfsr % st.units)
		st.lfsr++
		return u
	}
	return st.blocks.pick(st.rng)
}

// seqOffset returns the next sequential offset: after the previous I/O
// plus rw's modifier (negative: backwards), wrapping at the range's ends,
// and striding through zones (zonemode=strided).
func (st *stream) seqOffset(f *fileState, n int64) int64 {
	j := st.job
	off := f.pos
	if off != f.lo || st.lastFile == f {
		off += j.SeqAdd
	}
	if j.ZoneSize > 0 {
		if st.zoneDone >= j.ZoneSize {
			st.zoneStart += max(j.ZoneRange, j.ZoneSize) + j.ZoneSkip
			st.zoneDone = 0
			off = f.lo + st.zoneStart
		}
		st.zoneDone += n
	}
	switch {
	case off+n > f.hi && j.SeqAdd >= 0:
		off, st.zoneStart, st.zoneDone = f.lo, 0, min(n, st.zoneDone)
	case off < f.lo:
		off = f.lo + max(0, (f.hi-n-f.lo)/st.align*st.align)
	}
	return off
}

// nextInFile steps a file-by-file job: open, transfer from start to end,
// close, next file.
func (st *stream) nextInFile(o *op) bool {
	j := st.job
	if st.cur == len(st.files) {
		if st.passes--; st.passes <= 0 && !j.TimeBased {
			st.ending = true
			return false
		}
		st.cur = 0
	}
	f := st.files[st.cur]
	o.file = f
	switch {
	case f.f == nil:
		o.kind = opOpen
		f.pos = f.lo
	case f.pos < f.hi:
		o.kind, o.off, o.dir = opIO, f.pos, DirRead
		if st.readPct == 0 {
			o.dir = DirWrite
		}
		o.n = min(j.BS, f.hi-f.pos)
		f.pos += o.n
	default:
		o.kind = opClose
	}
	return true
}

// nextFileOp steps a file engine's job: one operation per file, passes
// as loops and time_based ask (a delete has one pass).
func (st *stream) nextFileOp(o *op) bool {
	j := st.job
	if st.cur == len(st.files) {
		if st.passes--; (st.passes <= 0 && !j.TimeBased) || j.Kind == KindFileDelete || j.Kind == KindDirDelete {
			return false
		}
		st.cur = 0
		if j.Kind == KindDirCreate { // a directory is created once: remove it for the next pass
			for _, f := range st.files {
				if p, ok := unwrapTarget(st.t).(fileOpTarget); ok {
					_ = p.prepare(KindDirCreate, f.name, 0)
				}
			}
		}
	}
	f := st.files[st.cur]
	st.cur++
	o.kind, o.file, o.dir, o.n = opIO, f, DirRead, 0
	if st.readPct == 0 {
		o.dir = DirWrite
	}
	if st.ios > 0 {
		st.ios--
	}
	return true
}

// verifyPending reports whether written ranges wait to be read back. A
// range whose verify-trim is in flight waits for it; one trimmed without
// trim_verify_zero is not read back (fio drops it from its verify list).
func (st *stream) verifyPending() bool {
	if !st.job.DoVerify {
		return false
	}
	for st.verified < len(st.written) && st.written[st.verified].trim == trimDone && st.job.TrimNoZero {
		st.verified++
	}
	if st.verified == len(st.written) {
		st.resetWritten()
		return false
	}
	return st.written[st.verified].trim != trimInFlight
}

// resetWritten forgets the written ranges once all are verified, and the
// trims chosen among them (fio removes a verified block from its trim list).
func (st *stream) resetWritten() {
	st.verifying = false
	st.written, st.verified = st.written[:0], 0
	st.trimList = st.trimList[:0]
}

// nextVerify reads back the next written range.
func (st *stream) nextVerify(o *op) {
	e := st.written[st.verified]
	st.verified++
	*o = op{kind: opIO, dir: DirRead, file: e.f, off: e.off, n: e.n, arrival: -1, verify: true, zero: e.trim == trimDone}
	if st.verified == len(st.written) {
		st.resetWritten()
	}
}

// logWritten remembers a completed write for verify and, under
// verify-trim, chooses it for a trim with trim_percentage's probability
// and starts a batch of trims every trim_backlog logged writes (fio's
// log_io_piece, io_u_should_trim and check_get_trim).
func (st *stream) logWritten(o *op) {
	j := st.job
	if len(st.written) >= maxVerifyExtents {
		return
	}
	st.written = append(st.written, extent{f: o.file, off: o.off, n: o.n})
	if j.VerifyBacklog > 0 && int64(len(st.written)-st.verified) >= j.VerifyBacklog {
		st.verifying = true
	}
	if !j.trimVerify() {
		return
	}
	if st.rng.IntN(100) < j.TrimPct {
		st.trimList = append(st.trimList, len(st.written)-1)
	}
	if st.sinceTrim++; st.sinceTrim >= j.TrimBacklog && st.trimBatch == 0 && len(st.trimList) > 0 {
		st.sinceTrim = 0
		st.trimBatch = j.TrimBatch
		if st.trimBatch == 0 {
			st.trimBatch = int(min(j.TrimBacklog, 1<<30))
		}
	}
}

// nextTrim trims the next range of the trim list, if there is one not yet
// verified; false ends the batch.
func (st *stream) nextTrim(o *op) bool {
	for len(st.trimList) > 0 {
		i := st.trimList[0]
		st.trimList = st.trimList[1:]
		if i < st.verified || i >= len(st.written) {
			continue // read back already
		}
		e := &st.written[i]
		e.trim = trimInFlight
		st.trimBatch--
		*o = op{kind: opIO, dir: DirTrim, file: e.f, off: e.off, n: e.n, arrival: -1, ext: i + 1}
		return true
	}
	st.trimBatch = 0
	return false
}

// do performs the slot's operation issued at at.
func (st *stream) do(sl *slot, at time.Duration) (time.Duration, error) {
	done, err := st.perform(sl, at)
	if st.job.ThinkTime > 0 && st.t.Mode() == Virtual { // (a real target's slots run concurrently)
		st.think.horizon = max(st.think.horizon, done)
	}
	return done, err
}

// perform is do without the bookkeeping.
func (st *stream) perform(sl *slot, at time.Duration) (time.Duration, error) {
	o := &sl.op
	j := st.job
	switch o.kind {
	case opIO:
		return st.doIO(sl, at)
	case opFlush:
		return o.file.f.Do(at, models.Flush, 0, 0, nil)
	case opOpen:
		f, done, err := st.t.Open(at, o.file.name, o.file.hi, OpenFlags{Write: st.readPct < 100, Create: st.readPct == 0, Direct: j.Direct, WriteThrough: j.WriteThrough, Thread: st.thread})
		o.file.f = f
		return done, err
	case opPark:
		return at, nil
	default: // opClose
		done, err := o.file.f.Close(at)
		o.file.f = nil
		return done, err
	}
}

// fill puts into the buffer of the slot's operation, if it is a write
// of a block engine on a real target, what the job's writes carry: the
// verify pattern, or scrambling's marks of its offset and prep, the time
// it was prepared. fio does both after it takes the I/O's start time
// (get_io_u stamps start_time, then scrambles; do_io then fills the
// verify pattern, populate_verify_io_u) and before its issue time, so
// the filling counts in lat and slat, and not in clat.
func (st *stream) fill(sl *slot, prep time.Duration) {
	o := &sl.op
	if sl.buf == nil || o.kind != opIO || o.dir != DirWrite || st.job.Kind != KindBlock {
		return
	}
	buf := sl.buf[:o.n]
	switch {
	case st.job.Verify != "":
		fillPattern(buf, o.file.seed, o.off, st.job.VerifyPattern)
	case st.scramble:
		scramble(buf, o.off, prep)
	}
}

// doIO performs an I/O the way the job's engine does.
func (st *stream) doIO(sl *slot, at time.Duration) (time.Duration, error) {
	o := &sl.op
	j := st.job
	virtual := st.t.Mode() == Virtual
	switch j.Kind {
	case KindNull:
		switch {
		case !virtual:
			return at, nil
		case fioKinds[j.EngineName] == KindNull: // null, cpp_null
			return st.hostCall(at, nullEngineTime), nil
		}
		return st.hostCall(at, noDeviceIOTime), nil // /dev/null, /dev/zero
	case KindFileCreate, KindFileStat, KindFileDelete, KindDirCreate, KindDirStat, KindDirDelete:
		ft, ok := unwrapTarget(st.t).(fileOpTarget)
		if !ok {
			return at, fmt.Errorf("%w: %s cannot create, stat or delete single files (ioengine=%s)", ErrTarget, st.t.Name(), j.Kind)
		}
		return ft.fileOp(at, j.Kind, o.file.name, j.FileSize)
	case KindFtruncate, KindFalloc:
		rf, ok := unwrapFile(o.file.f).(rangeFile)
		if !ok {
			return at, fmt.Errorf("%w: %s cannot truncate or allocate ranges of a file (ioengine=%s)", ErrTarget, st.t.Name(), j.Kind)
		}
		switch {
		case j.Kind == KindFtruncate:
			return rf.truncate(at, o.off)
		case o.dir == DirTrim:
			return rf.punch(at, o.off, o.n)
		}
		if virtual && o.dir != DirRead {
			at = st.hostCall(at, fallocateTime)
		}
		return rf.allocate(at, o.off, o.n, o.dir == DirRead)
	}
	var buf []byte
	if sl.buf != nil {
		buf = sl.buf[:o.n]
	}
	switch o.dir {
	case DirTrim:
		if o.file.zones != nil { // an emulated zone's reset is no I/O: fio's own work
			if virtual {
				return st.hostCall(at, nullEngineTime), nil
			}
			return at, nil
		}
		if rf, ok := unwrapFile(o.file.f).(rangeFile); ok && st.t.Mode() == Real {
			return rf.punch(at, o.off, o.n)
		}
		return o.file.f.Do(at, models.Trim, o.off, o.n, nil)
	case DirWrite: // its buffer filled (fill)
		// sync=1 (WriteThrough): the file is open O_SYNC on a path, and a
		// model's write is on the storage before it completes.
		return o.file.f.Do(at, models.Write, o.off, o.n, buf)
	}
	done, err := o.file.f.Do(at, models.Read, o.off, o.n, buf)
	switch {
	case err != nil || buf == nil || j.Verify == "" || !(o.verify || !j.writes()):
	case o.zero:
		err = checkZero(buf, o.off, o.file.name)
	default:
		err = checkPattern(buf, o.file.seed, o.off, j.VerifyPattern, o.file.name)
	}
	return done, err
}

// complete accounts for the slot's operation, which finished at done.
func (st *stream) complete(sl *slot, done time.Duration, err error) {
	st.inflight--
	o := &sl.op
	if o.kind != opPark {
		st.active--
	}
	st.thinkCompleted(o, done, err == nil)
	if err != nil {
		if st.ignores(o, err) {
			return
		}
		if st.err == nil {
			st.err = fmt.Errorf("job %q: %v: %w", st.job.Name, o.name(), err)
		}
		st.g.failed.Store(true)
		return
	}
	j := st.job
	if o.kind == opClose {
		st.cur++
	}
	if o.kind == opIO && j.TimeBased && st.t.Mode() == Virtual {
		if st.timeless++; done > sl.at {
			st.timeless = 0
		}
		if st.timeless > maxTimelessIOs && st.err == nil {
			st.err = fmt.Errorf("%w: %s: job %q: ioengine=%s takes no simulated time on %s (its model charges nothing for it), so a time_based run would never end; give size or number_ios, or run it on a real target",
				ErrJob, j.Pos, j.Name, j.Kind, st.t.Name())
			st.g.failed.Store(true)
		}
	}
	if o.kind == opIO && o.dir == DirWrite && j.Verify != "" && (j.DoVerify || j.trimVerify()) {
		st.logWritten(o)
	}
	if o.ext > 0 {
		st.written[o.ext-1].trim = trimDone
	}
	if o.kind == opIO && j.LatTarget > 0 {
		st.latWindow(done - sl.at)
		if done >= st.winEnd {
			st.adjustDepth(done)
		}
	}
	// The window is (measure, end]: what completes at the ramp's last
	// instant belongs to the ramp (without a ramp, nothing precedes it).
	if done < st.measure || (done == st.measure && j.RampTime > 0) {
		return
	}
	c := st.col
	switch o.kind {
	case opIO:
		origin := sl.at - sl.slat - sl.lead
		if o.arrival >= 0 {
			origin = o.arrival
		}
		c.record(o.dir, sl.slat, done-sl.at, done-origin, o.n, done)
		// The job's instances together are read only by the steady-state
		// check: without ss=, an I/O is counted once, not twice.
		if j.SteadyState != nil {
			if c != st.jr.all {
				st.jr.all.record(o.dir, sl.slat, done-sl.at, done-origin, o.n, done)
			}
			st.jr.checkSteady(done, o.n)
		}
	case opClose:
		c.file(done)
	case opPark:
	default:
		c.end = max(c.end, done)
	}
}

// ignores reports whether continue_on_error lets the job go on after err.
func (st *stream) ignores(o *op, err error) bool {
	if o.kind != opIO || errors.Is(err, models.ErrFailed) && st.t.Mode() == Virtual {
		return false
	}
	switch st.job.ContinueOnError {
	case "all", "1", "io":
		return true
	case "read":
		return o.dir == DirRead && !o.verify
	case "write":
		return o.dir == DirWrite
	case "verify":
		return o.verify && errors.Is(err, errVerify)
	}
	return false
}

// name names an operation in error messages.
func (o *op) name() string {
	switch o.kind {
	case opIO:
		if o.verify {
			return "verify"
		}
		return o.dir.String()
	case opFlush:
		return "fsync"
	case opOpen:
		return "open"
	case opClose:
		return "close"
	}
	return "wait"
}

// latWindow counts a completion's latency in the latency_target window.
func (st *stream) latWindow(lat time.Duration) {
	if st.win == nil {
		st.win = newHist()
	}
	_ = st.win.RecordValue(max(int64(lat), histMin))
}

// adjustDepth ends a latency_target window: a depth that met the target
// becomes the lower bound of the search, one that missed it the upper
// (fio's search for the highest depth that meets the target).
func (st *stream) adjustDepth(now time.Duration) {
	j := st.job
	ok := st.win == nil || time.Duration(st.win.ValueAtQuantile(j.LatPercentile)) <= j.LatTarget
	if ok {
		st.qdLo = st.qd
	} else {
		st.qdHi = max(st.qd-1, 1)
		st.qdLo = min(st.qdLo, st.qdHi)
	}
	st.qd = max((st.qdLo+st.qdHi+1)/2, 1)
	if st.win != nil {
		st.win.Reset()
	}
	st.winEnd = now + j.LatWindow
}

// checkSteady ends the job once its per-second samples of the last Dur
// (after Ramp) meet the steady-state criterion (fio's ss=), or its rounds
// SNIA PTS's (checkRounds); now is a completion's time and bytes its size.
func (jr *jobRun) checkSteady(now time.Duration, bytes int64) {
	ss := jr.job.SteadyState
	if ss.RoundIOs > 0 {
		jr.checkRounds(now, bytes)
		return
	}
	c := jr.all
	sec := int((now - c.from) / time.Second) // samples before this second are complete
	if sec == jr.ssLast || ss.Dur <= 0 {
		return
	}
	jr.ssLast = sec
	n := int(ss.Dur / time.Second)
	first := sec - n
	if n < 2 || first < int(ss.Ramp/time.Second) {
		return
	}
	xs := make([]float64, n)
	for i := range xs {
		if first+i < len(c.series) {
			s := c.series[first+i]
			switch ss.Metric {
			case "iops":
				xs[i] = float64(s.IOs)
			case "bw":
				xs[i] = float64(s.Bytes)
			default:
				if s.IOs > 0 {
					xs[i] = s.latSum / float64(s.IOs)
				}
			}
		}
	}
	var mean float64
	for _, x := range xs {
		mean += x
	}
	mean /= float64(n)
	var v float64
	if ss.Slope {
		var sxy, sxx float64
		for i, x := range xs {
			d := float64(i) - float64(n-1)/2
			sxy += d * (x - mean)
			sxx += d * d
		}
		v = math.Abs(sxy / sxx)
	} else {
		for _, x := range xs {
			v = max(v, math.Abs(x-mean))
		}
	}
	limit := ss.Limit
	if ss.Pct {
		limit = ss.Limit / 100 * mean
	}
	if mean > 0 && v <= limit {
		jr.steady, jr.ssAt = true, now
	}
}

// checkRounds counts a completion of n bytes at now into the current PTS
// round and, when the round is full, closes it and tests the window of
// the last SteadyRounds rounds. A round whose completions all fall at
// its start instant has no span yet and stays open.
func (jr *jobRun) checkRounds(now time.Duration, n int64) {
	ss := jr.job.SteadyState
	if jr.ssIOs == 0 && len(jr.ssRounds) == 0 {
		jr.ssFrom = jr.all.from
	}
	jr.ssIOs++
	jr.ssBytes += n
	span := (now - jr.ssFrom).Seconds()
	if jr.ssIOs < ss.RoundIOs || span <= 0 {
		return
	}
	x := float64(jr.ssIOs) / span
	if ss.Metric == "bw" {
		x = float64(jr.ssBytes) / span
	}
	jr.ssRounds = append(jr.ssRounds, x)
	jr.ssIOs, jr.ssBytes, jr.ssFrom = 0, 0, now
	if ssd.SteadyState(jr.ssRounds) {
		jr.steady, jr.ssAt = true, now
	}
}

// runGroup runs a group of jobs at the same time and returns their results.
// genesis is when the run's first group started (-1 before it has).
func runGroup(t Target, jobs []Job, firstIndex int, seed uint64, genesis *time.Duration, zones map[string]*zoneSet) ([]Result, error) {
	clock := t.Clock()
	g := &group{zones: zones, promised: map[string]int64{}}
	if r, ok := unwrapTarget(t).(spaceReserver); ok {
		defer func() { // the files are written (or the run failed): statfs counts them
			for _, n := range g.promised {
				r.unreserve(n)
			}
		}()
	}
	var streams []*stream
	var runs []*jobRun
	laid := map[string]laidOut{}
	for ji := range jobs {
		j := &jobs[ji]
		jr := &jobRun{job: j, active: j.NumJobs, ssLast: -1}
		runs = append(runs, jr)
		for inst := range j.NumJobs {
			st, err := newStream(t, jr, inst, laid, mix(seed, uint64(firstIndex+ji)), seed, g)
			if err != nil {
				return nil, err
			}
			st.thread = len(streams)
			if j.Flow > 0 {
				st.flow = g.flow(j.FlowID)
				st.flow.join(int64(j.Flow))
			}
			streams = append(streams, st)
		}
	}
	// Open the files of ordinary jobs before the clock starts.
	var opened time.Duration
	for _, st := range streams {
		if st.job.FileByFile || st.job.Kind == KindNull || st.job.Kind.fileEngine() {
			continue
		}
		for _, f := range st.files {
			fl, done, err := t.Open(clock.Now(), f.name, f.hi, OpenFlags{Write: st.job.writes(), Direct: st.job.Direct, WriteThrough: st.job.WriteThrough, Thread: st.thread})
			if err != nil {
				return nil, fmt.Errorf("job %q: %w", st.job.Name, err)
			}
			f.f, opened = fl, max(opened, done)
			if inv, ok := unwrapFile(fl).(invalidator); ok && !st.job.NoInvalidate {
				if err := inv.invalidate(); err != nil { // fio's invalidate=1, its default
					return nil, fmt.Errorf("job %q: %w", st.job.Name, err)
				}
			}
			if st.job.PreRead {
				if opened, err = preRead(fl, f, max(opened, clock.Now()), t.Mode()); err != nil {
					return nil, fmt.Errorf("job %q: pre_read: %w", st.job.Name, err)
				}
			}
		}
	}
	clock.Wait(opened)
	// The slots and their buffers are made before the clock starts, as
	// fio allocates its io_us before a job's runtime begins: filling a
	// job's buffers with random data takes long enough (8 MiB at 1 MiB
	// QD8) to eat a short runtime before the first I/O.
	var slots []*slot
	for _, st := range streams {
		j := st.job
		for i := range j.IODepth {
			sl := &slot{st: st, idx: i}
			if t.Mode() == Real && j.Kind == KindBlock {
				sl.buf = alignedBuffer(maxIOSize(j), st.rng)
				j.Buffer.fill(sl.buf, func(b []byte) { fillRandom(b, st.rng) })
			}
			slots = append(slots, sl)
		}
	}
	var windowStart time.Duration // the first job's start: utilisation is over [windowStart, the group's end]
	var accountsBefore *accountSnapshot
	// begin starts the group's clock: the clock calls it once every job
	// instance is ready to submit (its engine set up), so that, as in
	// fio, a job's runtime counts from its first I/O's submission, not
	// from its set-up.
	begin := func() {
		if t.Mode() == Real {
			// What set-up left for the collector goes now, not in the
			// timed phase as a pause of a few milliseconds at the tail
			// of the latencies (fio, in C, has no collector to wait for).
			runtime.GC()
		}
		start := clock.Now()
		if *genesis < 0 {
			*genesis = start
		}
		windowStart = time.Duration(math.MaxInt64)
		for _, jr := range runs {
			windowStart = min(windowStart, jr.job.startAt(start, *genesis))
		}
		accountsBefore = snapshotAccounts(t, windowStart)
		for _, st := range streams {
			j := st.job
			st.start = j.startAt(start, *genesis)
			st.measure = st.start + j.RampTime
			st.arrival = [3]time.Duration{st.start, st.start, st.start}
			st.think.lastEnd = st.start
			st.winEnd = st.start + j.LatWindow
			if j.Runtime > 0 {
				st.deadline = st.measure + j.Runtime
			}
		}
		for _, jr := range runs {
			from := jr.job.startAt(start, *genesis) + jr.job.RampTime
			jr.all = newCollector(from)
			for _, c := range jr.cols {
				c.from = from
			}
		}
	}
	clock.drive(slots, begin)
	windowEnd := clock.Now()
	accountsAfter := snapshotAccounts(t, windowEnd)
	var errs []error
	for _, st := range streams {
		if st.err != nil {
			errs = append(errs, st.err)
		}
		for _, f := range st.files {
			if f.f != nil {
				if _, err := f.f.Close(clock.Now()); err != nil {
					errs = append(errs, err)
				}
				f.f = nil
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	removed := map[string]bool{}
	for _, st := range streams {
		if !st.job.Unlink || st.job.Kind == KindFileDelete || st.job.Kind == KindDirDelete || st.job.Kind == KindNull {
			continue
		}
		for _, f := range st.files {
			if removed[f.name] || st.job.DeviceName != "" {
				continue
			}
			removed[f.name] = true
			done, err := t.Remove(clock.Now(), f.name)
			if err != nil {
				return nil, fmt.Errorf("job %q: remove %s: %w", st.job.Name, f.name, err)
			}
			clock.Wait(done)
		}
	}
	res := make([]Result, len(runs))
	var groupIOs int64
	for i, jr := range runs {
		res[i] = merged(jr.cols).result(jr.job)
		groupIOs += res[i].IOs
	}
	uses, bottleneck := analyse(accountsBefore, accountsAfter, windowEnd-windowStart, groupIOs)
	for i, jr := range runs {
		res[i].Utilisation, res[i].Bottleneck = uses, bottleneck
		res[i].clones = jr.cols
		res[i].Settings = jr.job.Recorded
		res[i].Notes = append([]string(nil), jr.job.Notes...)
		if jr.steady {
			at := (jr.ssAt - jr.all.from).Seconds()
			res[i].Notes = append(res[i].Notes, fmt.Sprintf("steady state reached after %.1f s", at))
			if jr.job.SteadyState.RoundIOs > 0 {
				res[i].Steady = &SteadyAt{Criterion: jr.job.SteadyState.String(), At: at}
			}
		}
		if err := checkRateMin(jr.job, &res[i]); err != nil {
			return nil, err
		}
	}
	for _, st := range streams {
		if j := st.job; j.LatTarget > 0 {
			for i := range res {
				if res[i].job == j {
					res[i].Notes = append(res[i].Notes, fmt.Sprintf("latency_target: instance's queue depth %d meets p%g ≤ %v", st.qdLo, j.LatPercentile, j.LatTarget))
				}
			}
		}
	}
	return res, nil
}

// checkRateMin fails a job that moved less than rate_min or
// rate_iops_min asks (fio ends such a job with an error).
func checkRateMin(j *Job, r *Result) error {
	for d, dr := range []*DirResult{r.Read, r.Write, r.Trim} {
		if dr == nil {
			continue
		}
		if minB := j.RateMin[d]; minB > 0 && dr.MBps*1e6 < float64(minB) {
			return fmt.Errorf("job %q: %s bandwidth %.0f B/s is below rate_min %d B/s", j.Name, Dir(d), dr.MBps*1e6, minB)
		}
		if minI := j.RateMinIOPS[d]; minI > 0 && dr.IOPS < float64(minI) {
			return fmt.Errorf("job %q: %s %.1f IOPS is below rate_iops_min %d", j.Name, Dir(d), dr.IOPS, minI)
		}
	}
	return nil
}

// preRead reads a file's range once, untimed, before the run (fio
// pre_read: the page cache holds it).
func preRead(fl File, f *fileState, at time.Duration, mode Mode) (time.Duration, error) {
	const chunk = 1 << 20
	var buf []byte
	if mode == Real {
		buf = make([]byte, chunk)
	}
	for off := f.lo; off < f.hi; off += chunk {
		n := min(chunk, f.hi-off)
		var b []byte
		if buf != nil {
			b = buf[:n]
		}
		done, err := fl.Do(at, models.Read, off, n, b)
		if err != nil {
			return at, err
		}
		at = done
	}
	return at, nil
}

// laidOut records a file laid out for a group's jobs.
type laidOut struct {
	size int64
	fill bool
}

// newStream lays out instance inst's files and sets up its generators.
func newStream(t Target, jr *jobRun, inst int, laid map[string]laidOut, seed, runSeed uint64, g *group) (*stream, error) {
	j := jr.job
	if j.RandSeed != 0 {
		seed = j.RandSeed
	}
	st := &stream{jr: jr, job: j, t: t, g: g, rng: rand.New(rand.NewPCG(seed, uint64(inst))),
		readPct: j.RW.readPct(j.RWMixRead), passes: j.Loops, budget: -1, ios: -1, align: j.BlockAlign,
		scramble: t.Mode() == Real && scrambles(j)}
	if st.align <= 0 {
		st.align = j.minBS()
	}
	if j.NumJobs <= maxClones || inst == 0 {
		// Each instance records into a collector of its own, as each of
		// fio's job threads keeps its own statistics; group_reporting
		// merges them in the report.
		jr.cols = append(jr.cols, newCollector(0))
	}
	st.col = jr.cols[len(jr.cols)-1]
	if j.LogsWanted() && st.col.logs == nil {
		st.col.logs = newJobLogs(j)
	}
	for d := range 3 {
		st.sizes[d] = newSizePicker(j.splitOf(Dir(d)))
		switch {
		case j.RateIOPSDir[d] > 0:
			st.iopsGap[d] = float64(time.Second) / float64(j.RateIOPSDir[d])
		case j.RateIOPS > 0:
			st.iopsGap[d] = float64(time.Second) / float64(j.RateIOPS)
		}
		st.rateB[d] = j.RateBytes[d]
	}
	if t.Mode() == Real && !j.Kind.fileEngine() {
		// Submission time (slat), a paced arrival and a write's buffer
		// fill part lat from clat.
		slat := !j.Engine.synchronous()
		lat := slat || st.iopsGap != [3]float64{} || st.rateB != [3]int64{} || j.writes()
		for _, d := range j.dirs() {
			st.col.prepare(d, slat, lat)
		}
		if j.Verify != "" {
			st.col.prepare(DirRead, slat, lat)
		}
	}
	if j.NumberIOs > 0 {
		st.ios = j.NumberIOs
	}
	if j.LatTarget > 0 {
		st.qd, st.qdLo, st.qdHi = 1, 1, j.IODepth
	}
	if j.Kind == KindNull {
		st.files = []*fileState{{name: "null", lo: 0, hi: max(j.FileSize, j.Size, j.IOSize, j.minBS())}}
		st.setBudget(st.files[0].hi)
		if j.CreateOnly {
			st.budget, st.ios = 0, 0
		}
		return st, st.setBlocks()
	}
	if j.Kind.fileEngine() {
		ft, ok := unwrapTarget(t).(fileOpTarget)
		if !ok {
			return nil, fmt.Errorf("%w: %s: job %q: %s cannot create, stat or delete single files (ioengine=%s)", ErrTarget, j.Pos, j.Name, t.Name(), j.Kind)
		}
		for i, name := range j.files(inst) {
			if err := ft.prepare(j.Kind, name, j.FileSize); err != nil {
				return nil, fmt.Errorf("job %q: %w", j.Name, err)
			}
			st.files = append(st.files, &fileState{name: name, index: i})
		}
		if j.CreateOnly {
			st.ios = 0
		}
		return st, nil
	}
	var total int64
	for i, name := range j.files(inst) {
		f, err := st.layout(t, name, inst, laid)
		if err != nil {
			return nil, err
		}
		f.index = i
		f.seed = mix(runSeed, hashName(name))
		if j.ZBD {
			if f.zones = g.zones[name]; f.zones == nil {
				f.zones = newZoneSet(f.hi, j.ZoneSize, j.MaxOpenZones)
				f.zones.setReset(j.ZoneResetThreshold, j.ZoneResetFreq)
				g.zones[name] = f.zones
			}
		}
		st.files = append(st.files, f)
		total += f.hi - f.lo
	}
	st.setBudget(total)
	if j.CreateOnly { // fio's create_only: the setup phase, the files laid out, and no I/O
		st.budget, st.ios = 0, 0
	}
	return st, st.setBlocks()
}

// maxClones is the most instances of a job reported one by one (fio's
// numjobs without group_reporting); above it they are reported together.
const maxClones = 64

func hashName(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := range len(s) {
		h = (h ^ uint64(s[i])) * 1099511628211
	}
	return h
}

// sharesJobState reports whether the stream's bookkeeping touches state
// of its job that other instances touch too (a collector shared beyond
// maxClones, the steady-state check over all instances), which the job's
// lock orders. Otherwise each instance keeps to its own, as fio's job
// threads do: a lock taken per I/O by two instances, each on a thread of
// its own, parks one of them whenever they meet, which for a goroutine
// locked to its thread hands the thread's P to another thread and back.
func (st *stream) sharesJobState() bool {
	j := st.job
	return j.NumJobs > 1 && (j.NumJobs > maxClones || j.SteadyState != nil)
}

// setBudget sets the bytes the stream issues given its files' bytes.
func (st *stream) setBudget(total int64) {
	j := st.job
	if j.TimeBased {
		return
	}
	st.budget = total * int64(j.Loops)
	if j.Size > 0 && j.DeviceName == "" {
		st.budget = min(st.budget, j.Size*int64(j.Loops))
	}
	if j.IOSize > 0 {
		st.budget = j.IOSize * int64(j.Loops)
	}
	if j.Verify != "" && (j.DoVerify || j.trimVerify()) && j.writes() {
		// Room for every write the verify reads back, made now: grown
		// while the clock runs, the list allocates megabytes and brings
		// the garbage collector into the timed phase, whose pauses hold
		// up the whole queue (the writes' p99.9).
		st.written = make([]extent, 0, min(st.budget/max(j.minBS(), 1), maxVerifyExtents))
	}
}

// setBlocks sets up the random offsets over the smallest file range.
func (st *stream) setBlocks() error {
	j := st.job
	span := st.files[0].hi - st.files[0].lo
	for _, f := range st.files {
		span = min(span, f.hi-f.lo)
	}
	if span < j.minBS() && j.RW.Random() && j.Kind == KindBlock {
		return fmt.Errorf("%w: job %q: the I/O range (%d bytes) is smaller than the block size %d", ErrTarget, j.Name, span, j.minBS())
	}
	st.units = max(uint64(span/st.align), 1)
	d := j.Distribution
	if d.Kind == Sequence {
		d = Distribution{}
	}
	st.blocks = newBlockPicker(d, st.units, st.rng)
	if d.Kind == Uniform && (j.LFSR || j.RandomMap) {
		// a permutation of the blocks: LFSR, SPRandom, or a random map
		// too large to keep
		st.blocks.mult = scatterMult % st.blocks.n
		if st.blocks.mult == 0 {
			st.blocks.mult = 1
		}
		st.blocks.off = st.rng.Uint64N(st.blocks.n)
	}
	if need := st.units * uint64(len(st.files)); j.Distribution.Kind == Uniform && j.RandomMap && !j.LFSR && j.RW.Random() &&
		need <= maxRandMapBlocks && st.g.mapBlocks.Add(need) <= maxGroupRandMapBlocks {
		for _, f := range st.files {
			f.used = newRandMap(st.units)
		}
	}
	if j.SPRandom {
		var err error
		if st.spr, err = newSPRandom(j, span, j.BSW, st.rng); err != nil {
			return fmt.Errorf("%w: job %q: %w", ErrJob, j.Name, err)
		}
		// fio's io_size under sprandom: the physical capacity
		st.budget = sprPhysical(j.SPROP, span, j.BSW) * int64(j.Loops)
	}
	return nil
}

// layout lays out one file of an instance and returns its range: a
// device name (/dev/sdb) is the target's whole address space where the
// target is one device (elsewhere a file of the job's size), sizes and
// offsets in percent are of that space or file.
func (st *stream) layout(t Target, name string, inst int, laid map[string]laidOut) (*fileState, error) {
	j := st.job
	if fm, ok := unwrapTarget(t).(fileMaker); ok && j.NoCreateFsync {
		fm.setCreateFsync(false)
		defer fm.setCreateFsync(true)
	}
	fill := j.reads() || j.Verify != "" && !j.writes()
	fsz := j.FileSize
	if j.FileSizeMax > j.FileSize {
		steps := (j.FileSizeMax - j.FileSize) / st.align
		fsz += st.rng.Int64N(steps+1) * st.align
	}
	off := j.Offset + int64(inst)*j.OffsetIncrement
	pct := j.SizePct > 0 || j.OffsetPct > 0
	whole := j.DeviceName != "" || fsz == 0 || j.FillDevice
	real := fsz // what percentages are of: the file's size, or the device's
	if whole {
		var err error
		real, err = t.Layout(name, 0, fill && fsz == 0)
		if err != nil {
			if !errors.Is(err, ErrJob) || fsz == 0 {
				if pct || j.FillDevice {
					return nil, fmt.Errorf("%w: %s: job %q: a size or offset in percent, or fill_device, needs filesize= or a target that is one device or file", ErrJob, j.Pos, j.Name)
				}
				return nil, fmt.Errorf("job %q: %w", j.Name, err)
			}
			whole, real = false, fsz // a directory target: the device becomes a file of the job's size
		}
	}
	if fm, ok := unwrapTarget(t).(fileMaker); ok && j.NoFileCreate && !whole {
		there, err := fm.exists(name)
		if err != nil {
			return nil, fmt.Errorf("%w: job %q: %w", ErrTarget, j.Name, err)
		}
		if !there {
			return nil, fmt.Errorf("%w: %s: job %q: %s does not exist, and allow_file_create=0 forbids creating it", ErrTarget, j.Pos, j.Name, name)
		}
	}
	if j.OffsetPct > 0 {
		off = int64(float64(real)*j.OffsetPct/100)/st.align*st.align + int64(inst)*j.OffsetIncrement
	}
	switch {
	case j.SizePct > 0:
		fsz = int64(float64(real) * j.SizePct / 100)
	case whole && (j.FillDevice || fsz == 0):
		fsz = real - off
	}
	if whole {
		hi := min(off+fsz, real)
		if hi-off <= 0 {
			return nil, fmt.Errorf("%w: %s: job %q: %s has %d bytes, no room after offset %d", ErrTarget, j.Pos, j.Name, name, real, off)
		}
		if fill && !j.FillDevice {
			if _, err := t.Layout(name, 0, true); err != nil {
				return nil, fmt.Errorf("job %q: %w", j.Name, err)
			}
		}
		return &fileState{name: name, lo: off, hi: hi, pos: off}, nil
	}
	if pct && off+fsz > real {
		return nil, fmt.Errorf("%w: job %q: offset %d and size %d pass the end of %s (%d bytes)", ErrJob, j.Name, off, fsz, name, real)
	}
	size := fsz + off
	if pct {
		size = real
	}
	if rl, ok := unwrapTarget(t).(RangeLayouter); ok && j.DeviceName != "" && !pct && off > 0 {
		// a device stands in as a sparse file: only the job's range is laid out
		if err := rl.LayoutRange(name, off, size, fill, j.Fallocate); err != nil {
			return nil, fmt.Errorf("job %q: %w", j.Name, err)
		}
		return &fileState{name: name, lo: off, hi: size, pos: off}, nil
	}
	switch got, ok := laid[name]; {
	case j.FileByFile && st.readPct == 0: // uploads create their files in the timed phase
		if err := st.reserve(t, name, size); err != nil {
			return nil, fmt.Errorf("job %q: %w", j.Name, err)
		}
	case ok && got.size >= size && size > 0 && (got.fill || !fill): // another job of the group laid it out
		size = got.size
	default:
		var err error
		valid := false
		if v, ok := t.(ValidDataLayouter); ok && j.ValidData && fill {
			var got int64
			if got, valid, err = v.LayoutValid(name, size); err != nil {
				return nil, fmt.Errorf("job %q: %w", j.Name, err)
			}
			if valid {
				size = got
			}
		}
		if !valid {
			if size, err = layout(t, name, size, fill, j.Fallocate); err != nil {
				return nil, fmt.Errorf("job %q: %w", j.Name, err)
			}
		}
		laid[name] = laidOut{size, fill}
	}
	if size <= off {
		return nil, fmt.Errorf("%w: job %q: file %s has %d bytes, no room after offset %d", ErrTarget, j.Name, name, size, off)
	}
	return &fileState{name: name, lo: off, hi: min(size, off+fsz), pos: off}, nil
}

// reserve promises the free space of a file that an upload creates in
// the timed phase, where the target checks free space before writing, so
// that an upload that cannot fit fails before it writes anything.
func (st *stream) reserve(t Target, name string, size int64) error {
	r, ok := unwrapTarget(t).(spaceReserver)
	if _, done := st.g.promised[name]; !ok || done {
		return nil
	}
	n, err := r.reserveFile(name, size)
	if err != nil {
		return err
	}
	st.g.promised[name] = n
	return nil
}

// maxIOSize is the largest I/O a job issues.
func maxIOSize(j *Job) int64 {
	n := max(j.BS, j.BSW, j.BST, j.BSMax[0], j.BSMax[1], j.BSMax[2])
	for _, split := range [][]BSSplit{j.BSSplit, j.BSSplitW, j.BSSplitT} {
		for _, s := range split {
			n = max(n, s.Size)
		}
	}
	return n
}

// alignedBuffer returns n bytes of random data aligned for O_DIRECT.
func alignedBuffer(n int64, rng *rand.Rand) []byte {
	const align = 4096
	b := make([]byte, n+align)
	skip := (align - int(uintptr(unsafe.Pointer(&b[0]))%align)) % align
	b = b[skip : skip+int(n) : skip+int(n)]
	fillRandom(b, rng)
	return b
}

// fillRandom fills b with random bytes.
func fillRandom(b []byte, rng *rand.Rand) {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		v := rng.Uint64()
		for k := range 8 {
			b[i+k] = byte(v >> (8 * k))
		}
	}
	for v := rng.Uint64(); i < len(b); i, v = i+1, v>>8 {
		b[i] = byte(v)
	}
}
