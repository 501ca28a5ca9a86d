package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// This file writes a report in fio's own output formats (fio
// --output-format=json, json+, normal, terse), so that what reads fio's
// output — fio-plot, fio's fio_jsonplus_clat2csv and fio2gnuplot,
// dashboards — reads nasemu's. The figures come from nasemu's
// measurements: clat is from issue to completion (on a path target's
// asynchronous engines, from the return of the submitting system call, as
// fio takes it), lat from the intended arrival of a paced I/O (else its
// preparation) to completion, slat from preparation to the return of the
// submitting system call where the engine queues (io_uring, libaio on a
// path target; fio records no slat for its synchronous engines, and a
// sim: target's latencies, measured at the host, hold the submission
// undivided, so it has none either: N is 0). Percentiles and json+ bins
// are in fio's latency buckets, computed as fio computes them. A job's
// clones (numjobs) are reported one by one, or with group_reporting
// together with the jobs of their reporting group, as fio does.

// FioVersion is the "fio version" nasemu writes: the fio release whose
// output format it follows, and its own name.
const FioVersion = "fio-3.33 (nasemu)"

// FioFormats are the fio output formats WriteFio knows.
var FioFormats = []string{"json", "json+", "normal", "terse"}

// defaultPercentiles are fio's default percentile_list.
var defaultPercentiles = []float64{1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99}

// fioLat is a latency in fio's JSON (ns).
type fioLat struct {
	Min        uint64            `json:"min"`
	Max        uint64            `json:"max"`
	Mean       float64           `json:"mean"`
	Stddev     float64           `json:"stddev"`
	N          int64             `json:"N"`
	Percentile map[string]uint64 `json:"percentile,omitempty"`
	Bins       map[string]uint64 `json:"bins,omitempty"`
}

// fioDir is one direction of a fio job.
type fioDir struct {
	IOBytes     int64   `json:"io_bytes"`
	IOKBytes    int64   `json:"io_kbytes"`
	BWBytes     int64   `json:"bw_bytes"`
	BW          int64   `json:"bw"`
	IOPS        float64 `json:"iops"`
	Runtime     int64   `json:"runtime"`
	TotalIOs    int64   `json:"total_ios"`
	ShortIOs    int64   `json:"short_ios"`
	DropIOs     int64   `json:"drop_ios"`
	Slat        fioLat  `json:"slat_ns"`
	Clat        fioLat  `json:"clat_ns"`
	Lat         fioLat  `json:"lat_ns"`
	BWMin       int64   `json:"bw_min"`
	BWMax       int64   `json:"bw_max"`
	BWAgg       float64 `json:"bw_agg"`
	BWMean      float64 `json:"bw_mean"`
	BWDev       float64 `json:"bw_dev"`
	BWSamples   int64   `json:"bw_samples"`
	IOPSMin     int64   `json:"iops_min"`
	IOPSMax     int64   `json:"iops_max"`
	IOPSMean    float64 `json:"iops_mean"`
	IOPSStddev  float64 `json:"iops_stddev"`
	IOPSSamples int64   `json:"iops_samples"`
}

// fioSync is the fsync section of a fio job.
type fioSync struct {
	TotalIOs int64  `json:"total_ios"`
	Lat      fioLat `json:"lat_ns"`
}

// fioJob is one entry of fio's jobs[].
type fioJob struct {
	JobName         string             `json:"jobname"`
	GroupID         int                `json:"groupid"`
	Error           int                `json:"error"`
	Eta             int                `json:"eta"`
	Elapsed         int64              `json:"elapsed"`
	JobOptions      map[string]string  `json:"job options"`
	Read            fioDir             `json:"read"`
	Write           fioDir             `json:"write"`
	Trim            fioDir             `json:"trim"`
	Sync            fioSync            `json:"sync"`
	JobRuntime      int64              `json:"job_runtime"`
	UsrCPU          float64            `json:"usr_cpu"`
	SysCPU          float64            `json:"sys_cpu"`
	Ctx             int64              `json:"ctx"`
	Majf            int64              `json:"majf"`
	Minf            int64              `json:"minf"`
	IODepthLevel    map[string]float64 `json:"iodepth_level"`
	IODepthSubmit   map[string]float64 `json:"iodepth_submit"`
	IODepthComplete map[string]float64 `json:"iodepth_complete"`
	LatencyNs       map[string]float64 `json:"latency_ns"`
	LatencyUs       map[string]float64 `json:"latency_us"`
	LatencyMs       map[string]float64 `json:"latency_ms"`
	LatencyDepth    int                `json:"latency_depth"`
	LatencyTarget   int64              `json:"latency_target"`
	LatencyPct      float64            `json:"latency_percentile"`
	LatencyWindow   int64              `json:"latency_window"`
	Steadystate     *fioSteady         `json:"steadystate,omitempty"`
}

