package report

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nasemu/nasemu/bench"
	"github.com/nasemu/nasemu/models/fixed"
	"github.com/nasemu/nasemu/models/setup"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files of the charts' data")

// fixedRun runs a suite, shortened to runtime per job, on a simulated
// fixed-cost device: deterministic, fast, with real per-second series.
func fixedRun(t testing.TB, name, suite string, service time.Duration, units int, runtime time.Duration) *bench.Report {
	t.Helper()
	dev, err := fixed.New(fixed.Config{Capacity: 4 << 30, Units: units, Read: service, Write: 2 * service, BytesPerSecond: 500e6})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := bench.Suite(suite)
	if err != nil {
		t.Fatal(err)
	}
	jobs = bench.Overrides{Runtime: runtime}.Apply(jobs)
	tg := bench.NewSim(name, bench.SimSetup{Device: dev, Description: "fixed device, " + service.String() + " × " + string(rune('0'+units)) + " units"})
	rep, err := bench.Run(tg, jobs, bench.Options{Seed: 1, Suite: suite})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func testProfile() *bench.SSDProfile {
	p := &bench.SSDProfile{Target: "sim:test-ssd", Capacity: 1 << 30}
	for i, iops := range []float64{50e3, 100e3, 150e3, 160e3} {
		op := float64(i) / 10
		lv := bench.ProfileLevel{Overprovision: op, UserBytes: int64(float64(1<<30) * (1 - op)), Steady: true,
			SteadyIOPS: iops, WA: 1 + 4/(1+float64(i)*2)}
		for r := range 6 {
			lv.Rounds = append(lv.Rounds, bench.ProfileRound{Written: int64(r+1) << 29, IOPS: iops * (1 + 0.5*math.Exp(-float64(r)))})
		}
		p.Levels = append(p.Levels, lv)
	}
	p.Recommended = bench.Knee(p.Levels)
	return p
}

func testComparison(t testing.TB) *Comparison {
	one, two := 1, 0
	slow := Facts{UsableBytes: 12e12, Tolerates: &one, Rebuild: 9*time.Hour + 20*time.Minute}
	slow.SetPrice(setup.Price{Parts: []setup.PricePart{{Item: "nas-x", Count: 1, UnitUSD: 999, Date: "2025-01"}, {Item: "drive-y", Count: 4, UnitUSD: 250, Date: "2024-06"}}})
	fast := Facts{UsableBytes: 1e12, Tolerates: &two}
	fast.SetPrice(setup.Price{Parts: []setup.PricePart{{Item: "drive-z", Count: 2, UnitUSD: 100}}, Unknown: []string{"NAS inline-nas (inline)"}})
	return &Comparison{Workload: "cdm", Runs: []Run{
		{Report: fixedRun(t, "sim:slow", "cdm", 200*time.Microsecond, 1, 2*time.Second), Facts: slow},
		{Report: fixedRun(t, "sim:fast", "cdm", 50*time.Microsecond, 4, 2*time.Second), Facts: fast},
	}}
}

// golden compares charts' data with testdata/name.json, or rewrites it.
func golden(t *testing.T, name string, charts []Chart) {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteJSON(&buf, charts); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", name+".json")
	if *rewrite {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -rewrite to create it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("charts of %s differ from %s (go test -rewrite rewrites it after a deliberate change):\n%s",
			name, path, firstDiff(string(want), buf.String()))
	}
}

func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return "line " + itoa(i+1) + ":\n  want " + x + "\n  got  " + y
		}
	}
	return ""
}

func itoa(i int) string { return ftoa(float64(i)) }

func TestGoldenRunCDM(t *testing.T) {
	golden(t, "run-cdm", RunCharts(fixedRun(t, "sim:fixed", "cdm", 100*time.Microsecond, 2, 2*time.Second)))
}

func TestGoldenRunIometer(t *testing.T) {
	golden(t, "run-iometer", RunCharts(fixedRun(t, "sim:fixed", "iometer", 100*time.Microsecond, 1, time.Second)))
}

func TestGoldenCompare(t *testing.T) {
	golden(t, "compare", CompareCharts(testComparison(t)))
}

