package bench

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fixed"
)

// funcDevice is a hand-written fake: each behaviour is a function field.
type funcDevice struct {
	capacity int64
	submit   func(at time.Duration, r models.Request) (time.Duration, error)
	counters []models.Counter
}

func (d *funcDevice) Capacity() int64 { return d.capacity }
func (d *funcDevice) Submit(at time.Duration, r models.Request) (time.Duration, error) {
	if err := models.CheckRange(r, d.capacity); err != nil {
		return at, err
	}
	return d.submit(at, r)
}
func (d *funcDevice) Counters() []models.Counter { return d.counters }

// seekDevice is a fake whose service time grows with the distance from the
// previous request, so results depend on the offsets a seed produces.
func seekDevice(capacity int64) *funcDevice {
	var last int64
	var busy time.Duration
	return &funcDevice{capacity: capacity, submit: func(at time.Duration, r models.Request) (time.Duration, error) {
		if r.Op.IsFileOp() {
			return at, nil
		}
		d := r.Offset - last
		if d < 0 {
			d = -d
		}
		last = r.End()
		start := max(at, busy)
		busy = start + 50*time.Microsecond + time.Duration(d/(1<<20))*time.Microsecond
		return busy, nil
	}}
}

func fixedSim(t testing.TB, cfg fixed.Config) *Sim {
	t.Helper()
	d, err := fixed.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return NewSim("sim:fixed", SimSetup{Device: d})
}

