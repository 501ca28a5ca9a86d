// Package devicetest is the conformance kit that every models.Device runs:
// a drive, an array, a cache tier, a NAS controller, a protocol stack, a
// wrapper. Each model package calls Run from its tests with a constructor,
// as restic's backend suite or go-fuse's posixtest are run against every
// backend and filesystem.
//
// # What the kit checks
//
//   - Completion never comes before submission, whatever the order in
//     which submission times arrive (composite devices book parts ahead
//     and submit parts late).
//   - The same seed gives the same answers: two devices built alike and
//     driven alike, even interleaved, answer bit for bit alike, so no
//     state is shared between instances.
//   - Observation changes nothing: reading every counter of the stack and
//     giving Prefetch hints between requests leaves every answer as it was.
//   - Range and capacity: the last byte is addressable; a request past
//     the capacity, at a negative offset or overflowing fails with
//     models.ErrOutOfRange, a negative length or unknown op with
//     models.ErrInvalid; a rejected request changes no state.
//   - Queue depth: random reads never lose much throughput when more are
//     queued, and a device that claims parallelism gains from it.
//   - Counters agree with the requests served (reads, writes,
//     host_bytes_read, host_bytes_written where the device reports them),
//     and those never decrease.
//   - Flush and Trim: valid at any range for Flush; a second flush with
//     nothing new to make durable costs no more than the first; trims in
//     range succeed, past the end fail; reads of trimmed ranges succeed.
//   - File operations complete at once on a block device and cost time
//     without failing on a filesystem or protocol layer.
//   - Submit allocates nothing once the device is warm.
package devicetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
)

// Config says how to build the device under test and what it claims.
type Config struct {
	// New returns a fresh device built with seed. Devices built with the
	// same seed must answer the same requests identically.
	New func(t testing.TB, seed uint64) models.Device
	// Parallel: the device serves several requests at once (dies,
	// members, units, command queueing), so random reads at a queue of
	// 16 must reach at least 1.5 times the throughput of a queue of 1.
	Parallel bool
	// FileOps: the device charges file operations (a filesystem or file
	// protocol layer). A block device completes them at submission.
	FileOps bool
	// Requests is the length of the traces (0: 2000). Large devices
	// whose requests are expensive to compute may ask for fewer.
	Requests int
}

// Built adapts a constructor that can fail (a setup's Build) to
// Config.New: the test fails where it does.
func Built[D models.Device](build func(seed uint64) (D, error)) func(testing.TB, uint64) models.Device {
	return func(t testing.TB, seed uint64) models.Device {
		d, err := build(seed)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
}

// Run runs every check of the kit on devices made by cfg.New, each in a
// subtest of its own on fresh devices.
func Run(t *testing.T, cfg Config) {
	t.Helper()
	if cfg.New == nil {
		t.Fatal("devicetest: Config.New is nil")
	}
	if cfg.Requests == 0 {
		cfg.Requests = 2000
	}
	tests := []struct {
		name string
		fn   func(*testing.T, Config)
	}{
		{"NotBeforeSubmission", testNotBeforeSubmission},
		{"Deterministic", testDeterministic},
		{"ObservationChangesNothing", testObservation},
		{"Range", testRange},
		{"RejectedChangesNothing", testRejected},
		{"QueueDepth", testQueueDepth},
		{"Counters", testCounters},
		{"Flush", testFlush},
		{"Trim", testTrim},
		{"FileOps", testFileOps},
		{"Allocs", testAllocs},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, cfg) })
	}
}

// answer is what one Submit returned.
type answer struct {
	done time.Duration
	err  string
}

// step is one submission of a trace.
type step struct {
	at time.Duration
	r  models.Request
}

// tracer makes the kit's traces over a device of capacity capa: a closed
// loop of 16 slots of random and sequential reads and writes (4 KiB to
// 256 KiB), flushes, trims, zero-length requests and file ops, a tenth of
// them booked ahead of their slot and a tenth submitted late (before
// earlier arrivals), as a composite device submits its parts. Each
// submission's time depends on the answers before it (done).
type tracer struct {
	rng   *rand.Rand
	capa  int64
	slots [16]time.Duration
	seq   int64
}

