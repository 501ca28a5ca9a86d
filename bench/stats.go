package bench

import (
	"math"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// latHist merges the HDR histogram's buckets into LatBinsPerDecade
// log-spaced bins (µs), dropping empty ones.
func latHist(h *hdrhistogram.Histogram) []LatBin {
	var bins []LatBin
	if h == nil {
		return nil
	}
	for _, b := range h.Distribution() {
		if b.Count == 0 {
			continue
		}
		us := float64(max(b.From, histMin)) / 1e3
		k := math.Floor(math.Log10(us) * LatBinsPerDecade)
		from, to := math.Pow(10, k/LatBinsPerDecade), math.Pow(10, (k+1)/LatBinsPerDecade)
		if n := len(bins); n > 0 && bins[n-1].From == from {
			bins[n-1].Count += b.Count
			continue
		}
		bins = append(bins, LatBin{From: from, To: to, Count: b.Count})
	}
	return bins
}

// Latencies are recorded in nanoseconds from 1 ns to an hour with three
// significant digits: percentiles are exact to 0.1 %.
const (
	histMin    = 1
	histMax    = int64(time.Hour)
	histDigits = 3
)

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(histMin, histMax, histDigits) }

// moments are a latency's count, sum, sum of squares, min and max (ns).
type moments struct {
	n        int64
	sum, sq  float64
	min, max time.Duration
}

func (m *moments) add(v time.Duration) {
	if m.n == 0 || v < m.min {
		m.min = v
	}
	m.max = max(m.max, v)
	m.n++
	f := float64(v)
	m.sum += f
	m.sq += f * f
}

func (m *moments) merge(o moments) {
	if o.n == 0 {
		return
	}
	if m.n == 0 || o.min < m.min {
		m.min = o.min
	}
	m.max = max(m.max, o.max)
	m.n += o.n
	m.sum += o.sum
	m.sq += o.sq
}

func (m moments) mean() float64 {
	if m.n == 0 {
		return 0
	}
	return m.sum / float64(m.n)
}

// stddev is the sample standard deviation, as fio computes it.
func (m moments) stddev() float64 {
	if m.n < 2 {
		return 0
	}
	mean := m.mean()
	v := (m.sq - float64(m.n)*mean*mean) / float64(m.n-1)
	return math.Sqrt(max(v, 0))
}

// dirStats are one direction's measurements.
type dirStats struct {
	clat  *hdrhistogram.Histogram // issue to completion
	lat   *hdrhistogram.Histogram // intended arrival to completion (paced jobs; else nil: lat is clat)
	ios   int64
	bytes int64
	cm    moments // clat
	lm    moments // lat
	sm    moments // slat: asynchronous engines on real targets only
	slat  *hdrhistogram.Histogram
	splat platHist // slat in fio's buckets
	secs  []sample
	cplat platHist // clat in fio's buckets, for fio's output
	lplat platHist // lat
}

// sample is one second's I/Os and bytes of a direction.
type sample struct{ ios, bytes int64 }

func (d *dirStats) merge(o *dirStats) {
	if o == nil {
		return
	}
	// A nil lat is clat (no I/O of that side waited to be submitted):
	// once either side has its own, the merged lat takes the other's
	// clat in its place.
	if o.lat != nil || d.lat != nil {
		if d.lat == nil {
			d.lat = newHist()
			d.lat.Merge(d.clat)
		}
		src := o.lat
		if src == nil {
			src = o.clat
		}
		d.lat.Merge(src)
	}
	d.clat.Merge(o.clat)
	d.ios += o.ios
	d.bytes += o.bytes
	d.cplat.merge(&o.cplat)
	d.lplat.merge(&o.lplat)
	d.cm.merge(o.cm)
	d.lm.merge(o.lm)
	if o.slat != nil {
		if d.slat == nil {
			d.slat = newHist()
		}
		d.slat.Merge(o.slat)
		d.sm.merge(o.sm)
		d.splat.merge(&o.splat)
	}
	for len(d.secs) < len(o.secs) {
		d.secs = append(d.secs, sample{})
	}
	for i, s := range o.secs {
		d.secs[i].ios += s.ios
		d.secs[i].bytes += s.bytes
	}
}

// depthLevels are fio's iodepth_level buckets: 1, 2, 4, 8, 16, 32, >=64.
var depthLevels = [...]int{1, 2, 4, 8, 16, 32, 64}

// collector gathers the measurements of one job instance, or of all of a
// job's instances when they are reported together.
type collector struct {
	from   time.Duration // start of the measured window
	end    time.Duration // last completion counted, or the end of a thinktime after it
	dir    [3]*dirStats
	spare  [3]*dirStats // prepared, no I/O yet (see prepare)
	files  int64
	series []Second
	depth  [len(depthLevels)]int64 // I/Os issued at each depth level
	logs   *jobLogs
	// The verify phase, as fio times it (thread_main): when a job's
	// writes are done and its written data is read back (do_verify),
	// fio's write runtime ends with the writes and its read runtime is
	// the phase's (with the job's own reads before it, if it had any).
	phase      time.Duration // when the verify phase began
	phased     bool          // it has begun
	readBefore bool          // reads were counted before it
	dirEnd     [3]time.Duration
	// spans replaces span's figures in a merged collector.
	spans *[3]time.Duration
}