func mustRun(t testing.TB, tg Target, jobs []Job, opt Options) *Report {
	t.Helper()
	rep, err := Run(tg, jobs, opt)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestLittlesLaw checks the virtual-time engine against queueing theory on
// a device of p units with a fixed service time s: with k requests
// outstanding, IOPS = min(k, p)/s and mean latency = k/IOPS (Little's
// law), which at QD1 is s exactly.
func TestLittlesLaw(t *testing.T) {
	const s = 100 * time.Microsecond
	for _, p := range []int{1, 4, 16} {
		for _, k := range []int{1, 2, 4, 8, 32} {
			t.Run(fmt.Sprintf("units=%d/qd=%d", p, k), func(t *testing.T) {
				tg := fixedSim(t, fixed.Config{Capacity: 1 << 30, Units: p, Read: s, Write: s})
				// The ramp skips the start, when the first requests queue behind fewer others.
				job := Job{Name: "j", RW: RandRead, IODepth: k, Size: 64 << 20, TimeBased: true, Runtime: 200 * time.Millisecond, RampTime: 10 * time.Millisecond}
				r := mustRun(t, tg, []Job{job}, Options{}).Results[0]
				wantIOPS := float64(min(k, p)) / s.Seconds()
				if rel := math.Abs(r.IOPS/wantIOPS - 1); rel > 1e-9 {
					t.Errorf("IOPS %.3f, want %.3f", r.IOPS, wantIOPS)
				}
				wantLat := float64(k) / wantIOPS * 1e6
				if math.Abs(r.Lat.Mean-wantLat) > 1e-6*wantLat {
					t.Errorf("mean latency %.6f µs, want %.6f µs", r.Lat.Mean, wantLat)
				}
				if k == 1 && (r.Lat.Mean != 100 || r.Lat.Max != 100 || math.Abs(r.Lat.P50-100) > 0.1) {
					t.Errorf("QD1 latency mean %v p50 %v max %v µs, want exactly the service time 100 µs", r.Lat.Mean, r.Lat.P50, r.Lat.Max)
				}
			})
		}
	}
}

// TestSizeBasedJob checks that a job without a runtime moves exactly
// size × loops bytes, and the sequential offsets it uses.
func TestSizeBasedJob(t *testing.T) {
	var offs []int64
	dev := &funcDevice{capacity: 1 << 20, submit: func(at time.Duration, r models.Request) (time.Duration, error) {
		if r.Op == models.Write {
			offs = append(offs, r.Offset)
		}
		return at + time.Millisecond, nil
	}}
	tg := NewSim("sim:fake", SimSetup{Device: dev})
	r := mustRun(t, tg, []Job{{Name: "seq", RW: Write, BS: 4096, Size: 16384, Loops: 2, Offset: 4096}}, Options{}).Results[0]
	if r.IOs != 8 || r.Bytes != 32768 {
		t.Errorf("ios %d bytes %d, want 8 and 32768", r.IOs, r.Bytes)
	}
	// The file is placed at device offset 0; I/O covers [offset, offset+size) twice.
	want := []int64{4096, 8192, 12288, 16384, 4096, 8192, 12288, 16384}
	if !reflect.DeepEqual(offs, want) {
		t.Errorf("offsets %v, want %v", offs, want)
	}
	if r.Seconds != 0.008 || r.IOPS != 1000 {
		t.Errorf("seconds %v iops %v, want 0.008 and 1000", r.Seconds, r.IOPS)
	}
}

// TestOpenLoop checks rate_iops: below saturation the arrivals set the
// throughput and latency is the bare service time; above it, requests
// queue behind the device and latency (from the intended arrival) grows.
func TestOpenLoop(t *testing.T) {
	const s = time.Millisecond // one unit: at most 1000 IOPS
	run := func(rate int) Result {
		tg := fixedSim(t, fixed.Config{Capacity: 1 << 30, Read: s})
		job := Job{Name: "open", RW: RandRead, IODepth: 64, Size: 1 << 20, TimeBased: true, Runtime: 2 * time.Second, RateIOPS: rate}
		return mustRun(t, tg, []Job{job}, Options{}).Results[0]
	}
	low := run(500)
	if math.Abs(low.IOPS-500) > 1 || low.Lat.Mean != 1000 {
		t.Errorf("at 500 IOPS offered: %.1f IOPS, mean latency %.1f µs; want 500 and 1000", low.IOPS, low.Lat.Mean)
	}
	high := run(2000)
	if math.Abs(high.IOPS-1000) > 5 || high.Lat.Mean < 10*1000 {
		t.Errorf("at 2000 IOPS offered: %.1f IOPS, mean latency %.1f µs; want 1000 IOPS and latency far above the service time", high.IOPS, high.Lat.Mean)
	}
}

// TestSeedReproducible: identical seeds give identical JSON, different
// seeds different offsets (and so different figures on a seeking device).
func TestSeedReproducible(t *testing.T) {
	jobs, err := Suite("cdm")
	if err != nil {
		t.Fatal(err)
	}
	jobs = Overrides{Runtime: 100 * time.Millisecond, Size: 256 << 20}.Apply(jobs)
	out := func(seed uint64) string {
		tg := NewSim("sim:seek", SimSetup{Device: seekDevice(1 << 30)})
		var b bytes.Buffer
		if err := mustRun(t, tg, jobs, Options{Seed: seed}).WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	a, b, c := out(7), out(7), out(8)
	if a != b {
		t.Error("same seed, different JSON")
	}
	if a == c {
		t.Error("different seeds, same JSON: the seed does not reach the offsets")
	}
}

// TestDeviceCounters: the report sums host and NAND bytes over the stack
// and divides them.
func TestDeviceCounters(t *testing.T) {
	var host float64
	leaf := &funcDevice{capacity: 1 << 30}
	leaf.submit = func(at time.Duration, r models.Request) (time.Duration, error) {
		if r.Op == models.Write {
			host += float64(r.Length)
		}
		leaf.counters = []models.Counter{{Name: "host_bytes_written", Value: host}, {Name: "nand_bytes_written", Value: 3 * host}}
		return at + time.Microsecond, nil
	}
	tg := NewSim("sim:wa", SimSetup{Device: leaf})
	rep := mustRun(t, tg, []Job{{Name: "w", RW: RandWrite, Size: 1 << 20}}, Options{})
	if d := rep.Device; d.HostBytesWritten != 1<<20 || d.NANDBytesWritten != 3<<20 || d.WriteAmplification != 3 || d.Source != "model" {
		t.Errorf("device counters %+v, want 1 MiB host, 3 MiB NAND, WA 3", d)
	}
}

// TestSuitesOnSim runs every suite, shortened, on a fixed device: each job
// produces I/O, copy jobs report files/s, and removed files free space.
func TestSuitesOnSim(t *testing.T) {
	for _, s := range Suites() {
		t.Run(s.Name, func(t *testing.T) {
			jobs, err := Suite(s.Name)
			if err != nil {
				t.Fatal(err)
			}
			jobs = Overrides{Runtime: 50 * time.Millisecond, Size: 64 << 20}.Apply(jobs)
			tg := fixedSim(t, fixed.Config{Capacity: 1 << 30, Units: 4, Read: 100 * time.Microsecond, Write: 200 * time.Microsecond, BytesPerSecond: 500e6})
			rep := mustRun(t, tg, jobs, Options{Suite: s.Name})
			if len(rep.Results) != len(jobs) {
				t.Fatalf("%d results for %d jobs", len(rep.Results), len(jobs))
			}
			for _, r := range rep.Results {
				if r.IOs == 0 || r.IOPS <= 0 || r.MBps <= 0 {
					t.Errorf("%s: no I/O measured: %+v", r.Name, r)
				}
				var ios, files int64
				for _, sec := range r.Series {
					ios += sec.IOs
					files += sec.Files
				}
				if ios != r.IOs || files != r.Files || len(r.Series) != int(math.Ceil(r.Seconds)) {
					t.Errorf("%s: time series holds %d I/Os and %d files in %d seconds; totals %d, %d in %.3f s",
						r.Name, ios, files, len(r.Series), r.IOs, r.Files, r.Seconds)
				}
				if strings.HasPrefix(r.Name, "copy 10") && (r.Files == 0 || r.FilesPerS <= 0) {
					t.Errorf("%s: no files/s", r.Name)
				}
			}
			if s.Name == "copy" || s.Name == "ddfill" {
				if len(tg.space.files) != 0 {
					t.Errorf("%d files left after the download removed them", len(tg.space.files))
				}
			}
		})
	}
}

// TestCopyCostsFileOps: a model that charges for Create/Open/Close makes
// many small files slower per byte than one big file.
func TestCopyCostsFileOps(t *testing.T) {
	var ops [models.Stat + 1]int
	var busy time.Duration
	dev := &funcDevice{capacity: 1 << 30, submit: func(at time.Duration, r models.Request) (time.Duration, error) {
		ops[r.Op]++
		svc := time.Duration(r.Length) * time.Nanosecond // 1 GB/s
		if r.Op.IsFileOp() {
			svc = time.Millisecond
		}
		busy = max(at, busy) + svc
		return busy, nil
	}}
	tg := NewSim("sim:nas", SimSetup{Device: dev})
	jobs, _ := Suite("copy")
	rep := mustRun(t, tg, Overrides{Size: 16 << 20}.Apply(jobs), Options{})
	if ops[models.Create] != 1+1000+10000 || ops[models.Open] != 1+1000+10000 || ops[models.Close] != 2*(1+1000+10000) || ops[models.Remove] != 11001 {
		t.Errorf("file ops create %d open %d close %d remove %d", ops[models.Create], ops[models.Open], ops[models.Close], ops[models.Remove])
	}
	big, small := rep.Results[0], rep.Results[4]
	// 10000 files of 1677 bytes: each costs 2 ms of file ops + 1.7 µs.
	if want := 10000 / (10000 * (2e-3 + 1677e-9)); math.Abs(small.FilesPerS/want-1) > 0.01 {
		t.Errorf("small files: %.1f files/s, want %.1f", small.FilesPerS, want)
	}
	if big.MBps < 10*small.MBps {
		t.Errorf("one big file %.1f MB/s is not far faster than small files %.3f MB/s", big.MBps, small.MBps)
	}
}

// TestSchemaSameForSimAndPath: a suite gives the same JSON schema and table
// shape against a simulated device and a real directory.
func TestSchemaSameForSimAndPath(t *testing.T) {
	jobs, _ := Suite("cdm")
	jobs = Overrides{Runtime: 20 * time.Millisecond, Size: 8 << 20, Direct: new(bool)}.Apply(jobs)
	sim := mustRun(t, fixedSim(t, fixed.Config{Capacity: 1 << 30, Read: 50 * time.Microsecond, Write: 50 * time.Microsecond}), jobs, Options{Suite: "cdm"})
	dir, err := OpenPath(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	real := mustRun(t, dir, jobs, Options{Suite: "cdm"})
	if sim.Mode != Virtual || real.Mode != Real {
		t.Errorf("modes %s and %s", sim.Mode, real.Mode)
	}
	ss, rs := schema(t, sim), schema(t, real)
	// The model's resource accounting, which the shape leaves out, is
	// what only the modelled target has.
	if r := sim.Results[0]; r.Bottleneck == nil || len(r.Utilisation) == 0 || real.Results[0].Bottleneck != nil {
		t.Errorf("sim %s bottleneck %v, real %v", r.Name, r.Bottleneck, real.Results[0].Bottleneck)
	}
	if !reflect.DeepEqual(ss, rs) {
		t.Errorf("schemas differ:\nsim  %v\nreal %v", ss, rs)
	}
	for _, key := range []string{"target:string", "mode:string", "results[].name:string", "results[].rw:string", "results[].bs:number",
		"results[].iodepth:number", "results[].numjobs:number", "results[].ios:number", "results[].bytes:number",
		"results[].seconds:number", "results[].iops:number", "results[].mbps:number", "results[].files_per_s:number",
		"results[].lat_us.mean:number", "results[].lat_us.p50:number", "results[].lat_us.p90:number", "results[].lat_us.p99:number",
		"results[].lat_us.p999:number", "results[].lat_us.max:number", "device.host_bytes_written:number",
		"device.nand_bytes_written:number", "device.write_amplification:number"} {
		if !ss[key] {
			t.Errorf("JSON lacks %s", key)
		}
	}
	if a, b := tableShape(t, sim), tableShape(t, real); a != b {
		t.Errorf("table shapes differ:\n%s\n%s", a, b)
	}
}

// schema returns the JSON shape of a report (JSONShape).
func schema(t *testing.T, r *Report) map[string]bool {
	t.Helper()
	sh, err := r.Shape()
	if err != nil {
		t.Fatal(err)
	}
	return sh
}

// tableShape returns the table's header row and its number of job rows.
func tableShape(t *testing.T, r *Report) string {
	t.Helper()
	sh, err := r.TableShape()
	if err != nil {
		t.Fatal(err)
	}
	return sh
}

// TestPathTarget runs jobs on a regular file and a directory and checks
// the byte counts, file layout and removal.
func TestPathTarget(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "disk.img")
	if err := os.WriteFile(file, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	tg, err := OpenPath(file)
	if err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, tg, []Job{{Name: "rr", RW: RandRW, IODepth: 4, NumJobs: 2, Size: 512 << 10, Fsync: 8, EndFsync: true}}, Options{}).Results[0]
	if r.Bytes != 2*512<<10 || r.IOs != 256 {
		t.Errorf("file target: %d bytes in %d I/Os, want 1 MiB in 256", r.Bytes, r.IOs)
	}
	tg, err = OpenPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	jobs := []Job{
		{Name: "up", RW: Write, BS: 64 << 10, NrFiles: 3, FileSize: 100 << 10, FileByFile: true, FilenameFormat: "sub/f$filenum"},
		{Name: "down", RW: Read, BS: 64 << 10, NrFiles: 3, FileSize: 100 << 10, FileByFile: true, FilenameFormat: "sub/f$filenum", Stonewall: true},
	}
	rep := mustRun(t, tg, jobs, Options{})
	for _, r := range rep.Results {
		if r.Files != 3 || r.Bytes != 300<<10 || r.IOs != 6 {
			t.Errorf("%s: %d files %d bytes %d I/Os, want 3, 300 KiB, 6", r.Name, r.Files, r.Bytes, r.IOs)
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "sub", "f2")); err != nil || fi.Size() != 100<<10 {
		t.Errorf("uploaded file: %v, %v", fi, err)
	}
	jobs[1].Unlink = true
	mustRun(t, tg, jobs[1:], Options{})
	if _, err := os.Stat(filepath.Join(dir, "sub", "f2")); !os.IsNotExist(err) {
		t.Errorf("unlink=1 left the file: %v", err)
	}
}

// TestBadTargets: problems with targets are ErrTarget (bad input).
func TestBadTargets(t *testing.T) {
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro.img")
	if err := os.WriteFile(ro, make([]byte, 1<<20), 0o444); err != nil {
		t.Fatal(err)
	}
	reg := NewRegistry(PathFactory(), SimFactory(func(setup string, seed uint64) (SimSetup, error) {
		return SimSetup{}, fmt.Errorf("unknown setup %q", setup)
	}))
	for _, tc := range []struct {
		target string
		job    Job
		want   string
	}{
		{filepath.Join(dir, "missing"), Job{Name: "r"}, "no such file"},
		{"ftp://host/x", Job{Name: "r"}, `unknown target scheme "ftp"`},
		{"sim:nosuch", Job{Name: "r"}, `unknown setup "nosuch"`},
		{ro, Job{Name: "w", RW: Write, Size: 4096}, "read-only"},
		{dir, Job{Name: "r"}, "needs size="},
	} {
		tg, err := reg.Open(tc.target, OpenOptions{})
		if err == nil {
			_, err = Run(tg, []Job{tc.job}, Options{})
		}
		if !errors.Is(err, ErrTarget) && !errors.Is(err, ErrJob) || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want bad input mentioning %q", tc.target, err, tc.want)
		}
	}
	// The read-only file can still be read.
	tg, _ := reg.Open(ro, OpenOptions{})
	if _, err := Run(tg, []Job{{Name: "r", Size: 4096}}, Options{}); err != nil {
		t.Errorf("reading a read-only file: %v", err)
	}
	// A sim device too small for the job.
	small := fixedSim(t, fixed.Config{Capacity: 1 << 20})
	if _, err := Run(small, []Job{{Name: "big", Size: 2 << 20}}, Options{}); !errors.Is(err, ErrTarget) {
		t.Errorf("job larger than the device: %v", err)
	}
}

func TestRegistry(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("duplicate registration did not panic")
		}
	}()
	reg := NewRegistry(PathFactory())
	if got := reg.Schemes(); !reflect.DeepEqual(got, []string{"PATH"}) {
		t.Errorf("schemes %v", got)
	}
	reg.Register(PathFactory())
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0)) }