func TestGoldenProfile(t *testing.T) {
	golden(t, "profile", ProfileCharts(testProfile()))
}

// The charts say what the results say: bars carry each job's figures,
// the time series adds up to the job's I/Os, the CDF passes through its
// percentiles and the histogram holds the slower half of the I/Os.
func TestChartsMatchResults(t *testing.T) {
	rep := fixedRun(t, "sim:fixed", "cdm", 100*time.Microsecond, 2, 3*time.Second)
	charts := RunCharts(rep)
	byName := map[string]Chart{}
	for _, c := range charts {
		byName[c.Name] = c
	}
	cdm, ok := byName["cdm"]
	if !ok {
		t.Fatal("no CrystalDiskMark panel for suite cdm")
	}
	p := cdm.Panels[0]
	if got := strings.Join(p.Categories, ","); got != "SEQ1M Q8T1,SEQ1M Q1T1,RND4K Q32T1,RND4K Q1T1" {
		t.Errorf("CDM rows %s", got)
	}
	for i, x := range rep.Results {
		row, col := i%4, i/4 // reads first, then writes
		if got := p.Series[col].Y[row]; got != x.MBps {
			t.Errorf("CDM %s %s: %g, result %g", p.Categories[row], p.Series[col].Label, got, x.MBps)
		}
		if got := byName["bars"].Panels[1].Series[col].Y[row]; got != x.IOPS {
			t.Errorf("bars %s: IOPS %g, result %g", x.Name, got, x.IOPS)
		}
		base := strings.ToLower(slug(x.Name))
		tc := byName[strings.TrimSpace(itoa2(i+1)+"-"+slug(x.Name))+"-time"]
		if len(tc.Panels) != 2 {
			t.Fatalf("%s: no time chart (%s)", x.Name, base)
		}
		// Rate × span summed over the seconds is the job's I/O count.
		ios := 0.0
		s := tc.Panels[0].Series[0]
		for k := range s.X {
			span := 2 * (s.X[k] - float64(k)) // second k's rate is plotted at the middle of its span
			ios += s.Y[k] * span
		}
		if math.Abs(ios-float64(x.IOs)) > 0.5+1e-6*float64(x.IOs) {
			t.Errorf("%s: the time series holds %.1f I/Os, the result %d", x.Name, ios, x.IOs)
		}
		lc := byName[itoa2(i+1)+"-"+slug(x.Name)+"-latency"]
		cdf := lc.Panels[0].Series[0]
		if cdf.X[0] != x.Lat.P50 || cdf.Y[0] != 50 || cdf.X[len(cdf.X)-1] != x.Lat.Max || cdf.Y[len(cdf.Y)-1] != 100 {
			t.Errorf("%s: CDF %v %v does not run from p50 %g to max %g", x.Name, cdf.X, cdf.Y, x.Lat.P50, x.Lat.Max)
		}
		h := lc.Panels[1].Series[0]
		share := 0.0
		for _, y := range h.Y {
			share += y
		}
		if math.Abs(share-100) > 0.01 {
			t.Errorf("%s: histogram holds %.3f %% of I/Os, want all of them", x.Name, share)
		}
		// Every bin is 1/LatBinsPerDecade of a decade, and the bins
		// around the median hold it.
		for k := range h.Y {
			if w := math.Log10(h.X[k+1] / h.X[k]); h.Y[k] > 0 && math.Abs(w*bench.LatBinsPerDecade-1) > 1e-6 {
				t.Errorf("%s: bin %d spans %.4f decades", x.Name, k, w)
			}
		}
		below := 0.0
		for k, y := range h.Y {
			if h.X[k+1] <= x.Lat.P50*(1+1e-9) {
				below += y
			}
		}
		if below > 50+0.01 {
			t.Errorf("%s: %.2f %% of I/Os in bins below p50 %g µs", x.Name, below, x.Lat.P50)
		}
	}
}

func itoa2(i int) string {
	s := itoa(i)
	if len(s) < 2 {
		s = "0" + s
	}
	return s
}

