package bench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
)

// Report is the outcome of a run, in the shape of DESIGN.md's JSON contract
// (target, mode, results, device); Suite and Description are extra.
type Report struct {
	Target      string         `json:"target"`
	Mode        Mode           `json:"mode"`
	Suite       string         `json:"suite,omitempty"`
	Description string         `json:"description,omitempty"`
	Results     []Result       `json:"results"`
	Device      DeviceCounters `json:"device"`
	// DiskUtil is fio's disk_util of the device under the target over
	// the run (absent where there is none: tmpfs, a file share).
	DiskUtil []DiskUtil `json:"disk_util,omitempty"`
}

// SteadyAt is when a job met its steady-state criterion: At seconds into
// its measured window, after which it issued no new I/O.
type SteadyAt struct {
	Criterion string  `json:"criterion"`
	At        float64 `json:"at_s"`
}

// Result is one job's figures. MBps is 10^6 bytes per second; Seconds is
// the measured window (after ramp time) up to the job's last completion,
// or the end of a thinktime after it.
type Result struct {
	Name      string  `json:"name"`
	RW        string  `json:"rw"`
	BS        int64   `json:"bs"`
	IODepth   int     `json:"iodepth"`
	NumJobs   int     `json:"numjobs"`
	IOs       int64   `json:"ios"`
	Bytes     int64   `json:"bytes"`
	Seconds   float64 `json:"seconds"`
	IOPS      float64 `json:"iops"`
	MBps      float64 `json:"mbps"`
	FilesPerS float64 `json:"files_per_s"`
	Lat       Latency `json:"lat_us"`
	// Extra to the contract.
	Files   int64  `json:"files"`
	BSSplit string `json:"bssplit,omitempty"`
	// Per direction, for the directions the job issued (extra to the
	// contract: a mixed job's reads and writes apart).
	Read  *DirResult `json:"read,omitempty"`
	Write *DirResult `json:"write,omitempty"`
	Trim  *DirResult `json:"trim,omitempty"`
	// Settings are the job's options that change nothing the device
	// sees, as the job file gave them; Notes say how nasemu read options
	// it approximates.
	Settings []Setting `json:"settings,omitempty"`
	Notes    []string  `json:"notes,omitempty"`
	// Utilisation is every modelled resource's busy share of the job's
	// window, busiest first, and Bottleneck the busiest (targets whose
	// model accounts its resources: sim:). Jobs that run together share
	// them.
	Utilisation []Use       `json:"utilisation,omitempty"`
	Bottleneck  *Bottleneck `json:"bottleneck,omitempty"`
	// Steady says when a job run with a PTS steady-state criterion
	// (Steady.RoundIOs) met it and ended early; nil when it ran its
	// course (or had no such criterion).
	Steady *SteadyAt `json:"steady,omitempty"`
	job    *Job
	clones []*collector // each instance's, or one for all beyond maxClones
	Series []Second     `json:"-"` // written by WriteDir as CSV
	// LatHist is the measured latency distribution in log-spaced bins
	// (LatBinsPerDecade per decade), for charts.
	LatHist []LatBin `json:"-"`
}

// DirResult is one direction's figures of a job.
type DirResult struct {
	IOs   int64   `json:"ios"`
	Bytes int64   `json:"bytes"`
	IOPS  float64 `json:"iops"`
	MBps  float64 `json:"mbps"`
	Lat   Latency `json:"lat_us"`
	// Clat runs from the return of the submitting system call, Slat from
	// the I/O's preparation to that return (fio's clat and slat). Slat is
	// recorded only where the engine submits asynchronously on a real
	// target, as fio records slat only for engines that queue; elsewhere
	// it is zeros, as fio's slat_ns then is (N 0), so that every target's
	// report has the same shape.
	Clat Latency `json:"clat_us"`
	Slat Latency `json:"slat_us"`
}

// LatBin is one bin of a latency histogram: Count I/Os took at least
// From and less than To microseconds.
type LatBin struct {
	From, To float64
	Count    int64
}

// LatBinsPerDecade is the resolution of Result.LatHist.
const LatBinsPerDecade = 20

// Latency holds latency figures in microseconds.
type Latency struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
	// Min and Stddev (the sample standard deviation, as fio's) are
	// extensions of the contract's fields above.
	Min    float64 `json:"min"`
	Stddev float64 `json:"stddev"`
}

// Formats that WriteFormat knows.
var Formats = []string{"table", "json", "csv"}