// TestDistributions checks the skew of pareto and zipf against their
// analytic values, and that scattering ranks over the range is a
// bijection.
func TestDistributions(t *testing.T) {
	const n, draws = 10000, 400000
	count := func(d Distribution) []int {
		rng := newRand(1)
		p := newBlockPicker(d, n, rng)
		c := make([]int, n)
		for range draws {
			c[p.pick(rng)]++
		}
		return c
	}
	// pareto:h sends 1-h of the accesses to the hottest h of the blocks.
	c := count(Distribution{Kind: Pareto, Param: 0.2})
	sort.Sort(sort.Reverse(sort.IntSlice(c)))
	hot := 0
	for _, v := range c[:n/5] {
		hot += v
	}
	if f := float64(hot) / draws; math.Abs(f-0.8) > 0.02 {
		t.Errorf("pareto:0.2: the hottest 20%% of blocks get %.3f of accesses, want 0.8", f)
	}
	// zipf: the hottest block gets 1/zeta(n, theta) of the accesses.
	c = count(Distribution{Kind: Zipf, Param: 1.2})
	sort.Sort(sort.Reverse(sort.IntSlice(c)))
	zeta := 0.0
	for i := 1; i <= n; i++ {
		zeta += math.Pow(float64(i), -1.2)
	}
	if f, want := float64(c[0])/draws, 1/zeta; math.Abs(f/want-1) > 0.05 {
		t.Errorf("zipf:1.2: hottest block share %.4f, want %.4f", f, want)
	}
	// uniform: no block far from the mean.
	c = count(Distribution{})
	sort.Ints(c)
	if c[0] < 10 || c[n-1] > 80 {
		t.Errorf("uniform: counts from %d to %d around a mean of 40", c[0], c[n-1])
	}
	p := newBlockPicker(Distribution{Kind: Pareto, Param: 0.5}, 1000, newRand(3))
	seen := map[uint64]bool{}
	for r := range uint64(1000) {
		seen[p.scatter(r)] = true
	}
	if len(seen) != 1000 {
		t.Errorf("scatter maps 1000 ranks onto %d blocks", len(seen))
	}
}