// beginVerify records that the job's verify phase begins at t.
func (c *collector) beginVerify(t time.Duration) {
	if !c.phased {
		c.phase, c.phased = max(t, c.from), true
	}
}

// idle records that the job instance thinks until t (thinktime): fio's
// thread sleeps in it, so its runtime runs to t at least, and so does
// the runtime of each direction it has done I/O in before a verify phase.
func (c *collector) idle(t time.Duration) {
	c.end = max(c.end, t)
	if !c.phased {
		for d, ds := range c.dir {
			if ds != nil {
				c.dirEnd[d] = max(c.dirEnd[d], t)
			}
		}
	}
}

// span is how long direction d ran in the measured window, as fio counts
// its runtime: the whole window unless a verify phase split it.
func (c *collector) span(d Dir) time.Duration {
	switch {
	case c.spans != nil:
		return c.spans[d]
	case c.phased && d == DirWrite:
		return max(c.dirEnd[d]-c.from, 0)
	case c.phased && d == DirRead && !c.readBefore:
		return max(c.end-c.phase, 0)
	}
	return max(c.end-c.from, 0)
}

// Second is one second of a job's time series, counted by completion time.
type Second struct {
	Second  int     // seconds since the measured window began
	IOs     int64   // I/Os completed in this second
	Bytes   int64   // bytes they moved
	Files   int64   // files closed (file-by-file jobs)
	LatMean float64 // mean latency of those I/Os, µs
	latSum  float64
}

func newCollector(from time.Duration) *collector {
	return &collector{from: from}
}

// prepare makes direction d's histograms before a real target's clock
// starts (with those of submission latency if slat, and of latency apart
// from clat if lat: submission time or paced arrivals), as fio allocates its
// per-direction stats at set-up: made at a direction's first completion,
// their zeroed buffers (a few hundred KiB) delayed that I/O by far more
// than the I/O itself took on fast storage. They stay spare, out of the
// report, until the direction's first I/O.
func (c *collector) prepare(d Dir, slat, lat bool) {
	if c.dir[d] != nil {
		return
	}
	if c.spare[d] == nil {
		c.spare[d] = &dirStats{clat: newHist()}
	}
	if slat && c.spare[d].slat == nil {
		c.spare[d].slat = newHist()
	}
	if lat && c.spare[d].lat == nil {
		c.spare[d].lat = newHist()
	}
}

// issued counts an I/O issued with depth I/Os of its stream in flight.
func (c *collector) issued(depth int) {
	i := 0
	for i < len(depthLevels)-1 && depth > depthLevels[i] {
		i++
	}
	c.depth[i]++
}

// record counts an I/O of n bytes in direction d that took clat from issue
// and lat from its intended arrival, completing at done; slat is its
// submission time, 0 where the engine submits synchronously (fio records
// no slat for those).
func (c *collector) record(d Dir, slat, clat, lat time.Duration, n int64, done time.Duration) {
	ds := c.dir[d]
	if ds == nil {
		ds = c.spare[d]
		if ds == nil {
			ds = &dirStats{clat: newHist()}
		}
		c.spare[d] = nil
		c.dir[d] = ds
	}
	if slat > 0 {
		if ds.slat == nil {
			ds.slat = newHist()
		}
		_ = ds.slat.RecordValue(max(int64(slat), histMin))
		ds.sm.add(slat)
		ds.splat.add(slat)
	}
	_ = ds.clat.RecordValue(max(int64(clat), histMin)) // beyond an hour: clamped by hdrhistogram's error, ignored
	if lat != clat && ds.lat == nil {
		ds.lat = newHist()
		_ = ds.lat.Merge(ds.clat)
	}
	if ds.lat != nil {
		_ = ds.lat.RecordValue(max(int64(lat), histMin))
	}
	ds.ios++
	ds.bytes += n
	ds.cplat.add(clat)
	ds.lplat.add(lat)
	ds.cm.add(clat)
	ds.lm.add(lat)
	c.end = max(c.end, done)
	c.dirEnd[d] = max(c.dirEnd[d], done)
	if d == DirRead && !c.phased {
		c.readBefore = true
	}
	i := int((done - c.from) / time.Second)
	for len(ds.secs) <= i {
		ds.secs = append(ds.secs, sample{})
	}
	ds.secs[i].ios++
	ds.secs[i].bytes += n
	s := c.second(done)
	s.IOs++
	s.Bytes += n
	s.latSum += float64(lat)
	if c.logs != nil {
		c.logs.add(d, done-c.from, slat, clat, lat, n)
	}
}

