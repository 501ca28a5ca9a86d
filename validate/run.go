package validate

import (
	"bytes"
	"fmt"
	"io/fs"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nasemu/nasemu/bench"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/setup"
)

// Builder builds the device of a setup (a built-in name or a file) with a
// seed. A workload's unbuffered jobs (fio direct=1, diskspd -Sh, IOmeter)
// reach the device as the bench's sim target issues them
// (models.Request.Direct), so a setup is built as it is written: the same
// device that "nasemu bench --target sim:SETUP" runs.
type Builder func(setup string, seed uint64) (models.Device, error)

// SetupBuilder returns the Builder of setups that load names: a setup
// name, optionally with "@SIZE" (xeon002-raid1-sn640-local@4GiB), which
// scales each drive down to SIZE (setup.WithDriveCapacity: the same
// geometry per die or zone, fewer blocks), so that a tool that fills the
// whole device first (ezFIO preconditions the whole LUN twice) can run in
// virtual time within seconds; a drive's steady state depends on its
// spare fraction and parallelism, which scaling keeps. Each calibration
// of off is switched to its class default (Calibration.Off) in every
// setup it builds: a leave-one-review-out run.
func SetupBuilder(load func(name string) (*setup.Setup, error), off ...Calibration) Builder {
	return func(name string, seed uint64) (models.Device, error) {
		base, size, scaled := strings.Cut(name, "@")
		s, err := load(base)
		if err != nil {
			return nil, err
		}
		if scaled {
			b, err := models.ParseBytes(size)
			if err != nil || b <= 0 {
				return nil, fmt.Errorf("%w: setup %s: drive size %q: want e.g. 4GiB", ErrData, name, size)
			}
			s = s.WithDriveCapacity(b)
		}
		if len(off) > 0 {
			s = withOff(s, off)
		}
		return s.Build(seed)
	}
}

// withOff returns a copy of s with the calibrations off switched to their
// class defaults.
func withOff(s *setup.Setup, off []Calibration) *setup.Setup {
	c := *s
	if s.NAS != nil {
		n := *s.NAS
		c.NAS = &n
	}
	if s.Cache != nil {
		k := *s.Cache
		c.Cache = &k
	}
	for _, o := range off {
		if o.Off != nil {
			o.Off(&c)
		}
	}
	return &c
}

// Options control Run.
type Options struct {
	// Build makes each run's device; every run builds its own.
	Build Builder
	// Files holds the fio job files that fio:FILE workloads name (the
	// directory of the data file); nil when there are none.
	Files fs.FS
	// Seed seeds the devices and the workloads' offsets.
	Seed uint64
	// Parallel runs this many runs at once; 0 means GOMAXPROCS.
	Parallel int
}

// Outcome is a case's prediction.
type Outcome struct {
	Case
	Predicted float64
	// ErrorPct is (predicted − measured) / measured × 100.
	ErrorPct float64
	// Err is why the case could not be run; Reason (of the Case) why it
	// is not modelled at all.
	Err error
	// Wall is the wall time of the run the case shares with others.
	Wall time.Duration
}

// OK reports whether the case was predicted.
func (o *Outcome) OK() bool { return o.Reason == "" && o.Err == nil }

// run is one device and one workload, shared by the cases that read their
// figure off it.
type run struct {
	setup, workload string
	runtime         time.Duration
	jobs            []string // jobs the cases name
	cases           []int    // indexes into the outcomes
}

// Run predicts every modelled case. Cases that measure the same setup with
// the same workload share one run (one device, the workload's jobs they
// need in the workload's order, as the tool ran them); runs go in
// parallel. Outcomes come back in the order of cases.
func Run(cases []Case, opt Options) []Outcome {
	out := make([]Outcome, len(cases))
	var runs []*run
	byKey := map[string]*run{}
	for i, c := range cases {
		out[i].Case = c
		if !c.Modelled() {
			continue
		}
		key := c.Setup + "\x00" + c.Workload + "\x00" + c.Runtime.String()
		r := byKey[key]
		if r == nil {
			r = &run{setup: c.Setup, workload: c.Workload, runtime: c.Runtime}
			byKey[key] = r
			runs = append(runs, r)
		}
		for _, j := range c.jobs() {
			job, _, _ := strings.Cut(j, "#")
			if !slices.Contains(r.jobs, job) {
				r.jobs = append(r.jobs, job)
			}
		}
		r.cases = append(r.cases, i)
	}
	par := opt.Parallel
	if par <= 0 {
		par = runtime.GOMAXPROCS(0)
	}
	// Runs with the most jobs first (ezFIO's sweeps, the copy suite's six
	// copies), so that no long run starts last while the other workers
	// idle.
	slices.SortStableFunc(runs, func(a, b *run) int { return len(b.jobs) - len(a.jobs) })
	work := make(chan *run)
	var wg sync.WaitGroup
	for range par {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range work {
				start := time.Now()
				res, err := r.do(opt)
				wall := time.Since(start)
				for _, i := range r.cases {
					o := &out[i]
					o.Wall = wall
					if err != nil {
						o.Err = err
						continue
					}
					pick, err := o.pick(res)
					if err != nil {
						o.Err = fmt.Errorf("%w: workload %s: %w", ErrData, r.workload, err)
						continue
					}
					if pick <= 0 || math.IsNaN(pick) {
						o.Err = fmt.Errorf("%s %s: predicted %g %s", r.workload, o.Job, pick, o.Unit)
						continue
					}
					o.Predicted = pick
					o.ErrorPct = (pick - o.Measured) / o.Measured * 100
				}
			}
		}()
	}
	for _, r := range runs {
		work <- r
	}
	close(work)
	wg.Wait()
	return out
}