// fioSteady is a job's steady-state outcome.
type fioSteady struct {
	SSAttained int     `json:"attained"`
	Criterion  string  `json:"criterion"`
	Duration   float64 `json:"duration"`
}

// fioOutput is fio's JSON document.
type fioOutput struct {
	Version       string            `json:"fio version"`
	Timestamp     int64             `json:"timestamp"`
	TimestampMs   int64             `json:"timestamp_ms"`
	Time          string            `json:"time"`
	GlobalOptions map[string]string `json:"global options"`
	Jobs          []fioJob          `json:"jobs"`
	DiskUtil      []DiskUtil        `json:"disk_util,omitempty"`
	// Extra to fio's schema: where the figures come from.
	Target string `json:"nasemu_target"`
	Mode   Mode   `json:"nasemu_mode"`
}

// fioEntry is a set of collectors reported as one fio job.
type fioEntry struct {
	name    string
	group   int
	job     *Job
	cols    []*collector
	jobs    int
	results []*Result
}

// fioEntries groups the report's measurements as fio reports them.
func (r *Report) fioEntries() []fioEntry {
	var out []fioEntry
	group := 0
	for i := range r.Results {
		x := &r.Results[i]
		j := x.job
		if j == nil {
			continue
		}
		if i > 0 && (j.Stonewall || j.NewGroup) {
			group++
		}
		switch {
		case j.GroupReporting && len(out) > 0 && out[len(out)-1].group == group && out[len(out)-1].job.GroupReporting:
			e := &out[len(out)-1]
			e.cols = append(e.cols, x.clones...)
			e.jobs += j.NumJobs
			e.results = append(e.results, x)
		case j.GroupReporting || len(x.clones) == 1:
			out = append(out, fioEntry{name: j.Name, group: group, job: j, cols: x.clones, jobs: j.NumJobs, results: []*Result{x}})
		default:
			for _, c := range x.clones {
				out = append(out, fioEntry{name: j.Name, group: group, job: j, cols: []*collector{c}, jobs: 1, results: []*Result{x}})
			}
		}
	}
	return out
}