// WriteFormat writes the report as "table", "json" or "csv".
func (r *Report) WriteFormat(w io.Writer, format string) error {
	switch format {
	case "table":
		return r.WriteTable(w)
	case "json":
		return r.WriteJSON(w)
	case "csv":
		return r.WriteCSV(w)
	}
	return fmt.Errorf("unknown format %q (known: %s)", format, strings.Join(Formats, ", "))
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

var csvHeader = []string{"target", "mode", "name", "rw", "bs", "iodepth", "numjobs", "ios", "bytes", "seconds",
	"iops", "mbps", "files_per_s", "lat_mean_us", "lat_p50_us", "lat_p90_us", "lat_p99_us", "lat_p999_us", "lat_max_us", "files"}

// WriteCSV writes one row per job with the JSON fields flattened.
func (r *Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write(csvHeader)
	for _, x := range r.Results {
		_ = cw.Write([]string{r.Target, string(r.Mode), x.Name, x.RW, itoa(x.BS), strconv.Itoa(x.IODepth), strconv.Itoa(x.NumJobs),
			itoa(x.IOs), itoa(x.Bytes), ftoa(x.Seconds), ftoa(x.IOPS), ftoa(x.MBps), ftoa(x.FilesPerS),
			ftoa(x.Lat.Mean), ftoa(x.Lat.P50), ftoa(x.Lat.P90), ftoa(x.Lat.P99), ftoa(x.Lat.P999), ftoa(x.Lat.Max), itoa(x.Files)})
	}
	cw.Flush()
	return cw.Error()
}

// WriteTable writes the report for people.
func (r *Report) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "target %s (%s time)", r.Target, r.Mode)
	if r.Suite != "" {
		fmt.Fprintf(w, ", suite %s", r.Suite)
	}
	fmt.Fprintln(w)
	if r.Description != "" {
		fmt.Fprintln(w, r.Description)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "JOB\tRW\tBS\tQD\tT\tIOPS\tMB/s\tFILES/s\tLAT mean µs\tp50\tp99\tp99.9\tmax\tSECONDS\t")
	for _, x := range r.Results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%.0f\t%.2f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t\n",
			x.Name, x.RW, sizeString(x.BS), x.IODepth, x.NumJobs, x.IOPS, x.MBps, x.FilesPerS,
			x.Lat.Mean, x.Lat.P50, x.Lat.P99, x.Lat.P999, x.Lat.Max, x.Seconds)
		// a mixed job's directions on rows of their own, as fio reports them
		dirs := x.directions()
		for _, d := range dirs {
			if len(dirs) < 2 {
				break
			}
			fmt.Fprintf(tw, "%s\t%s\t\t\t\t%.0f\t%.2f\t\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t\t\n",
				"", d.name, d.r.IOPS, d.r.MBps, d.r.Lat.Mean, d.r.Lat.P50, d.r.Lat.P99, d.r.Lat.P999, d.r.Lat.Max)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.Device.Source != "model" {
		_, err := fmt.Fprintln(w, "device: no model counters (real storage)")
		return err
	}
	if r.Device.NANDBytesWritten == 0 { // no SSD in the stack: no NAND, no write amplification
		_, err := fmt.Fprintf(w, "device: host bytes written %.0f (no NAND in the model)\n", r.Device.HostBytesWritten)
		return err
	}
	_, err := fmt.Fprintf(w, "device: host bytes written %.0f, NAND bytes written %.0f, write amplification %.3f\n",
		r.Device.HostBytesWritten, r.Device.NANDBytesWritten, r.Device.WriteAmplification)
	return err
}

// namedDir is one direction's figures with its name.
type namedDir struct {
	name string
	r    *DirResult
}

// directions returns the directions the job issued, in fio's order.
func (x *Result) directions() []namedDir {
	var out []namedDir
	for _, d := range []namedDir{{"read", x.Read}, {"write", x.Write}, {"trim", x.Trim}} {
		if d.r != nil {
			out = append(out, d)
		}
	}
	return out
}

// WriteDir writes results.json and each job's time series as
// NN-name.csv into dir, creating it.
func (r *Report) WriteDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "results.json"))
	if err != nil {
		return err
	}
	if err := r.WriteJSON(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	for i, x := range r.Results {
		name := fmt.Sprintf("%02d-%s.csv", i+1, slug(x.Name))
		if err := writeSeries(filepath.Join(dir, name), x.Series); err != nil {
			return err
		}
	}
	return nil
}

func writeSeries(path string, series []Second) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	cw := csv.NewWriter(f)
	_ = cw.Write([]string{"second", "ios", "bytes", "files", "iops", "mbps", "lat_mean_us"})
	for _, s := range series {
		_ = cw.Write([]string{strconv.Itoa(s.Second), itoa(s.IOs), itoa(s.Bytes), itoa(s.Files),
			itoa(s.IOs), ftoa(float64(s.Bytes) / 1e6), ftoa(s.LatMean)})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

var slugRE = regexp.MustCompile(`[^a-zA-Z0-9]+`)

func slug(s string) string { return strings.Trim(slugRE.ReplaceAllString(s, "-"), "-") }

func itoa(v int64) string   { return strconv.FormatInt(v, 10) }
func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }

// sizeString formats a block size the way fio and the suites name them.
func sizeString(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "M"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "K"
	}
	return strconv.FormatInt(n, 10)
}

func bssplitString(split []BSSplit) string {
	parts := make([]string, len(split))
	for i, s := range split {
		parts[i] = sizeString(s.Size) + "/" + strconv.Itoa(s.Pct)
	}
	return strings.Join(parts, ":")
}