func newTracer(seed uint64, capa int64) *tracer {
	return &tracer{rng: rand.New(rand.NewPCG(seed, 0x6465766963657465)), capa: capa}
}

// next returns the slot and the next submission.
func (tr *tracer) next() (int, step) {
	rng := tr.rng
	j := rng.IntN(len(tr.slots))
	at := tr.slots[j]
	switch rng.IntN(10) {
	case 0: // a part booked ahead
		at += time.Duration(rng.IntN(20_000_000))
	case 1: // a part submitted late, before earlier arrivals
		at = max(at-time.Duration(rng.IntN(3_000_000)), 0)
	}
	blocks := tr.capa / 4096
	var r models.Request
	switch k := rng.IntN(100); {
	case k < 40:
		r = models.Request{Op: models.Read, Offset: rng.Int64N(blocks) * 4096, Length: 4096 << rng.IntN(3)}
	case k < 70:
		r = models.Request{Op: models.Write, Offset: rng.Int64N(blocks) * 4096, Length: 4096 << rng.IntN(3)}
	case k < 90:
		r = models.Request{Op: models.Read, Offset: tr.seq, Length: 64 << 10 << rng.IntN(3)}
		if k >= 80 {
			r.Op = models.Write
		}
	case k < 93:
		r = models.Request{Op: models.Flush}
	case k < 96:
		r = models.Request{Op: models.Trim, Offset: rng.Int64N(blocks) * 4096, Length: 4096 << rng.IntN(5)}
	case k < 98:
		r = models.Request{Op: models.Read, Offset: rng.Int64N(blocks) * 4096}
	default:
		r = models.Request{Op: models.Open + models.Op(rng.IntN(int(models.Stat-models.Open)+1))}
	}
	if r.End() > tr.capa {
		r.Offset = tr.capa - r.Length
	}
	if r.Op == models.Read || r.Op == models.Write {
		if r.Offset == tr.seq {
			tr.seq = r.End() % (tr.capa - 256<<10)
		}
	}
	if rng.IntN(3) == 0 {
		r.Flow = rng.IntN(4)
	}
	return j, step{at, r}
}

// done records a completion in slot j.
func (tr *tracer) done(j int, d time.Duration) { tr.slots[j] = max(tr.slots[j], d) }

// play drives d with n submissions of the trace of seed and returns the
// answers. between, when not nil, runs after every submission.
func play(d models.Device, seed uint64, n int, between func(i int, s step)) ([]step, []answer) {
	tr := newTracer(seed, d.Capacity())
	steps := make([]step, 0, n)
	out := make([]answer, 0, n)
	for i := range n {
		j, s := tr.next()
		done, err := d.Submit(s.at, s.r)
		a := answer{done: done}
		if err != nil {
			a.err = err.Error()
		} else {
			tr.done(j, done)
		}
		steps = append(steps, s)
		out = append(out, a)
		if between != nil {
			between(i, s)
		}
	}
	return steps, out
}

// counters returns every counter of the stack below d, prefixed by depth
// and index so that equal names of different devices stay apart.
func counters(d models.Device) []string {
	var out []string
	n := 0
	models.Walk(d, func(dev models.Device, depth int) {
		n++
		if o, ok := dev.(models.Observer); ok {
			for _, c := range o.Counters() {
				out = append(out, fmt.Sprintf("%d/%d %s=%v", depth, n, c.Name, c.Value))
			}
		}
	})
	return out
}

func newDevice(t *testing.T, cfg Config, seed uint64) models.Device {
	t.Helper()
	d := cfg.New(t, seed)
	if d == nil {
		t.Fatal("devicetest: New returned nil")
	}
	if c := d.Capacity(); c < 1<<20 {
		t.Fatalf("capacity %d: the kit needs a device of at least 1 MiB", c)
	}
	return d
}

func testNotBeforeSubmission(t *testing.T, cfg Config) {
	d := newDevice(t, cfg, 1)
	steps, answers := play(d, 1, cfg.Requests, nil)
	bad := 0
	for i, a := range answers {
		if a.err != "" {
			t.Errorf("request %d %v at %v: %s", i, steps[i].r, steps[i].at, a.err)
			bad++
		} else if a.done < steps[i].at {
			t.Errorf("request %d %v submitted at %v completes at %v, before its submission", i, steps[i].r, steps[i].at, a.done)
			bad++
		}
		if bad > 5 {
			t.Fatal("too many failures")
		}
	}
}