// TestMixAndSplit: rwmixread and bssplit give the asked shares of reads
// and of block sizes.
func TestMixAndSplit(t *testing.T) {
	var reads, writes, bytes4k, ios int
	dev := &funcDevice{capacity: 1 << 30, submit: func(at time.Duration, r models.Request) (time.Duration, error) {
		switch r.Op {
		case models.Read:
			reads++
		case models.Write:
			writes++
		default:
			return at, nil
		}
		ios++
		if r.Length == 4096 {
			bytes4k++
		}
		return at + 10*time.Microsecond, nil
	}}
	tg := NewSim("sim:mix", SimSetup{Device: dev})
	job := Job{Name: "mix", RW: RandRW, RWMixRead: 70, BSSplit: []BSSplit{{4096, 25}, {65536, 75}}, Size: 256 << 20, TimeBased: true, Runtime: time.Second}
	mustRun(t, tg, []Job{job}, Options{})
	if f := float64(reads) / float64(reads+writes); math.Abs(f-0.7) > 0.01 {
		t.Errorf("read share %.3f, want 0.70", f)
	}
	if f := float64(bytes4k) / float64(ios); math.Abs(f-0.25) > 0.01 {
		t.Errorf("4 KiB share %.3f, want 0.25", f)
	}
}

// TestWallRate: on a real file, rate_iops paces the arrivals.
func TestWallRate(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	tg, err := OpenPath(file)
	if err != nil {
		t.Fatal(err)
	}
	r := mustRun(t, tg, []Job{{Name: "paced", RW: RandRead, IODepth: 4, TimeBased: true, Runtime: 500 * time.Millisecond, RateIOPS: 400}}, Options{}).Results[0]
	if r.IOPS < 360 || r.IOPS > 404 {
		t.Errorf("%.1f IOPS at rate_iops=400", r.IOPS)
	}
}