// Ratios are against the first target; unknown facts print "-".
func TestComparisonTable(t *testing.T) {
	c := testComparison(t)
	rows := c.Rows()
	find := func(name string) []string {
		for _, r := range rows {
			if r[0] == name {
				return r
			}
		}
		t.Fatalf("no row %q", name)
		return nil
	}
	// 999 + 4 × 250 = 1999 for 12 TB: 166.58 per TB; the other's NAS has
	// no price, so it has no total and says why.
	if r := find("price (NAS + drives)"); r[1] != "$1999" || r[2] != "unknown: no price for NAS inline-nas (inline)" {
		t.Errorf("price row %q", r)
	}
	if r := find("$ per usable TB"); r[1] != "$167" || r[2] != "-" {
		t.Errorf("$/TB row %q", r)
	}
	if f := c.Runs[0].Facts; math.Abs(f.USDPerTB-1999.0/12) > 1e-9 {
		t.Errorf("$/TB %v, want 1999/12", f.USDPerTB)
	}
	// Each job has a bottleneck row, from the model's accounting: the
	// fixed device's units are its only resource.
	if r := find(a0(c) + " bottleneck"); !strings.Contains(r[1], "drives: units") || !strings.Contains(r[2], "drives: units") {
		t.Errorf("bottleneck row %q", r)
	}
	page := ComparePage(c)
	if len(page.Tables) != 3 || len(page.Tables[1].Rows) != 1+2+1+1 || len(page.Tables[2].Rows) != 1+len(c.Runs[0].Report.Results) {
		t.Errorf("compare page tables %+v, want a price table of 2 + 1 parts and 1 unknown, and a Pareto row per job", page.Tables)
	}
	if r := find("rebuild time"); r[1] != "9h20m" || r[2] != "-" {
		t.Errorf("rebuild row %q", r)
	}
	if r := find("drives tolerated to fail"); r[1] != "1" || r[2] != "0" {
		t.Errorf("tolerated row %q", r)
	}
	a, b := c.Runs[0].Report.Results[2], c.Runs[1].Report.Results[2]
	r := find(a.Name + " IOPS")
	if want := Number(b.IOPS) + " (" + ratioString(b.IOPS/a.IOPS) + ")"; r[2] != want {
		t.Errorf("%s IOPS: %q, want %q", a.Name, r[2], want)
	}
	var buf bytes.Buffer
	for _, f := range bench.Formats {
		buf.Reset()
		if err := c.WriteFormat(&buf, f); err != nil || buf.Len() == 0 {
			t.Errorf("format %s: %v", f, err)
		}
	}
}

// The Pareto frontier holds the priced targets no other priced target
// matches on both price and the metric: a cheaper slower one and a dearer
// faster one both stay, one both dearer and slower drops, an unpriced one
// cannot be placed.
func TestPareto(t *testing.T) {
	run := func(price, iops float64) Run {
		return Run{Report: &bench.Report{Results: []bench.Result{{Name: "x", IOPS: iops}}}, Facts: Facts{PriceUSD: price}}
	}
	c := &Comparison{Runs: []Run{run(1000, 100), run(2000, 50), run(3000, 300), run(0, 1e6), run(1000, 100)}}
	got := c.Pareto(0, func(r bench.Result) float64 { return r.IOPS })
	if want := []int{0, 2, 4}; !slices.Equal(got, want) {
		t.Errorf("frontier %v, want %v", got, want)
	}
}

// a0 is the first job's name of a comparison.
func a0(c *Comparison) string { return c.Runs[0].Report.Results[0].Name }

func TestRenderBothFormats(t *testing.T) {
	for _, c := range append(ProfileCharts(testProfile()), CompareCharts(testComparison(t))...) {
		svg, png, err := Render(c)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(svg[:200], []byte("<svg")) || !bytes.HasPrefix(png, []byte("\x89PNG")) {
			t.Errorf("%s: not an SVG and a PNG", c.Name)
		}
	}
	if _, _, err := Render(Chart{Name: "bad", Panels: []Panel{{Kind: Bars, Categories: []string{"a"}, Series: []Series{{Y: []float64{1, 2}}}}}}); err == nil {
		t.Error("bars with more values than categories drew")
	}
}