func compare(t *testing.T, what string, steps []step, a, b []answer) {
	t.Helper()
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("%s: request %d %v at %v: %v, %q, then %v, %q", what, i, steps[i].r, steps[i].at, a[i].done, a[i].err, b[i].done, b[i].err)
		}
	}
}

func compareCounters(t *testing.T, what string, a, b models.Device) {
	t.Helper()
	ca, cb := counters(a), counters(b)
	if len(ca) != len(cb) {
		t.Fatalf("%s: %d counters, then %d", what, len(ca), len(cb))
	}
	for i := range ca {
		if ca[i] != cb[i] {
			t.Errorf("%s: counter %s, then %s", what, ca[i], cb[i])
		}
	}
}

// testDeterministic plays one trace on two devices of one seed, first one
// after the other and then on two more interleaved request by request (a
// state shared between instances shows there).
func testDeterministic(t *testing.T, cfg Config) {
	n := cfg.Requests
	a := newDevice(t, cfg, 7)
	steps, first := play(a, 3, n, nil)
	b := newDevice(t, cfg, 7)
	_, second := play(b, 3, n, nil)
	compare(t, "same seed, played again", steps, first, second)
	compareCounters(t, "same seed, played again", a, b)

	c, e := newDevice(t, cfg, 7), newDevice(t, cfg, 7)
	tc, te := newTracer(3, c.Capacity()), newTracer(3, e.Capacity())
	for i := range n {
		j, s := tc.next()
		_, s2 := te.next()
		dc, errc := c.Submit(s.at, s.r)
		de, erre := e.Submit(s2.at, s2.r)
		if s != s2 || dc != de || fmt.Sprint(errc) != fmt.Sprint(erre) || dc != first[i].done {
			t.Fatalf("interleaved devices: request %d %v at %v: %v, %v and %v, %v; alone %v", i, s.r, s.at, dc, errc, de, erre, first[i].done)
		}
		if errc == nil {
			tc.done(j, dc)
			te.done(j, de)
		}
	}
}

// testObservation plays a trace plain and again with every counter of the
// stack read and a Prefetch hint given between requests.
func testObservation(t *testing.T, cfg Config) {
	n := cfg.Requests
	steps, plain := play(newDevice(t, cfg, 2), 5, n, nil)
	d := newDevice(t, cfg, 2)
	rng := rand.New(rand.NewPCG(9, 9))
	_, watched := play(d, 5, n, func(i int, s step) {
		counters(d)
		models.Walk(d, func(dev models.Device, _ int) {
			if p, ok := dev.(models.Prefetcher); ok {
				p.Prefetch(models.Request{Op: models.Read, Offset: rng.Int64N(dev.Capacity()/4096) * 4096, Length: 4096})
			}
		})
	})
	compare(t, "observed", steps, plain, watched)
}

func wantErr(t *testing.T, d models.Device, at time.Duration, r models.Request, want error) {
	t.Helper()
	if _, err := d.Submit(at, r); !errors.Is(err, want) {
		t.Errorf("%v: error %v, want %v", r, err, want)
	}
}

func testRange(t *testing.T, cfg Config) {
	d := newDevice(t, cfg, 1)
	capa := d.Capacity()
	at := time.Millisecond
	for _, r := range []models.Request{
		{Op: models.Read, Offset: capa - 4096, Length: 4096},
		{Op: models.Write, Offset: capa - 4096, Length: 4096},
		{Op: models.Read, Offset: 0, Length: 4096},
		{Op: models.Read, Offset: capa, Length: 0},
		{Op: models.Trim, Offset: 0, Length: capa},
	} {
		done, err := d.Submit(at, r)
		if err != nil {
			t.Errorf("%v on a device of %d bytes: %v", r, capa, err)
		} else if done < at {
			t.Errorf("%v at %v completes at %v", r, at, done)
		}
	}
	for _, r := range []models.Request{
		{Op: models.Read, Offset: capa - 2048, Length: 4096},
		{Op: models.Write, Offset: capa, Length: 4096},
		{Op: models.Write, Offset: capa + 1<<40, Length: 4096},
		{Op: models.Read, Offset: -4096, Length: 4096},
		{Op: models.Write, Offset: 4096, Length: 1<<63 - 1},
		{Op: models.Trim, Offset: capa - 4096, Length: 8192},
	} {
		wantErr(t, d, at, r, models.ErrOutOfRange)
	}
	wantErr(t, d, at, models.Request{Op: models.Read, Offset: 0, Length: -1}, models.ErrInvalid)
	wantErr(t, d, at, models.Request{Op: models.Op(200), Offset: 0, Length: 4096}, models.ErrInvalid)
	// Still serving.
	if _, err := d.Submit(at, models.Request{Op: models.Read, Offset: 8192, Length: 4096}); err != nil {
		t.Errorf("a valid read after rejected requests: %v", err)
	}
}