// file counts a file closed at done.
func (c *collector) file(done time.Duration) {
	c.files++
	c.end = max(c.end, done)
	c.second(done).Files++
}

func (c *collector) second(done time.Duration) *Second {
	i := int((done - c.from) / time.Second)
	for len(c.series) <= i {
		c.series = append(c.series, Second{Second: len(c.series)})
	}
	return &c.series[i]
}

// merged returns the collectors' measurements together.
func merged(cs []*collector) *collector {
	if len(cs) == 1 {
		return cs[0]
	}
	m := &collector{from: cs[0].from}
	for _, c := range cs {
		m.from = min(m.from, c.from)
	}
	for _, c := range cs {
		if c.phased {
			// fio's group runtime is its longest job's, per direction
			m.spans = new([3]time.Duration)
			for _, c := range cs {
				for d := range m.spans {
					m.spans[d] = max(m.spans[d], c.span(Dir(d)))
				}
			}
			break
		}
	}
	for _, c := range cs {
		m.end = max(m.end, c.end)
		m.files += c.files
		for i := range m.depth {
			m.depth[i] += c.depth[i]
		}
		for d, ds := range c.dir {
			if ds == nil {
				continue
			}
			if m.dir[d] == nil {
				m.dir[d] = &dirStats{clat: newHist()}
			}
			m.dir[d].merge(ds)
		}
		for _, s := range c.series {
			t := m.second(m.from + time.Duration(s.Second)*time.Second + (c.from - m.from))
			t.IOs += s.IOs
			t.Bytes += s.Bytes
			t.Files += s.Files
			t.latSum += s.latSum
		}
	}
	return m
}

// total returns the measurements of every direction together.
func (c *collector) total() (ios, bytes int64, lm moments, h *hdrhistogram.Histogram) {
	for _, ds := range c.dir {
		if ds == nil {
			continue
		}
		ios += ds.ios
		bytes += ds.bytes
		lm.merge(ds.lm)
		src := ds.lat
		if src == nil {
			src = ds.clat
		}
		if h == nil {
			h = newHist()
		}
		h.Merge(src)
	}
	return
}

// latency summarises a histogram and its moments in microseconds.
func latency(h *hdrhistogram.Histogram, m moments) Latency {
	if h == nil || m.n == 0 {
		return Latency{}
	}
	// A histogram bucket's reported value is its upper edge, which can
	// lie above the largest latency seen: clamp to the max.
	us := func(ns int64) float64 { return float64(min(ns, int64(m.max))) / 1e3 }
	return Latency{
		Min:    float64(m.min) / 1e3,
		Stddev: m.stddev() / 1e3,
		Mean:   m.mean() / 1e3,
		P50:    us(h.ValueAtQuantile(50)),
		P90:    us(h.ValueAtQuantile(90)),
		P99:    us(h.ValueAtQuantile(99)),
		P999:   us(h.ValueAtQuantile(99.9)),
		Max:    us(int64(m.max)),
	}
}

// result turns the measurements into a job's Result.
func (c *collector) result(j *Job) Result {
	ios, bytes, lm, h := c.total()
	r := Result{
		Name: j.Name, RW: j.RW.String(), BS: j.BS, IODepth: j.IODepth, NumJobs: j.NumJobs,
		IOs: ios, Bytes: bytes, Files: c.files, Series: c.series, job: j,
	}
	if len(j.BSSplit) > 0 {
		r.BSSplit = bssplitString(j.BSSplit)
	}
	if c.end > c.from {
		r.Seconds = (c.end - c.from).Seconds()
		r.IOPS = float64(ios) / r.Seconds
		r.MBps = float64(bytes) / 1e6 / r.Seconds
		r.FilesPerS = float64(c.files) / r.Seconds
	}
	r.Lat = latency(h, lm)
	r.LatHist = latHist(h)
	for d, ds := range c.dir {
		if ds == nil {
			continue
		}
		dr := &DirResult{IOs: ds.ios, Bytes: ds.bytes}
		if secs := c.span(Dir(d)).Seconds(); secs > 0 {
			dr.IOPS = float64(ds.ios) / secs
			dr.MBps = float64(ds.bytes) / 1e6 / secs
		}
		src := ds.lat
		if src == nil {
			src = ds.clat
		}
		dr.Lat = latency(src, ds.lm)
		dr.Clat = latency(ds.clat, ds.cm)
		dr.Slat = latency(ds.slat, ds.sm)
		switch Dir(d) {
		case DirRead:
			r.Read = dr
		case DirWrite:
			r.Write = dr
		default:
			r.Trim = dr
		}
	}
	for i := range r.Series {
		if s := &r.Series[i]; s.IOs > 0 {
			s.LatMean = s.latSum / float64(s.IOs) / 1e3
		}
	}
	return r
}
