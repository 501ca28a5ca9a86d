package bench

import (
	"math"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// latHist merges the HDR histogram's buckets into LatBinsPerDecade
// log-spaced bins (µs), dropping empty ones.
func (c *collector) latHist() []LatBin {
	var bins []LatBin
	for _, b := range c.hist.Distribution() {
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

// collector gathers one job's measurements over all of its instances.
type collector struct {
	hist   *hdrhistogram.Histogram
	from   time.Duration // start of the measured window
	end    time.Duration // last completion counted
	ios    int64
	bytes  int64
	files  int64
	latSum float64 // ns, for an exact mean
	latMax time.Duration
	series []Second
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
	return &collector{hist: hdrhistogram.New(histMin, histMax, histDigits), from: from}
}

// record counts an I/O of n bytes with latency lat that completed at done.
func (c *collector) record(lat time.Duration, n int64, done time.Duration) {
	_ = c.hist.RecordValue(max(int64(lat), histMin)) // beyond an hour: clamped by hdrhistogram's error, ignored
	c.ios++
	c.bytes += n
	c.latSum += float64(lat)
	c.latMax = max(c.latMax, lat)
	c.end = max(c.end, done)
	s := c.second(done)
	s.IOs++
	s.Bytes += n
	s.latSum += float64(lat)
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

// result turns the measurements into a job's Result.
func (c *collector) result(j *Job) Result {
	r := Result{
		Name: j.Name, RW: j.RW.String(), BS: j.BS, IODepth: j.IODepth, NumJobs: j.NumJobs,
		IOs: c.ios, Bytes: c.bytes, Files: c.files, Series: c.series,
	}
	if len(j.BSSplit) > 0 {
		r.BSSplit = bssplitString(j.BSSplit)
	}
	if c.end > c.from {
		r.Seconds = (c.end - c.from).Seconds()
		r.IOPS = float64(c.ios) / r.Seconds
		r.MBps = float64(c.bytes) / 1e6 / r.Seconds
		r.FilesPerS = float64(c.files) / r.Seconds
	}
	if c.ios > 0 {
		// A histogram bucket's reported value is its upper edge, which
		// can lie above the largest latency seen: clamp to the max.
		us := func(ns int64) float64 { return float64(min(ns, int64(c.latMax))) / 1e3 }
		r.Lat = Latency{
			Mean: c.latSum / float64(c.ios) / 1e3,
			P50:  us(c.hist.ValueAtQuantile(50)),
			P90:  us(c.hist.ValueAtQuantile(90)),
			P99:  us(c.hist.ValueAtQuantile(99)),
			P999: us(c.hist.ValueAtQuantile(99.9)),
			Max:  us(int64(c.latMax)),
		}
	}
	r.LatHist = c.latHist()
	for i := range r.Series {
		if s := &r.Series[i]; s.IOs > 0 {
			s.LatMean = s.latSum / float64(s.IOs) / 1e3
		}
	}
	return r
}