// testRejected plays a trace and the same trace with invalid requests
// between its requests: the valid ones must be answered alike.
func testRejected(t *testing.T, cfg Config) {
	n := cfg.Requests
	steps, plain := play(newDevice(t, cfg, 4), 6, n, nil)
	d := newDevice(t, cfg, 4)
	capa := d.Capacity()
	_, spoiled := play(d, 6, n, func(i int, s step) {
		var r models.Request
		switch i % 4 {
		case 0:
			r = models.Request{Op: models.Read, Offset: capa - 512, Length: 4096}
		case 1:
			r = models.Request{Op: models.Write, Offset: capa, Length: 65536}
		case 2:
			r = models.Request{Op: models.Write, Offset: -65536, Length: 65536}
		default:
			r = models.Request{Op: models.Trim, Offset: 0, Length: -1}
		}
		if _, err := d.Submit(s.at, r); err == nil {
			t.Fatalf("%v accepted on a device of %d bytes", r, capa)
		}
	})
	compare(t, "with rejected requests between", steps, plain, spoiled)
}

// Loop is the result of a closed-loop run.
type Loop struct {
	IOs     int
	Bytes   int64
	Elapsed time.Duration   // from the start to the last completion
	Done    []time.Duration // each request's completion, in issue order
}

// IOPS is the run's requests per second of simulated time.
func (l Loop) IOPS() float64 { return float64(l.IOs) / l.Elapsed.Seconds() }

// MBps is the run's 10^6 bytes per second of simulated time.
func (l Loop) MBps() float64 { return float64(l.Bytes) / l.Elapsed.Seconds() / 1e6 }

// Closed is a closed-loop run, as fio's iodepth drives a device: QD slots
// each issue their next request when their last one completes, from
// Start, for N requests. An error, or a completion before its submission,
// fails the test.
type Closed struct {
	Start time.Duration
	QD, N int
	// OwnThreads keeps the Request.Thread the generator set (0, one
	// client thread, unless it sets another). By default each slot is a
	// client thread of its own: what the loop measures is the device's
	// parallelism, not one thread's issue rate, which for a client on the
	// NAS itself is one call at a time (see models/nas).
	OwnThreads bool
}

// Run runs the loop against d; next(i) is the i-th request.
func (c Closed) Run(t testing.TB, d models.Device, next func(i int) models.Request) Loop {
	t.Helper()
	slots := make([]time.Duration, c.QD)
	for i := range slots {
		slots[i] = c.Start
	}
	l := Loop{Done: make([]time.Duration, c.N)}
	last := c.Start
	for i := range c.N {
		j := 0
		for k := range slots {
			if slots[k] < slots[j] {
				j = k
			}
		}
		r := next(i)
		if !c.OwnThreads {
			r.Thread = j
		}
		done, err := d.Submit(slots[j], r)
		if err != nil {
			t.Fatalf("request %d %v at %v: %v", i, r, slots[j], err)
		}
		if done < slots[j] {
			t.Fatalf("request %d %v at %v completes at %v, before its submission", i, r, slots[j], done)
		}
		slots[j], l.Done[i] = done, done
		last = max(last, done)
		l.IOs++
		l.Bytes += r.Length
	}
	l.Elapsed = last - c.Start
	return l
}