// dying is a device that fails every request from a given time on, like a
// server that goes away in the middle of a run.
type dying struct {
	models.Device
	from time.Duration
}

func (d dying) Submit(at time.Duration, r models.Request) (time.Duration, error) {
	if at >= d.from {
		return at, fmt.Errorf("%w: gone", models.ErrFailed)
	}
	return d.Device.Submit(at, r)
}

// When a later job group fails, Run keeps the results of the groups that
// finished and returns them with the error.
func TestPartialResultsKept(t *testing.T) {
	dev, err := fixed.New(fixed.Config{Capacity: 1 << 30, Read: 100 * time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := ParseFio("partial.fio", strings.NewReader(
		"[global]\nrw=randread\nbs=4k\nsize=64m\nruntime=1\ntime_based=1\n[first]\n[second]\nstonewall\n"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(NewSim("sim:dying", SimSetup{Device: dying{dev, 1500 * time.Millisecond}}), jobs, Options{Seed: 1})
	if err == nil || !errors.Is(err, models.ErrFailed) {
		t.Fatalf("Run = %v, want the device's failure", err)
	}
	if rep == nil || len(rep.Results) != 1 || rep.Results[0].Name != "first" || rep.Results[0].IOs == 0 {
		t.Fatalf("partial report %+v, want the first job's results", rep)
	}
}
