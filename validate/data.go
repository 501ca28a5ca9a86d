package validate

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ErrData marks a malformed reference file; the message names file:line.
var ErrData = errors.New("bad reference data")

// Metric is the figure a case compares.
type Metric string

// Metrics a case can compare.
const (
	MBps Metric = "MB/s" // 10^6 bytes per second
	IOPS Metric = "IOPS"
	// Latency of the job's I/Os in microseconds: mean and percentiles.
	LatMean Metric = "us"
	LatP50  Metric = "us-p50"
	LatP90  Metric = "us-p90"
	LatP99  Metric = "us-p99"
	LatP999 Metric = "us-p999"
	// The busiest second of the job's per-second samples.
	PeakMBps Metric = "peak-MB/s"
	PeakIOPS Metric = "peak-IOPS"
	// Ratio is one job's MB/s over another's of the same run: the job
	// column says "A / B".
	Ratio Metric = "x"
)

// metrics are the metrics a modelled case can compare.
var metrics = []Metric{MBps, IOPS, LatMean, LatP50, LatP90, LatP99, LatP999, PeakMBps, PeakIOPS, Ratio}

// jobs returns the jobs the case reads its figure off: one, or for a
// ratio the two of "A / B".
func (c *Case) jobs() []string {
	if c.Unit == Ratio {
		a, b, _ := strings.Cut(c.Job, " / ")
		return []string{a, b}
	}
	return []string{c.Job}
}

// Case is one reference measurement and how to reproduce it.
type Case struct {
	ID       string
	System   string  // the measured system, for grouping
	Measured float64 // the published figure
	Unit     Metric
	// Setup is a built-in setup name (or a setup file).
	Setup string
	// Workload is "suite:NAME" (a bench suite), "fio:FILE" (a fio job file
	// next to the data file) or "clients:N" (N clients each copying one
	// file of FileSize, at the same time, each over its own connection).
	Workload string
	// Job is the job of the workload whose result is the prediction;
	// for clients:N it is "upload" or "download", with a "#K" suffix to
	// take client K's rate instead of the sum.
	Job string
	// Runtime, when set, shortens the workload's time-based jobs (the
	// result is in steady state well before the measured duration).
	Runtime time.Duration
	// Reason is why the case cannot be modelled; such cases are listed,
	// not run.
	Reason string
	// Line is where the case was defined.
	Line int
}

// Modelled reports whether the case is run.
func (c *Case) Modelled() bool { return c.Reason == "" }

// columns of a reference file, in order.
var columns = []string{"id", "system", "measured", "unit", "setup", "workload", "job", "runtime", "reason"}

// Load reads reference cases from CSV with the header
// id,system,measured,unit,setup,workload,job,runtime,reason. Lines starting
// with '#' are comments. file names the data in errors, which wrap ErrData
// and give file:line.
func Load(file string, r io.Reader) ([]Case, error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.FieldsPerRecord = len(columns)
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%w: %s:1: %v", ErrData, file, csvErr(err))
	}
	for i, c := range columns {
		if strings.TrimSpace(head[i]) != c {
			return nil, fmt.Errorf("%w: %s:1: column %d is %q, want %q (header %s)", ErrData, file, i+1, head[i], c, strings.Join(columns, ","))
		}
	}
	var cases []Case
	seen := map[string]int{}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrData, file, csvErr(err))
		}
		c, err := parseCase(rec, line)
		if err != nil {
			return nil, fmt.Errorf("%w: %s:%d: %v", ErrData, file, line, err)
		}
		if prev, dup := seen[c.ID]; dup {
			return nil, fmt.Errorf("%w: %s:%d: id %s already defined on line %d", ErrData, file, line, c.ID, prev)
		}
		seen[c.ID] = line
		cases = append(cases, c)
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("%w: %s: no cases", ErrData, file)
	}
	return cases, nil
}

func csvErr(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("line %d: %v", pe.Line, pe.Err)
	}
	return err
}

func parseCase(rec []string, line int) (Case, error) {
	for i := range rec {
		rec[i] = strings.TrimSpace(rec[i])
	}
	c := Case{ID: rec[0], System: rec[1], Unit: Metric(rec[3]), Setup: rec[4], Workload: rec[5], Job: rec[6], Reason: rec[8], Line: line}
	if c.ID == "" {
		return c, errors.New("id is empty")
	}
	if c.System == "" {
		return c, fmt.Errorf("%s: system is empty", c.ID)
	}
	v, err := strconv.ParseFloat(rec[2], 64)
	if err != nil || v <= 0 {
		return c, fmt.Errorf("%s: measured %q is not a positive number", c.ID, rec[2])
	}
	c.Measured = v
	if c.Unit == "" {
		return c, fmt.Errorf("%s: unit is empty", c.ID)
	}
	if c.Reason == "" && !slices.Contains(metrics, c.Unit) {
		return c, fmt.Errorf("%s: unit %q (a modelled case compares one of %v)", c.ID, rec[3], metrics)
	}
	if c.Reason == "" && c.Unit == Ratio && !strings.Contains(c.Job, " / ") {
		return c, fmt.Errorf("%s: a ratio's job is \"A / B\", not %q", c.ID, c.Job)
	}
	if rec[7] != "" {
		d, err := time.ParseDuration(rec[7])
		if err != nil || d <= 0 {
			return c, fmt.Errorf("%s: runtime %q is not a positive duration (e.g. 20s)", c.ID, rec[7])
		}
		c.Runtime = d
	}
	if c.Reason != "" {
		return c, nil
	}
	if c.Setup == "" || c.Workload == "" || c.Job == "" {
		return c, fmt.Errorf("%s: a modelled case needs setup, workload and job (or a reason why it cannot be modelled)", c.ID)
	}
	kind, arg, ok := strings.Cut(c.Workload, ":")
	if !ok || arg == "" {
		return c, fmt.Errorf("%s: workload %q: want suite:NAME, fio:FILE or clients:N", c.ID, c.Workload)
	}
	switch kind {
	case "suite", "fio":
	case "clients":
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 || n > maxClients {
			return c, fmt.Errorf("%s: workload %q: want clients:1..%d", c.ID, c.Workload, maxClients)
		}
		dir, _, _ := strings.Cut(c.Job, "#")
		if dir != "upload" && dir != "download" {
			return c, fmt.Errorf("%s: job %q: a clients workload's job is upload or download (with #K for client K)", c.ID, c.Job)
		}
	default:
		return c, fmt.Errorf("%s: workload kind %q: want suite, fio or clients", c.ID, kind)
	}
	return c, nil
}