// ClosedLoop runs Closed{Start: start, QD: qd, N: n}: qd requests
// outstanding, each slot a client thread of its own.
func ClosedLoop(t testing.TB, d models.Device, start time.Duration, qd, n int, next func(i int) models.Request) Loop {
	t.Helper()
	return Closed{Start: start, QD: qd, N: n}.Run(t, d, next)
}

// RandomReads returns a generator of requests of bs bytes at random
// bs-aligned offsets below span, from a generator seeded with seed.
func RandomReads(seed uint64, bs, span int64) func(int) models.Request {
	rng := rand.New(rand.NewPCG(seed, 1))
	return func(int) models.Request {
		return models.Request{Op: models.Read, Offset: rng.Int64N(span/bs) * bs, Length: bs}
	}
}

// testQueueDepth runs random 4 KiB reads at growing queue depths on fresh
// devices: throughput never falls below 80% of the best of the lower
// depths, and a parallel device gains 1.5 times from 1 to 16.
func testQueueDepth(t *testing.T, cfg Config) {
	n := min(cfg.Requests, 1000)
	var best, qd1 float64
	bestQD := 0
	for _, qd := range []int{1, 2, 4, 8, 16, 32} {
		d := newDevice(t, cfg, 1)
		l := ClosedLoop(t, d, time.Second, qd, n, RandomReads(11, 4096, d.Capacity()))
		iops := l.IOPS()
		if l.Elapsed <= 0 {
			continue // a free device: no throughput to compare
		}
		t.Logf("QD%d: %.0f IOPS", qd, iops)
		if iops < 0.8*best {
			t.Errorf("QD%d: %.0f IOPS, below 80%% of QD%d's %.0f", qd, iops, bestQD, best)
		}
		if iops > best {
			best, bestQD = iops, qd
		}
		if qd == 1 {
			qd1 = iops
		}
		if qd == 16 && cfg.Parallel && iops < 1.5*qd1 {
			t.Errorf("a parallel device: QD16 %.0f IOPS, QD1 %.0f", iops, qd1)
		}
	}
}

// testCounters checks the counters that count the requests a device
// served, where it reports them, against the requests it accepted, and
// that they never decrease.
func testCounters(t *testing.T, cfg Config) {
	d := newDevice(t, cfg, 1)
	o, ok := d.(models.Observer)
	if !ok {
		t.Skip("the device reports no counters")
	}
	get := func() map[string]float64 {
		m := map[string]float64{}
		for _, c := range o.Counters() {
			if _, dup := m[c.Name]; dup {
				t.Fatalf("counter %s reported twice", c.Name)
			}
			m[c.Name] = c.Value
		}
		return m
	}
	var want struct{ reads, writes, bytesRead, bytesWritten float64 }
	prev := get()
	tr := newTracer(8, d.Capacity())
	for i := range cfg.Requests {
		j, s := tr.next()
		if s.r.Length == 0 && s.r.Op <= models.Write {
			continue // whether an empty request counts is the device's choice
		}
		done, err := d.Submit(s.at, s.r)
		if err != nil {
			t.Fatalf("request %d %v: %v", i, s.r, err)
		}
		tr.done(j, done)
		switch s.r.Op {
		case models.Read:
			want.reads++
			want.bytesRead += float64(s.r.Length)
		case models.Write:
			want.writes++
			want.bytesWritten += float64(s.r.Length)
		}
		now := get()
		for _, name := range monotone {
			if v, ok := now[name]; ok && v < prev[name] {
				t.Fatalf("request %d: counter %s fell from %v to %v", i, name, prev[name], v)
			}
		}
		prev = now
	}
	for name, w := range map[string]float64{
		"reads": want.reads, "writes": want.writes,
		"host_bytes_read": want.bytesRead, "host_bytes_written": want.bytesWritten,
	} {
		if v, ok := prev[name]; ok && v != w {
			t.Errorf("counter %s = %v after serving %v", name, v, w)
		}
	}
}

// monotone are counter names that count and so never decrease.
var monotone = []string{
	"reads", "writes", "flushes", "trims",
	"host_bytes_read", "host_bytes_written", "nand_bytes_written",
	"media_bytes_read", "media_bytes_written", "member_reads", "member_writes",
	"member_bytes_read", "member_bytes_written",
	"member_read_ns", "member_write_ns", "member_queue_ns",
}

