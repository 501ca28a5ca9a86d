package bench

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/nasemu/nasemu/models"
)

// Options control a run.
type Options struct {
	// Seed seeds every job instance's offsets and mixes (unless the job
	// sets randseed); with a simulated target the same seed gives the same
	// report.
	Seed uint64
	// Suite names the suite the jobs come from, for the report.
	Suite string
}

// Run runs jobs against t and returns the report. Jobs run in groups:
// a job with Stonewall (and the first job) starts a group; the jobs of a
// group run at the same time, groups one after another. When a group fails
// (a server that goes away mid-run), Run returns the report of the groups
// that finished together with the error.
func Run(t Target, jobs []Job, opt Options) (*Report, error) {
	jobs = append([]Job(nil), jobs...)
	for i := range jobs {
		jobs[i].EnsureDefaults()
		if err := jobs[i].Validate(); err != nil {
			return nil, err
		}
	}
	rep := &Report{Target: t.Name(), Mode: t.Mode(), Suite: opt.Suite, Device: DeviceCounters{Source: "none"}}
	if d, ok := t.(Describer); ok {
		rep.Description = d.Description()
	}
	genesis := time.Duration(-1) // when the first group's clock started
	for lo := 0; lo < len(jobs); {
		hi := lo + 1
		for hi < len(jobs) && !jobs[hi].Stonewall {
			hi++
		}
		res, err := runGroup(t, jobs[lo:hi], lo, opt.Seed, &genesis)
		if err != nil {
			if cs, ok := t.(CounterSource); ok {
				rep.Device = cs.DeviceCounters()
			}
			return rep, err
		}
		rep.Results = append(rep.Results, res...)
		lo = hi
	}
	if cs, ok := t.(CounterSource); ok {
		rep.Device = cs.DeviceCounters()
	}
	return rep, nil
}

// jobRun is the shared state of one job's instances: its statistics and,
// on the wall clock, the lock that orders its instances' bookkeeping.
type jobRun struct {
	job *Job
	mu  sync.Mutex
	col *collector
}

// opKind is what a slot does next.
type opKind uint8

const (
	opRead opKind = iota
	opWrite
	opFlush
	opOpen  // open (or create) the current file: file-by-file jobs
	opClose // close it
)

// op is one operation a slot performs.
type op struct {
	kind    opKind
	file    *fileState
	off, n  int64
	arrival time.Duration // intended issue time of rate-limited jobs, else -1
}

// fileState is one file of a job instance.
type fileState struct {
	name   string
	lo, hi int64 // the I/O range within the file
	f      File
	pos    int64 // next sequential offset (or bytes issued, file by file)
}

// stream is one instance of a job ("job N of numjobs"): its files,
// random source and progress. All of its slots share it.
type stream struct {
	jr     *jobRun
	job    *Job
	t      Target
	failed *atomic.Bool
	rng    *rand.Rand
	blocks *blockPicker
	sizes  *sizePicker

	files []*fileState
	cur   int

	budget   int64 // bytes left to issue; <0: unlimited (time based)
	passes   int   // file-by-file passes left
	readPct  int
	start    time.Duration
	measure  time.Duration // completions from here on count
	deadline time.Duration // no new I/O from here on; 0: none
	arrival  time.Duration // next open-loop arrival
	interval float64       // mean open-loop gap in ns

	writes       int        // since the last fsync
	lastWritten  *fileState // what a pending fsync flushes
	flushPending bool
	ending       bool // the job's I/O is done; end_fsync may follow
	endSync      int  // files flushed at the end so far
	inflight     int
	err          error
}

// slot is one outstanding-I/O position of a stream (iodepth of them).
type slot struct {
	st   *stream
	op   op
	at   time.Duration // when the current operation was issued
	busy bool          // an operation is outstanding (virtual clock)
	buf  []byte        // real targets only
}