// figure is a run's result for one job.
type figure struct {
	MBps, IOPS         float64
	Lat                bench.Latency // µs
	PeakMBps, PeakIOPS float64       // the busiest second of the per-second samples
}

// value returns the figure's metric m.
func (f figure) value(m Metric) float64 {
	switch m {
	case IOPS:
		return f.IOPS
	case LatMean:
		return f.Lat.Mean
	case LatP50:
		return f.Lat.P50
	case LatP90:
		return f.Lat.P90
	case LatP99:
		return f.Lat.P99
	case LatP999:
		return f.Lat.P999
	case PeakMBps:
		return f.PeakMBps
	case PeakIOPS:
		return f.PeakIOPS
	}
	return f.MBps
}

// pick returns the case's prediction from a run's figures: its job's
// metric, or for a ratio (unit x, job "A / B") A's MB/s over B's.
func (c *Case) pick(res map[string]figure) (float64, error) {
	jobs := c.jobs()
	var v [2]float64
	for i, j := range jobs {
		f, ok := res[j]
		if !ok {
			var names []string
			for n := range res {
				names = append(names, n)
			}
			slices.Sort(names)
			return 0, fmt.Errorf("no job %q (jobs: %s)", j, strings.Join(names, "; "))
		}
		m := c.Unit
		if m == Ratio {
			m = MBps
		}
		v[i] = f.value(m)
	}
	if c.Unit == Ratio {
		if v[1] <= 0 {
			return 0, fmt.Errorf("%s: the ratio's base is %g", c.Job, v[1])
		}
		return v[0] / v[1], nil
	}
	return v[0], nil
}

// do runs r on a fresh device and returns each job's figures by name.
func (r *run) do(opt Options) (map[string]figure, error) {
	kind, arg, _ := strings.Cut(r.workload, ":")
	if kind == "clients" {
		dev, err := opt.Build(r.setup, opt.Seed)
		if err != nil {
			return nil, fmt.Errorf("setup %s: %w", r.setup, err)
		}
		var n int
		fmt.Sscan(arg, &n)
		return copyClients(dev, n)
	}
	all, err := r.load(opt.Files)
	if err != nil {
		return nil, err
	}
	jobs, err := r.pick(all)
	if err != nil {
		return nil, err
	}
	dev, err := opt.Build(r.setup, opt.Seed)
	if err != nil {
		return nil, fmt.Errorf("setup %s: %w", r.setup, err)
	}
	if r.runtime > 0 {
		jobs = bench.Overrides{Runtime: r.runtime}.Apply(jobs)
	}
	tg := bench.NewSim("sim:"+r.setup, bench.SimSetup{Device: dev})
	rep, err := bench.Run(tg, jobs, bench.Options{Seed: opt.Seed})
	if err != nil {
		return nil, fmt.Errorf("%s on %s: %w", r.workload, r.setup, err)
	}
	res := map[string]figure{}
	for _, x := range rep.Results {
		f := figure{MBps: x.MBps, IOPS: x.IOPS, Lat: x.Lat}
		for _, sec := range x.Series {
			f.PeakMBps = max(f.PeakMBps, float64(sec.Bytes)/1e6)
			f.PeakIOPS = max(f.PeakIOPS, float64(sec.IOs))
		}
		res[x.Name] = f
	}
	return res, nil
}

// load returns the workload's jobs.
func (r *run) load(files fs.FS) ([]bench.Job, error) {
	kind, arg, _ := strings.Cut(r.workload, ":")
	if kind == "suite" {
		return bench.Suite(arg)
	}
	if files == nil {
		return nil, fmt.Errorf("%w: %s: no directory of job files", ErrData, r.workload)
	}
	data, err := fs.ReadFile(files, arg)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrData, r.workload, err)
	}
	return bench.ParseFio(arg, bytes.NewReader(data))
}

// pick returns the jobs r needs, in the workload's order: the ones its
// cases name, every job whose name starts with "precondition" (a tool's
// fill of the device before it measures), and for a job that reads files one by one without writing
// them (a copy's download), the earlier jobs that wrote those files (its
// upload), as the tool ran them.
func (r *run) pick(all []bench.Job) ([]bench.Job, error) {
	need := make([]bool, len(all))
	for _, name := range r.jobs {
		k := slices.IndexFunc(all, func(j bench.Job) bool { return j.Name == name })
		if k < 0 {
			continue // its cases fail with the workload's job list; the others run
		}
		need[k] = true
		j := all[k]
		if j.FileByFile && (j.RW == bench.Read || j.RW == bench.RandRead) {
			for p := k - 1; p >= 0; p-- {
				if all[p].FilenameFormat == j.FilenameFormat && all[p].Filename == j.Filename &&
					(all[p].RW == bench.Write || all[p].RW == bench.RandWrite) {
					need[p] = true
					break
				}
			}
		}
	}
	var jobs []bench.Job
	for k, j := range all {
		if need[k] || strings.HasPrefix(j.Name, "precondition") {
			j.Stonewall = true
			j.Unlink = false
			jobs = append(jobs, j)
		}
	}
	return jobs, nil
}