// testFlush: a flush is valid whatever its range; after writes a flush
// completes no earlier than it was submitted, and a second flush with
// nothing new to make durable costs no more than the first.
func testFlush(t *testing.T, cfg Config) {
	d := newDevice(t, cfg, 1)
	capa := d.Capacity()
	l := ClosedLoop(t, d, 0, 8, 200, func(i int) models.Request {
		return models.Request{Op: models.Write, Offset: int64(i*7919%int(capa/65536)) * 65536, Length: 65536}
	})
	at := l.Elapsed
	f1, err := d.Submit(at, models.Request{Op: models.Flush, Offset: capa + 12345, Length: 99})
	if err != nil {
		t.Fatalf("flush with an arbitrary range: %v", err)
	}
	if f1 < at {
		t.Fatalf("flush at %v completes at %v", at, f1)
	}
	f2, err := d.Submit(f1, models.Request{Op: models.Flush})
	if err != nil {
		t.Fatal(err)
	}
	if f2 < f1 || f2-f1 > max(f1-at, time.Millisecond) {
		t.Errorf("a flush after a flush: %v, the first took %v", f2-f1, f1-at)
	}
}

func testTrim(t *testing.T, cfg Config) {
	d := newDevice(t, cfg, 1)
	capa := d.Capacity()
	at := time.Millisecond
	// Write a region, trim it in parts, read it back.
	for off := int64(0); off < 1<<20; off += 64 << 10 {
		done, err := d.Submit(at, models.Request{Op: models.Write, Offset: off, Length: 64 << 10})
		if err != nil {
			t.Fatal(err)
		}
		at = done
	}
	for _, r := range []models.Request{
		{Op: models.Trim, Offset: 0, Length: 4096},
		{Op: models.Trim, Offset: 4096, Length: 1<<20 - 4096},
		{Op: models.Trim, Offset: 1 << 19, Length: 0},
		{Op: models.Trim, Offset: capa - 8192, Length: 8192},
		{Op: models.Read, Offset: 0, Length: 1 << 20},
		{Op: models.Read, Offset: capa - 8192, Length: 8192},
	} {
		done, err := d.Submit(at, r)
		if err != nil {
			t.Fatalf("%v: %v", r, err)
		}
		if done < at {
			t.Fatalf("%v at %v completes at %v", r, at, done)
		}
		at = done
	}
	wantErr(t, d, at, models.Request{Op: models.Trim, Offset: capa, Length: 4096}, models.ErrOutOfRange)
}

func testFileOps(t *testing.T, cfg Config) {
	d := newDevice(t, cfg, 1)
	at := time.Second
	for op := models.Open; op <= models.Stat; op++ {
		done, err := d.Submit(at, models.Request{Op: op})
		if err != nil {
			t.Errorf("%v: %v", op, err)
			continue
		}
		if done < at || (!cfg.FileOps && done != at) {
			t.Errorf("%v at %v completes at %v on a %s", op, at, done, map[bool]string{false: "block device", true: "file layer"}[cfg.FileOps])
		}
		at = done
	}
}

// testAllocs: once warm, Submit of reads and writes allocates nothing.
func testAllocs(t *testing.T, cfg Config) {
	d := newDevice(t, cfg, 1)
	capa := d.Capacity()
	rng := rand.New(rand.NewPCG(3, 4))
	reqs := make([]models.Request, 4096)
	for i := range reqs {
		reqs[i] = models.Request{Op: models.Read, Offset: rng.Int64N(capa/65536) * 65536, Length: 4096 << rng.IntN(4)}
		if i%3 == 0 {
			reqs[i].Op = models.Write
		}
	}
	var slots [8]time.Duration // a queue of 8
	i := 0
	submit := func() {
		r, s := reqs[i%len(reqs)], &slots[i%len(slots)]
		i++
		done, err := d.Submit(*s, r)
		if err != nil {
			t.Fatalf("%v: %v", r, err)
		}
		*s = done
	}
	for range len(reqs) {
		submit()
	}
	if a := testing.AllocsPerRun(len(reqs), submit); a != 0 {
		t.Errorf("%v allocations per Submit", a)
	}
}