// next decides the slot's next operation, given that the slot became free
// at now. It returns the time to issue it and false when the slot retires.
func (st *stream) next(sl *slot, now time.Duration) (time.Duration, bool) {
	if st.err != nil || st.failed.Load() {
		return 0, false
	}
	at := max(now, st.start)
	j := st.job
	if st.deadline > 0 && at >= st.deadline {
		st.ending = true
	}
	o := op{arrival: -1}
	switch {
	case st.ending || (st.budget == 0 && !j.FileByFile):
		st.ending = true
		if !j.EndFsync || st.inflight > 0 || st.endSync >= len(st.files) {
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
	default:
		st.nextIO(&o)
	}
	if o.kind <= opWrite && j.RateIOPS > 0 {
		if st.deadline > 0 && st.arrival >= st.deadline { // the next arrival is too late
			st.ending = true
			return st.next(sl, now)
		}
		o.arrival = st.arrival
		at = max(at, st.arrival)
		gap := st.interval
		if j.Poisson {
			gap = st.rng.ExpFloat64() * st.interval
		}
		st.arrival += time.Duration(gap)
	}
	sl.op = o
	st.inflight++
	return at, true
}

// nextIO picks a block I/O of an ordinary (all files open) job.
func (st *stream) nextIO(o *op) {
	j := st.job
	f := st.files[st.cur]
	if len(st.files) > 1 {
		st.cur = (st.cur + 1) % len(st.files)
	}
	o.kind, o.file = opRead, f
	if st.readPct < 100 && (st.readPct == 0 || st.rng.IntN(100) >= st.readPct) {
		o.kind = opWrite
	}
	n := j.BS
	if st.sizes != nil {
		n = st.sizes.pick(st.rng)
	}
	if j.RW.Random() {
		o.off = f.lo + int64(st.blocks.pick(st.rng))*j.BS
	} else {
		if f.pos >= f.hi {
			f.pos = f.lo
		}
		o.off = f.pos
	}
	n = min(n, f.hi-o.off)
	if !j.RW.Random() {
		f.pos = o.off + n
	}
	if st.budget > 0 {
		n = min(n, st.budget)
		st.budget -= n
	}
	o.n = n
	if o.kind == opWrite && j.Fsync > 0 {
		st.lastWritten = f
		if st.writes++; st.writes >= j.Fsync {
			st.writes, st.flushPending = 0, true
		}
	}
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
		o.kind, o.off = opRead, f.pos
		if st.readPct == 0 {
			o.kind = opWrite
		}
		o.n = min(j.BS, f.hi-f.pos)
		f.pos += o.n
	default:
		o.kind = opClose
	}
	return true
}

// do performs the slot's operation issued at at.
func (st *stream) do(sl *slot, at time.Duration) (time.Duration, error) {
	o := &sl.op
	switch o.kind {
	case opRead, opWrite:
		mop := models.Read
		if o.kind == opWrite {
			mop = models.Write
		}
		var buf []byte
		if sl.buf != nil {
			buf = sl.buf[:o.n]
		}
		return o.file.f.Do(at, mop, o.off, o.n, buf)
	case opFlush:
		return o.file.f.Do(at, models.Flush, 0, 0, nil)
	case opOpen:
		f, done, err := st.t.Open(at, o.file.name, o.file.hi, OpenFlags{Write: st.readPct < 100, Create: st.readPct == 0, Direct: st.job.Direct, WriteThrough: st.job.WriteThrough})
		o.file.f = f
		return done, err
	default: // opClose
		done, err := o.file.f.Close(at)
		o.file.f = nil
		return done, err
	}
}

// complete accounts for the slot's operation, which finished at done.
func (st *stream) complete(sl *slot, done time.Duration, err error) {
	st.inflight--
	if err != nil {
		if st.err == nil {
			st.err = fmt.Errorf("job %q: %v: %w", st.job.Name, sl.op.kind, err)
		}
		st.failed.Store(true)
		return
	}
	o := &sl.op
	if o.kind == opClose {
		st.cur++
	}
	// The window is (measure, end]: what completes at the ramp's last
	// instant belongs to the ramp (without a ramp, nothing precedes it).
	if done < st.measure || (done == st.measure && st.job.RampTime > 0) {
		return
	}
	c := st.jr.col
	switch o.kind {
	case opRead, opWrite:
		origin := sl.at
		if o.arrival >= 0 {
			origin = o.arrival
		}
		c.record(done-origin, o.n, done)
	case opClose:
		c.file(done)
	default:
		c.end = max(c.end, done)
	}
}

// String names an operation kind in error messages.
func (k opKind) String() string {
	return [...]string{"read", "write", "fsync", "open", "close"}[k]
}

