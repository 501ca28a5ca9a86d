package bench

import (
	"bufio"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"time"
)

// fio's latency histogram (stat.h): 29 groups of 64 buckets, each group
// twice as wide as the one before, the first 128 values exact; a value's
// bucket has a relative error of at most 1/64. The fio JSON output and
// the histogram logs are in these buckets, so fio's tools read them.
const (
	platBits   = 6
	platVal    = 1 << platBits
	platGroups = 29
	platNR     = platGroups * platVal
)

// platIndex returns the bucket of a value in ns (fio plat_val_to_idx).
func platIndex(v uint64) int {
	msb := 0
	if v != 0 {
		msb = bits.Len64(v) - 1
	}
	if msb <= platBits {
		return int(v)
	}
	errBits := msb - platBits
	base := (errBits + 1) << platBits
	off := (platVal - 1) & int(v>>errBits)
	return min(base+off, platNR-1)
}

// platValue returns the value a bucket stands for: the middle of its
// range (fio plat_idx_to_val).
func platValue(idx int) uint64 {
	if idx < platVal<<1 {
		return uint64(idx)
	}
	errBits := (idx >> platBits) - 1
	base := uint64(1) << (errBits + platBits)
	k := idx % platVal
	return base + uint64((float64(k)+0.5)*float64(uint64(1)<<errBits))
}

// platHist is a latency histogram in fio's buckets.
type platHist [platNR]uint64

func (h *platHist) add(ns time.Duration) { h[platIndex(uint64(max(ns, 0)))]++ }

func (h *platHist) merge(o *platHist) {
	for i, v := range o {
		h[i] += v
	}
}

// percentile returns fio's percentile of the histogram (stat.c
// calc_clat_percentiles: the first bucket whose cumulative count reaches
// the rank). The rank is a fraction, as fio compares the count with
// p/100 × total in long double: the 99.9th of 1500 I/Os is the bucket
// holding the 1499th, not the 1498th.
func (h *platHist) percentile(total uint64, p float64) uint64 {
	if total == 0 {
		return 0
	}
	rank := max(p/100*float64(total), 1)
	var sum uint64
	for i, v := range h {
		sum += v
		if float64(sum) >= rank {
			return platValue(i)
		}
	}
	return platValue(platNR - 1)
}

// LogsWanted reports whether the job writes any of fio's logs.
func (j *Job) LogsWanted() bool {
	return j.BWLog != "" || j.LatLog != "" || j.IOPSLog != "" || j.HistLog != ""
}

// maxLogEntries bounds each log of a job instance; a log that reaches it
// stops (the report notes it).
const maxLogEntries = 1 << 20

// logEntry is one line of a fio log.
type logEntry struct {
	ms  int64
	val uint64
	dir Dir
	bs  int64
}

// histEntry is one line of a histogram log.
type histEntry struct {
	ms   int64
	dir  Dir
	plat *platHist // the window's counts
}

// jobLogs gathers an instance's fio logs: per-I/O entries, or windowed
// averages with log_avg_msec (bandwidth and IOPS always in windows, of
// 500 ms without it, as fio samples them).
type jobLogs struct {
	job                      *Job
	avg                      time.Duration
	bw, iops, lat, clat, slt []logEntry
	hist                     []histEntry
	full                     bool
	// the current window per direction
	winEnd [3]time.Duration
	bytes  [3]int64
	ios    [3]int64
	latSum [3]int64
	clSum  [3]int64
	slSum  [3]int64
	winH   [3]*platHist
}

func newJobLogs(j *Job) *jobLogs {
	l := &jobLogs{job: j, avg: j.LogAvg}
	if l.avg <= 0 {
		l.avg = 500 * time.Millisecond
	}
	for d := range l.winEnd {
		l.winEnd[d] = l.avg
	}
	return l
}

