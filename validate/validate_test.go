package validate

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/nasemu/nasemu/bench"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fixed"
)

const header = "id,system,measured,unit,setup,workload,job,runtime,reason\n"

func TestLoad(t *testing.T) {
	cases, err := Load("x.csv", strings.NewReader(header+
		"# a comment\n"+
		"a,sys,112,MB/s,s1,suite:diskspd,diskspd 4K random read T8 O2,10s,\n"+
		"b,sys,2,x,,,,,a ratio\n"+
		"c,sys,105,MB/s,s2,clients:4,upload#3,,\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 3 || cases[0].Runtime != 10*time.Second || cases[0].Line != 3 || cases[1].Modelled() || cases[2].Job != "upload#3" {
		t.Errorf("cases %+v", cases)
	}
	for _, tc := range []struct{ data, want string }{
		{"id,x\n", "x.csv:1:"},
		{header + "a,sys,-1,MB/s,s,suite:x,j,,\n", "x.csv:2: a: measured"},
		{header + "a,sys,1,MB/s,s,suite:x,j,forever,\n", "x.csv:2: a: runtime"},
		{header + "a,sys,1,kg,s,suite:x,j,,\n", "x.csv:2: a: unit"},
		{header + "a,sys,1,MB/s,s,clients:99,upload,,\n", "x.csv:2: a: workload"},
		{header + "a,sys,1,MB/s,s,clients:2,sideways,,\n", "x.csv:2: a: job"},
		{header + "a,sys,1,MB/s,s,nope,j,,\n", "x.csv:2: a: workload"},
		{header + "a,sys,1,MB/s,s,suite:x,j,,\nb,sys,1\n", "x.csv"},
		{header, "no cases"},
	} {
		_, err := Load("x.csv", strings.NewReader(tc.data))
		if !errors.Is(err, ErrData) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want ErrData with %q", tc.data, err, tc.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	mk := func(e float64) Outcome { return Outcome{Case: Case{Measured: 100}, Predicted: 100 + e, ErrorPct: e} }
	out := []Outcome{mk(-10), mk(30), mk(5), mk(-40), {Case: Case{Reason: "r"}}, {Err: errors.New("x")}}
	s := Summarize(out)
	// |errors| 5, 10, 30, 40: median 20; 2 of 4 within 25 %.
	if s.Cases != 4 || s.MedianAbsErrorPct != 20 || s.Within25Pct != 50 || s.NotModelled != 1 || s.Failed != 1 {
		t.Errorf("summary %+v", s)
	}
	if w := Worst(out, 2); len(w) != 2 || w[0].ErrorPct != -40 || w[1].ErrorPct != 30 {
		t.Errorf("worst %+v", w)
	}
}

// TestRunFixed predicts a queueing result exactly: 4 KiB random reads at
// 8 outstanding on a fixed device of 4 units × 200 µs run at 4/200 µs =
// 20,000 IOPS; cases of one setup and workload share one run and device,
// and a case naming no job of the workload fails alone.
func TestRunFixed(t *testing.T) {
	builds := 0
	build := func(setup string, seed uint64) (models.Device, error) {
		builds++
		return fixed.New(fixed.Config{Capacity: 8 << 30, Units: 4, Read: 200 * time.Microsecond, Write: 400 * time.Microsecond})
	}
	cases := []Case{
		{ID: "r", System: "s", Measured: 20000, Unit: IOPS, Setup: "f", Workload: "suite:diskspd", Job: "diskspd 4K random read T8 O2", Runtime: time.Second},
		{ID: "w", System: "s", Measured: 5000, Unit: IOPS, Setup: "f", Workload: "suite:diskspd", Job: "diskspd 4K random write T8 O2", Runtime: time.Second},
		{ID: "bad", System: "s", Measured: 1, Unit: IOPS, Setup: "f", Workload: "suite:diskspd", Job: "no such job", Runtime: time.Second},
	}
	out := Run(cases, Options{Build: build, Seed: 1, Parallel: 2})
	if builds != 1 {
		t.Errorf("%d devices built for one setup and workload", builds)
	}
	if o := out[0]; o.Err != nil || math.Abs(o.Predicted-20000) > 20 || math.Abs(o.ErrorPct) > 0.1 {
		t.Errorf("read: %+v", o)
	}
	// Writes: 4 units × 400 µs = 10,000 IOPS, +100 % against 5,000.
	if o := out[1]; o.Err != nil || math.Abs(o.Predicted-10000) > 10 || math.Abs(o.ErrorPct-100) > 0.2 {
		t.Errorf("write: %+v", o)
	}
	if o := out[2]; !errors.Is(o.Err, ErrData) {
		t.Errorf("unknown job: %v, want ErrData", o.Err)
	}
}

// TestPickDownload: a copy's download needs the upload that wrote its
// files, and only that.
func TestPickDownload(t *testing.T) {
	all, err := bench.Suite("copy")
	if err != nil {
		t.Fatal(err)
	}
	r := &run{workload: "suite:copy", jobs: []string{"copy 1000x2MiB download"}}
	jobs, err := r.pick(all)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[0].Name != "copy 1000x2MiB upload" || jobs[1].Name != "copy 1000x2MiB download" {
		var names []string
		for _, j := range jobs {
			names = append(names, j.Name)
		}
		t.Errorf("jobs %v", names)
	}
}

// TestCopyClients: two clients copying at once on a device with more
// units than clients each get one unit: 1 MiB per 1 ms, 1048.6 MB/s each,
// and the sum is twice that.
func TestCopyClients(t *testing.T) {
	dev, err := fixed.New(fixed.Config{Capacity: 8 << 30, Units: 4, Read: time.Millisecond, Write: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	res, err := copyClients(dev, 2)
	if err != nil {
		t.Fatal(err)
	}
	const each = float64(1<<20) / 1e-3 / 1e6
	for _, k := range []string{"upload#1", "upload#2", "download#1", "download#2"} {
		if got := res[k].MBps; math.Abs(got/each-1) > 0.001 {
			t.Errorf("%s: %.1f MB/s, want %.1f", k, got, each)
		}
	}
	if got := res["upload"].MBps; math.Abs(got/(2*each)-1) > 0.001 {
		t.Errorf("upload sum %.1f MB/s, want %.1f", got, 2*each)
	}
	if _, err := copyClients(dev, 5); err == nil {
		t.Error("5 clients × 2 GiB fit on 8 GiB")
	}
}

// TestCross: each review's rows are predicted again with the
// calibrations from its own rows off, and only those: review 003's fold
// switches off the registry's 003 entries, a review without calibrations
// none; the fitted outcomes are split by review.
func TestCross(t *testing.T) {
	mk := func(id, review string) Case {
		return Case{ID: id, System: review + " test", Measured: 20000, Unit: IOPS, Setup: "f", Workload: "suite:diskspd", Job: "diskspd 4K random read T8 O2", Runtime: time.Second}
	}
	cases := []Case{mk("a", "003"), mk("b", "009"), mk("c", "003")}
	build := func(off []Calibration) Builder {
		units := 4 + len(off) // a device that shows how many were off
		return func(string, uint64) (models.Device, error) {
			return fixed.New(fixed.Config{Capacity: 8 << 30, Units: units, Read: 200 * time.Microsecond, Write: 400 * time.Microsecond})
		}
	}
	opt := Options{Build: build(nil), Seed: 1, Parallel: 2}
	fitted := Run(cases, opt)
	folds, err := Cross(cases, fitted, opt, build)
	if err != nil {
		t.Fatal(err)
	}
	want003, _ := LeaveOut(cases, "003")
	if len(folds) != 2 || folds[0].Review != "003" || folds[1].Review != "009" {
		t.Fatalf("folds %+v", folds)
	}
	if len(folds[0].Off) != len(want003) || len(want003) == 0 || len(folds[1].Off) != 0 {
		t.Errorf("off: 003 %v (registry %d), 009 %v", folds[0].Off, len(want003), folds[1].Off)
	}
	if len(folds[0].LeftOut) != 2 || len(folds[0].Fitted) != 2 || len(folds[1].LeftOut) != 1 {
		t.Errorf("fold sizes: %d/%d left out, %d fitted", len(folds[0].LeftOut), len(folds[1].LeftOut), len(folds[0].Fitted))
	}
	// 200 µs per read on 4+k units at 16 outstanding: 20,000 × (4+k)/4.
	wantIOPS := 20000 * float64(4+len(want003)) / 4
	if o := folds[0].LeftOut[0]; o.Err != nil || math.Abs(o.Predicted/wantIOPS-1) > 0.01 {
		t.Errorf("003 left out: %+v, want %.0f IOPS", o, wantIOPS)
	}
	if o := folds[1].LeftOut[0]; o.Err != nil || math.Abs(o.Predicted/20000-1) > 0.01 {
		t.Errorf("009 left out: %+v, want the fitted 20000 IOPS", o)
	}
	if _, err := LeaveOut(cases, "007"); !errors.Is(err, ErrData) {
		t.Errorf("an unknown review: %v", err)
	}
}

// TestRunMetrics: latency, per-second peaks and ratios of two jobs of a
// run, on a fixed device of 4 units × 200 µs reads and 400 µs writes at 16
// outstanding: reads wait 16/4 × 200 µs = 800 µs, the busiest second
// holds 20,000 reads, and reads move twice the bytes of writes.
func TestRunMetrics(t *testing.T) {
	build := func(string, uint64) (models.Device, error) {
		return fixed.New(fixed.Config{Capacity: 8 << 30, Units: 4, Read: 200 * time.Microsecond, Write: 400 * time.Microsecond})
	}
	const r, w = "diskspd 4K random read T8 O2", "diskspd 4K random write T8 O2"
	mk := func(id string, m Metric, job string, measured float64) Case {
		return Case{ID: id, System: "s", Measured: measured, Unit: m, Setup: "f", Workload: "suite:diskspd", Job: job, Runtime: 2 * time.Second}
	}
	cases := []Case{
		mk("lat", LatMean, r, 800), mk("p99", LatP99, r, 800), mk("peak", PeakIOPS, r, 20000),
		mk("ratio", Ratio, r+" / "+w, 2),
	}
	for _, o := range Run(cases, Options{Build: build, Seed: 1, Parallel: 2}) {
		if o.Err != nil || math.Abs(o.ErrorPct) > 2 {
			t.Errorf("%s: predicted %g %s (%+.1f %%), err %v", o.ID, o.Predicted, o.Unit, o.ErrorPct, o.Err)
		}
	}
	if _, err := parseCase([]string{"q", "s", "2", "x", "f", "suite:cdm", "one job", "", ""}, 2); err == nil {
		t.Error("a ratio without \"A / B\" parsed")
	}
}