// runGroup runs a group of jobs at the same time and returns their results.
// genesis is when the run's first group started (-1 before it has).
func runGroup(t Target, jobs []Job, firstIndex int, seed uint64, genesis *time.Duration) ([]Result, error) {
	clock := t.Clock()
	var failed atomic.Bool
	var streams []*stream
	var runs []*jobRun
	laid := map[string]laidOut{}
	for ji := range jobs {
		j := &jobs[ji]
		jr := &jobRun{job: j}
		runs = append(runs, jr)
		for inst := range j.NumJobs {
			st, err := newStream(t, jr, inst, laid, mix(seed, uint64(firstIndex+ji)), &failed)
			if err != nil {
				return nil, err
			}
			streams = append(streams, st)
		}
	}
	// Open the files of ordinary jobs before the clock starts.
	var opened time.Duration
	for _, st := range streams {
		if st.job.FileByFile {
			continue
		}
		for _, f := range st.files {
			fl, done, err := t.Open(clock.Now(), f.name, f.hi, OpenFlags{Write: st.job.writes(), Direct: st.job.Direct, WriteThrough: st.job.WriteThrough})
			if err != nil {
				return nil, fmt.Errorf("job %q: %w", st.job.Name, err)
			}
			f.f, opened = fl, max(opened, done)
		}
	}
	clock.Wait(opened)
	start := clock.Now()
	if *genesis < 0 {
		*genesis = start
	}
	var slots []*slot
	for _, st := range streams {
		j := st.job
		st.start = j.startAt(start, *genesis)
		st.measure = st.start + j.RampTime
		st.arrival = st.start
		if j.Runtime > 0 {
			st.deadline = st.measure + j.Runtime
		}
		for range j.IODepth {
			sl := &slot{st: st}
			if t.Mode() == Real {
				sl.buf = alignedBuffer(maxIOSize(j), st.rng)
			}
			slots = append(slots, sl)
		}
	}
	for _, jr := range runs {
		jr.col = newCollector(jr.job.startAt(start, *genesis) + jr.job.RampTime)
	}
	clock.drive(slots)
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
		if !st.job.Unlink {
			continue
		}
		for _, f := range st.files {
			if removed[f.name] {
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
	for i, jr := range runs {
		res[i] = jr.col.result(jr.job)
	}
	return res, nil
}

// laidOut records a file laid out for a group's jobs.
type laidOut struct {
	size int64
	fill bool
}

// newStream lays out instance inst's files and sets up its generators.
func newStream(t Target, jr *jobRun, inst int, laid map[string]laidOut, seed uint64, failed *atomic.Bool) (*stream, error) {
	j := jr.job
	if j.RandSeed != 0 {
		seed = j.RandSeed
	}
	st := &stream{jr: jr, job: j, t: t, failed: failed, rng: rand.New(rand.NewPCG(seed, uint64(inst))),
		sizes: newSizePicker(j.BSSplit), readPct: j.RW.readPct(j.RWMixRead), passes: j.Loops, budget: -1}
	if j.RateIOPS > 0 {
		st.interval = float64(time.Second) / float64(j.RateIOPS)
	}
	var total int64
	for _, name := range j.files(inst) {
		size := j.FileSize
		if size > 0 {
			size += j.Offset
		}
		if size == 0 && j.FileByFile {
			return nil, fmt.Errorf("%w: %s: job %q: file by file needs filesize or size", ErrJob, j.Pos, j.Name)
		}
		switch got, ok := laid[name]; {
		case j.FileByFile && st.readPct == 0: // uploads create their files in the timed phase
		case ok && got.size >= size && size > 0 && (got.fill || !j.reads()): // another job of the group laid it out
		default:
			var err error
			valid := false
			if v, ok := t.(ValidDataLayouter); ok && j.ValidData && j.reads() {
				var got int64
				if got, valid, err = v.LayoutValid(name, size); err != nil {
					return nil, fmt.Errorf("job %q: %w", j.Name, err)
				}
				if valid {
					size = got
				}
			}
			if !valid {
				if size, err = t.Layout(name, size, j.reads()); err != nil {
					return nil, fmt.Errorf("job %q: %w", j.Name, err)
				}
			}
			laid[name] = laidOut{size, j.reads()}
		}
		if size <= j.Offset {
			return nil, fmt.Errorf("%w: job %q: file %s has %d bytes, no room after offset %d", ErrTarget, j.Name, name, size, j.Offset)
		}
		st.files = append(st.files, &fileState{name: name, lo: j.Offset, hi: size, pos: j.Offset})
		total += size - j.Offset
	}
	if !j.TimeBased {
		st.budget = total * int64(j.Loops)
		if j.Size > 0 {
			st.budget = min(st.budget, j.Size*int64(j.Loops))
		}
	}
	if j.RW.Random() {
		span := st.files[0].hi - st.files[0].lo
		for _, f := range st.files {
			span = min(span, f.hi-f.lo)
		}
		if span < j.BS {
			return nil, fmt.Errorf("%w: job %q: the I/O range (%d bytes) is smaller than bs=%d", ErrTarget, j.Name, span, j.BS)
		}
		st.blocks = newBlockPicker(j.Distribution, uint64(span/j.BS), st.rng)
	}
	return st, nil
}

// maxIOSize is the largest I/O a job issues.
func maxIOSize(j *Job) int64 {
	n := j.BS
	for _, s := range j.BSSplit {
		n = max(n, s.Size)
	}
	return n
}

// alignedBuffer returns n bytes of random data aligned for O_DIRECT.
func alignedBuffer(n int64, rng *rand.Rand) []byte {
	const align = 4096
	b := make([]byte, n+align)
	skip := (align - int(uintptr(unsafe.Pointer(&b[0]))%align)) % align
	b = b[skip : skip+int(n) : skip+int(n)]
	for i := 0; i+8 <= len(b); i += 8 {
		v := rng.Uint64()
		for k := range 8 {
			b[i+k] = byte(v >> (8 * k))
		}
	}
	return b
}