// add logs an I/O that completed at t (since the job's measured start).
func (l *jobLogs) add(d Dir, t, slat, clat, lat time.Duration, n int64) {
	if l.full {
		return
	}
	for t >= l.winEnd[d] {
		l.flush(d)
	}
	l.bytes[d] += n
	l.ios[d]++
	l.latSum[d] += int64(lat)
	l.clSum[d] += int64(clat)
	l.slSum[d] += int64(slat)
	if l.job.HistLog != "" {
		if l.winH[d] == nil {
			l.winH[d] = new(platHist)
		}
		l.winH[d].add(clat)
	}
	if l.job.LatLog != "" && l.job.LogAvg == 0 {
		ms := t.Milliseconds()
		l.lat = append(l.lat, logEntry{ms, uint64(lat), d, n})
		l.clat = append(l.clat, logEntry{ms, uint64(clat), d, n})
		l.slt = append(l.slt, logEntry{ms, uint64(slat), d, n})
		l.full = len(l.lat) >= maxLogEntries
	}
}

// flush closes direction d's current window.
func (l *jobLogs) flush(d Dir) {
	ms := l.winEnd[d].Milliseconds()
	secs := l.avg.Seconds()
	if l.ios[d] > 0 {
		if l.job.BWLog != "" {
			l.bw = append(l.bw, logEntry{ms, uint64(float64(l.bytes[d]) / 1024 / secs), d, 0})
		}
		if l.job.IOPSLog != "" {
			l.iops = append(l.iops, logEntry{ms, uint64(float64(l.ios[d]) / secs), d, 0})
		}
		if l.job.LatLog != "" && l.job.LogAvg > 0 {
			l.lat = append(l.lat, logEntry{ms, uint64(l.latSum[d] / l.ios[d]), d, 0})
			l.clat = append(l.clat, logEntry{ms, uint64(l.clSum[d] / l.ios[d]), d, 0})
			l.slt = append(l.slt, logEntry{ms, uint64(l.slSum[d] / l.ios[d]), d, 0})
		}
		if l.winH[d] != nil {
			l.hist = append(l.hist, histEntry{ms, d, l.winH[d]})
			l.winH[d] = nil
		}
	}
	l.bytes[d], l.ios[d], l.latSum[d], l.clSum[d], l.slSum[d] = 0, 0, 0, 0, 0
	l.winEnd[d] += l.avg
	l.full = l.full || len(l.bw)+len(l.iops)+len(l.hist) >= maxLogEntries
}

// WriteLogs writes the fio logs that the jobs asked for (write_bw_log,
// write_lat_log, write_iops_log, write_hist_log) into dir, named as fio
// names them: PREFIX_bw.N.log, PREFIX_lat.N.log, PREFIX_clat.N.log,
// PREFIX_slat.N.log, PREFIX_iops.N.log, PREFIX_clat_hist.N.log, N
// counting a job's instances from 1.
func (r *Report) WriteLogs(dir string) error {
	for _, x := range r.Results {
		for i, c := range x.clones {
			l := c.logs
			if l == nil {
				continue
			}
			for d := range l.winEnd {
				if l.ios[d] > 0 {
					l.flush(Dir(d))
				}
			}
			j := l.job
			n := i + 1
			for _, f := range []struct {
				prefix, kind string
				entries      []logEntry
			}{{j.BWLog, "bw", l.bw}, {j.IOPSLog, "iops", l.iops}, {j.LatLog, "lat", l.lat}, {j.LatLog, "clat", l.clat}, {j.LatLog, "slat", l.slt}} {
				if f.prefix == "" {
					continue
				}
				if err := writeLog(filepath.Join(dir, fmt.Sprintf("%s_%s.%d.log", f.prefix, f.kind, n)), func(w *bufio.Writer) {
					for _, e := range f.entries {
						fmt.Fprintf(w, "%d, %d, %d, %d, 0\n", e.ms, e.val, e.dir, e.bs)
					}
				}); err != nil {
					return err
				}
			}
			if j.HistLog != "" {
				if err := writeLog(filepath.Join(dir, fmt.Sprintf("%s_clat_hist.%d.log", j.HistLog, n)), func(w *bufio.Writer) {
					for _, e := range l.hist {
						fmt.Fprintf(w, "%d, %d, 0", e.ms, e.dir)
						for _, v := range e.plat {
							fmt.Fprintf(w, ", %d", v)
						}
						w.WriteByte('\n')
					}
				}); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func writeLog(path string, write func(*bufio.Writer)) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|oNoFollow, 0o644)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	write(w)
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