// WriteFio writes the report in one of fio's output formats; now is the
// run's time for the timestamps.
func (r *Report) WriteFio(w io.Writer, format string, now time.Time) error {
	entries := r.fioEntries()
	switch format {
	case "json", "json+":
		doc := fioOutput{
			Version: FioVersion, Timestamp: now.Unix(), TimestampMs: now.UnixMilli(), Time: now.UTC().Format(time.ANSIC),
			GlobalOptions: map[string]string{}, Jobs: []fioJob{}, Target: r.Target, Mode: r.Mode,
			DiskUtil: r.DiskUtil,
		}
		for _, e := range entries {
			doc.Jobs = append(doc.Jobs, e.fioJob(format == "json+"))
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(doc)
	case "normal":
		return writeFioNormal(w, r, entries)
	case "terse":
		for _, e := range entries {
			if _, err := fmt.Fprintln(w, e.terse()); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("unknown output format %q (known: %s)", format, strings.Join(FioFormats, ", "))
}

// fioJob builds a fio job entry.
func (e *fioEntry) fioJob(plus bool) fioJob {
	c := merged(e.cols)
	j := e.job
	runtime := max((c.end - c.from).Milliseconds(), 0)
	fj := fioJob{
		JobName: e.name, GroupID: e.group, Elapsed: int64(math.Ceil((c.end - c.from).Seconds())),
		JobOptions: jobOptions(j), JobRuntime: runtime,
		IODepthLevel: depthMap(c), IODepthSubmit: fioDepthSync(), IODepthComplete: fioDepthSync(),
		LatencyDepth: j.IODepth, LatencyPct: 100,
	}
	if j.LatTarget > 0 {
		fj.LatencyTarget = int64(j.LatTarget)
		fj.LatencyPct = j.LatPercentile
		fj.LatencyWindow = int64(j.LatWindow)
	}
	pcts := j.PercentileList
	if len(pcts) == 0 {
		pcts = defaultPercentiles
	}
	var latPcts []float64  // lat_percentiles: lat's percentiles too, as fio writes them
	var slatPcts []float64 // slat_percentiles, likewise
	if recordedTrue(j, "slat_percentiles") {
		slatPcts = pcts
	}
	if recordedTrue(j, "lat_percentiles") {
		latPcts = pcts
	}
	var total platHist
	var n uint64
	for d, p := range []*fioDir{&fj.Read, &fj.Write, &fj.Trim} {
		*p = fioDirOf(c, Dir(d), pcts, latPcts, slatPcts, plus, c.span(Dir(d)).Milliseconds())
		if ds := c.dir[d]; ds != nil {
			total.merge(&ds.lplat)
			n += uint64(ds.ios)
		}
	}
	fj.LatencyNs, fj.LatencyUs, fj.LatencyMs = latencyBuckets(&total, n)
	if ss := j.SteadyState; ss != nil {
		fj.Steadystate = &fioSteady{Criterion: ss.String(), Duration: ss.Dur.Seconds()}
		for _, x := range e.results {
			for _, note := range x.Notes {
				if strings.HasPrefix(note, "steady state reached") {
					fj.Steadystate.SSAttained = 1
				}
			}
		}
	}
	return fj
}

// String writes the criterion as fio's ss= does.
func (ss *Steady) String() string {
	if ss.RoundIOs > 0 {
		return fmt.Sprintf("pts:%s:%dx%d", ss.Metric, SteadyRounds, ss.RoundIOs)
	}
	s := ss.Metric
	if ss.Slope {
		s += "_slope"
	}
	s += ":" + strconv.FormatFloat(ss.Limit, 'g', -1, 64)
	if ss.Pct {
		s += "%"
	}
	return s
}

// jobOptions are the job's options as fio lists them.
func jobOptions(j *Job) map[string]string {
	o := map[string]string{
		"name": j.Name, "rw": j.RW.String(), "bs": strconv.FormatInt(j.BS, 10), "iodepth": strconv.Itoa(j.IODepth),
		"numjobs": strconv.Itoa(j.NumJobs),
	}
	if j.EngineName != "" {
		o["ioengine"] = j.EngineName
	}
	if j.Size > 0 {
		o["size"] = strconv.FormatInt(j.Size, 10)
	}
	if j.Runtime > 0 {
		o["runtime"] = strconv.FormatInt(j.Runtime.Milliseconds(), 10) + "ms"
	}
	if j.Direct {
		o["direct"] = "1"
	}
	if j.RW == ReadWrite || j.RW == RandRW {
		o["rwmixread"] = strconv.Itoa(j.RWMixRead)
	}
	for _, s := range j.Recorded {
		o[s.Key] = s.Value
	}
	return o
}

// recordedTrue reports whether the job set a recorded boolean option.
func recordedTrue(j *Job, key string) bool {
	on := false
	for _, s := range j.Recorded {
		if s.Key == key {
			on = s.Value == "" || s.Value == "1" || s.Value == "true"
		}
	}
	return on
}

// fioDirOf builds direction d of a fio job: clat's percentiles at pcts,
// lat's at latPcts and slat's at slatPcts (nil: none).
func fioDirOf(c *collector, d Dir, pcts, latPcts, slatPcts []float64, plus bool, runtime int64) fioDir {
	ds := c.dir[d]
	if ds == nil {
		return fioDir{}
	}
	f := fioDir{IOBytes: ds.bytes, IOKBytes: ds.bytes / 1024, TotalIOs: ds.ios, Runtime: runtime}
	if runtime > 0 {
		secs := float64(runtime) / 1000
		f.BWBytes = int64(float64(ds.bytes) / secs)
		f.BW = f.BWBytes / 1024
		f.IOPS = float64(ds.ios) / secs
	}
	if ds.slat != nil {
		f.Slat = fioLatOf(ds.sm, &ds.splat, slatPcts, false)
	}
	f.Clat = fioLatOf(ds.cm, &ds.cplat, pcts, plus)
	f.Lat = fioLatOf(ds.lm, &ds.lplat, latPcts, false)
	// bandwidth and IOPS samples: one for each whole second (a run
	// shorter than a second is one sample of its average)
	var bw, iops moments
	full := min(int(runtime/1000), len(ds.secs))
	for _, s := range ds.secs[:full] {
		bw.add(time.Duration(s.bytes / 1024))
		iops.add(time.Duration(s.ios))
	}
	if full == 0 && runtime > 0 {
		bw.add(time.Duration(f.BW))
		iops.add(time.Duration(f.IOPS))
	}
	if bw.n > 0 {
		f.BWMin, f.BWMax, f.BWMean, f.BWDev, f.BWSamples = int64(bw.min), int64(bw.max), bw.mean(), bw.stddev(), bw.n
		f.IOPSMin, f.IOPSMax, f.IOPSMean, f.IOPSStddev, f.IOPSSamples = int64(iops.min), int64(iops.max), iops.mean(), iops.stddev(), iops.n
		f.BWAgg = 100
	}
	return f
}

// fioLatOf builds a latency section.
func fioLatOf(m moments, h *platHist, pcts []float64, plus bool) fioLat {
	l := fioLat{Min: uint64(m.min), Max: uint64(m.max), Mean: m.mean(), Stddev: m.stddev(), N: m.n}
	if m.n > 0 && pcts != nil {
		l.Percentile = map[string]uint64{}
		for _, p := range pcts {
			l.Percentile[strconv.FormatFloat(p, 'f', 6, 64)] = h.percentile(uint64(m.n), p)
		}
	}
	if plus && m.n > 0 {
		l.Bins = map[string]uint64{}
		for i, v := range h {
			if v > 0 {
				l.Bins[strconv.FormatUint(platValue(i), 10)] = v
			}
		}
	}
	return l
}

// depthMap is fio's iodepth_level: percent of I/Os issued at each depth.
func depthMap(c *collector) map[string]float64 {
	keys := []string{"1", "2", "4", "8", "16", "32", ">=64"}
	var total int64
	for _, v := range c.depth {
		total += v
	}
	out := map[string]float64{}
	for i, k := range keys {
		out[k] = 0
		if total > 0 {
			out[k] = 100 * float64(c.depth[i]) / float64(total)
		}
	}
	return out
}

// fioDepthSync is iodepth_submit/complete of an engine that submits and
// completes one I/O at a time.
func fioDepthSync() map[string]float64 {
	return map[string]float64{"0": 0, "4": 100, "8": 0, "16": 0, "32": 0, "64": 0, ">=64": 0}
}

// latencyBuckets are fio's latency_ns/us/ms: percent of I/Os whose
// latency falls below each bound (and above the one before).
func latencyBuckets(h *platHist, n uint64) (ns, us, ms map[string]float64) {
	bounds := []float64{2, 4, 10, 20, 50, 100, 250, 500, 750, 1000}
	msBounds := []float64{2, 4, 10, 20, 50, 100, 250, 500, 750, 1000, 2000}
	ns, us, ms = map[string]float64{}, map[string]float64{}, map[string]float64{}
	for _, b := range bounds {
		ns[strconv.FormatFloat(b, 'f', -1, 64)] = 0
		us[strconv.FormatFloat(b, 'f', -1, 64)] = 0
	}
	for _, b := range msBounds {
		ms[strconv.FormatFloat(b, 'f', -1, 64)] = 0
	}
	ms[">=2000"] = 0
	if n == 0 {
		return
	}
	put := func(m map[string]float64, bs []float64, v float64, cnt uint64) bool {
		for _, b := range bs {
			if v < b {
				m[strconv.FormatFloat(b, 'f', -1, 64)] += 100 * float64(cnt) / float64(n)
				return true
			}
		}
		return false
	}
	for i, cnt := range h {
		if cnt == 0 {
			continue
		}
		v := float64(platValue(i))
		switch {
		case v < 1000:
			put(ns, bounds, v, cnt)
		case v < 1e6:
			put(us, bounds, v/1e3, cnt)
		default:
			if !put(ms, msBounds, v/1e6, cnt) {
				ms[">=2000"] += 100 * float64(cnt) / float64(n)
			}
		}
	}
	return
}

// writeFioNormal writes fio's human-readable output.
func writeFioNormal(w io.Writer, r *Report, entries []fioEntry) error {
	fmt.Fprintf(w, "%s: target %s (%s time)\n", FioVersion, r.Target, r.Mode)
	for _, e := range entries {
		fj := e.fioJob(false)
		fmt.Fprintf(w, "%s: (groupid=%d, jobs=%d): err= 0: pid=0\n", e.name, e.group, e.jobs)
		for d, p := range []*fioDir{&fj.Read, &fj.Write, &fj.Trim} {
			if p.TotalIOs == 0 {
				continue
			}
			fmt.Fprintf(w, "  %s: IOPS=%s, BW=%.1fMiB/s (%.1fMB/s)(%.1fMiB/%dmsec)\n", Dir(d), iopsString(p.IOPS),
				float64(p.BWBytes)/(1<<20), float64(p.BWBytes)/1e6, float64(p.IOBytes)/(1<<20), p.Runtime)
			for _, l := range []struct {
				name string
				lat  fioLat
			}{{"slat", p.Slat}, {"clat", p.Clat}, {" lat", p.Lat}} {
				if l.lat.N == 0 && l.name == "slat" {
					continue // fio prints slat only where the engine queues
				}
				fmt.Fprintf(w, "    %s (usec): min=%.0f, max=%.0f, avg=%.2f, stdev=%.2f\n", l.name,
					float64(l.lat.Min)/1e3, float64(l.lat.Max)/1e3, l.lat.Mean/1e3, l.lat.Stddev/1e3)
			}
			fmt.Fprintf(w, "    clat percentiles (usec):\n")
			keys := make([]float64, 0, len(p.Clat.Percentile))
			for k := range p.Clat.Percentile {
				f, _ := strconv.ParseFloat(k, 64)
				keys = append(keys, f)
			}
			sortFloats(keys)
			for i, k := range keys {
				if i%4 == 0 {
					fmt.Fprint(w, "     |")
				}
				fmt.Fprintf(w, " %6.2fth=[%d]", k, p.Clat.Percentile[strconv.FormatFloat(k, 'f', 6, 64)]/1000)
				if i%4 == 3 || i == len(keys)-1 {
					fmt.Fprintln(w, ",")
				} else {
					fmt.Fprint(w, ",")
				}
			}
			fmt.Fprintf(w, "   bw (  KiB/s): min=%d, max=%d, per=%.2f%%, avg=%.2f, stdev=%.2f, samples=%d\n",
				p.BWMin, p.BWMax, p.BWAgg, p.BWMean, p.BWDev, p.BWSamples)
			fmt.Fprintf(w, "   iops        : min=%d, max=%d, avg=%.2f, stdev=%.2f, samples=%d\n",
				p.IOPSMin, p.IOPSMax, p.IOPSMean, p.IOPSStddev, p.IOPSSamples)
		}
		fmt.Fprintf(w, "  IO depths    : 1=%.1f%%, 2=%.1f%%, 4=%.1f%%, 8=%.1f%%, 16=%.1f%%, 32=%.1f%%, >=64=%.1f%%\n",
			fj.IODepthLevel["1"], fj.IODepthLevel["2"], fj.IODepthLevel["4"], fj.IODepthLevel["8"],
			fj.IODepthLevel["16"], fj.IODepthLevel["32"], fj.IODepthLevel[">=64"])
		fmt.Fprintf(w, "     issued rwts: total=%d,%d,%d,0\n", fj.Read.TotalIOs, fj.Write.TotalIOs, fj.Trim.TotalIOs)
	}
	if len(r.DiskUtil) > 0 {
		fmt.Fprintf(w, "\nDisk stats (read/write):\n")
		for _, d := range r.DiskUtil {
			indent := "  "
			if d.DiskAggr != nil {
				indent = "    " // as fio indents a device over others
			}
			fmt.Fprintf(w, "%s%s: ios=%d/%d, merge=%d/%d, ticks=%d/%d, in_queue=%d, util=%.2f%%", indent, d.Name,
				d.ReadIOs, d.WriteIOs, d.ReadMerges, d.WriteMerges, d.ReadTicks, d.WriteTicks, d.InQueue, d.Util)
			if g := d.DiskAggr; g != nil {
				fmt.Fprintf(w, ", aggrios=%d/%d, aggrmerge=%d/%d, aggrticks=%d/%d, aggrin_queue=%d, aggrutil=%.2f%%",
					g.ReadIOs, g.WriteIOs, g.ReadMerges, g.WriteMerges, g.ReadTicks, g.WriteTicks, g.InQueue, g.Util)
			}
			fmt.Fprintln(w)
		}
	}
	_, err := fmt.Fprintln(w)
	return err
}

func sortFloats(a []float64) {
	for i := 1; i < len(a); i++ {
		for k := i; k > 0 && a[k] < a[k-1]; k-- {
			a[k], a[k-1] = a[k-1], a[k]
		}
	}
}

func iopsString(v float64) string {
	if v >= 10000 {
		return strconv.FormatFloat(v/1000, 'f', 1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// terse writes the entry as a line of fio's terse format, version 3.
func (e *fioEntry) terse() string {
	fj := e.fioJob(false)
	f := []string{"3", FioVersion, e.name, strconv.Itoa(e.group), "0"}
	for _, p := range []*fioDir{&fj.Read, &fj.Write, &fj.Trim} {
		us := func(ns float64) string { return strconv.FormatFloat(ns/1e3, 'f', 6, 64) }
		f = append(f, strconv.FormatInt(p.IOKBytes, 10), strconv.FormatInt(p.BW, 10), strconv.FormatFloat(p.IOPS, 'f', 0, 64), strconv.FormatInt(p.Runtime, 10))
		f = append(f, strconv.FormatUint(p.Slat.Min/1000, 10), strconv.FormatUint(p.Slat.Max/1000, 10), us(p.Slat.Mean), us(p.Slat.Stddev))
		f = append(f, strconv.FormatUint(p.Clat.Min/1000, 10), strconv.FormatUint(p.Clat.Max/1000, 10), us(p.Clat.Mean), us(p.Clat.Stddev))
		keys := make([]float64, 0, 20)
		for k := range p.Clat.Percentile {
			v, _ := strconv.ParseFloat(k, 64)
			keys = append(keys, v)
		}
		sortFloats(keys)
		for i := range 20 {
			if i < len(keys) {
				f = append(f, fmt.Sprintf("%g%%=%d", keys[i], p.Clat.Percentile[strconv.FormatFloat(keys[i], 'f', 6, 64)]/1000))
			} else {
				f = append(f, "0%=0")
			}
		}
		f = append(f, strconv.FormatUint(p.Lat.Min/1000, 10), strconv.FormatUint(p.Lat.Max/1000, 10), us(p.Lat.Mean), us(p.Lat.Stddev))
		f = append(f, strconv.FormatInt(p.BWMin, 10), strconv.FormatInt(p.BWMax, 10), strconv.FormatFloat(p.BWAgg, 'f', 6, 64)+"%",
			strconv.FormatFloat(p.BWMean, 'f', 6, 64), strconv.FormatFloat(p.BWDev, 'f', 6, 64))
	}
	f = append(f, "0.000000%", "0.000000%", "0", "0", "0") // cpu
	for _, k := range []string{"1", "2", "4", "8", "16", "32", ">=64"} {
		f = append(f, strconv.FormatFloat(fj.IODepthLevel[k], 'f', 1, 64)+"%")
	}
	for _, k := range []string{"2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"} {
		f = append(f, strconv.FormatFloat(fj.LatencyUs[k], 'f', 2, 64)+"%")
	}
	for _, k := range []string{"2", "4", "10", "20", "50", "100", "250", "500", "750", "1000", "2000", ">=2000"} {
		f = append(f, strconv.FormatFloat(fj.LatencyMs[k], 'f', 2, 64)+"%")
	}
	return strings.Join(f, ";")
}
