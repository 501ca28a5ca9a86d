package report

import (
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/nasemu/nasemu/bench"
)

// RunCharts returns the charts of one run: per job, IOPS and MB/s over
// time and its latency distribution; for the run, bars of every job's
// MB/s and IOPS; for CrystalDiskMark suites, CrystalDiskMark's panel.
func RunCharts(r *bench.Report) []Chart {
	var charts []Chart
	if p, ok := cdmPanel(r.Results); ok && strings.HasPrefix(r.Suite, "cdm") {
		p.Title = r.Target
		charts = append(charts, Chart{Name: "cdm", Title: "CrystalDiskMark", Panels: []Panel{p},
			Note: "MB/s (10^6 bytes/s) of each test, laid out as CrystalDiskMark shows them."})
	}
	if len(r.Results) > 0 {
		charts = append(charts, suiteBars(r))
	}
	for i, x := range r.Results {
		base := fmt.Sprintf("%02d-%s", i+1, slug(x.Name))
		if c, ok := timeChart(base, x); ok {
			charts = append(charts, c)
		}
		if c, ok := latencyChart(base, x); ok {
			charts = append(charts, c)
		}
	}
	return charts
}

var slugRE = regexp.MustCompile(`[^a-zA-Z0-9]+`)

// slug makes a file name of a job name, as bench.Report.WriteDir does.
func slug(s string) string { return strings.Trim(slugRE.ReplaceAllString(s, "-"), "-") }

// timeChart plots a job's per-second IOPS and MB/s. A second's rate is
// plotted at the middle of the span it covers: the last second, cut short
// by the end of the job, is divided by the part of it that the job lasted
// (or joins the second before when it is a sliver).
func timeChart(name string, x bench.Result) (Chart, bool) {
	if len(x.Series) == 0 {
		return Chart{}, false
	}
	iops := Series{Label: x.Name}
	mbps := Series{Label: x.Name}
	n := len(x.Series)
	for i := 0; i < n; i++ {
		s := x.Series[i]
		ios, bytes, span := float64(s.IOs), float64(s.Bytes), 1.0
		if i == n-1 {
			span = min(max(x.Seconds-float64(s.Second), 0), 1)
		}
		if i == n-2 && x.Seconds-float64(x.Series[n-1].Second) < 0.05 {
			// The last second is a sliver of drain whose rate would be
			// noise: it joins this one.
			last := x.Series[n-1]
			ios, bytes = ios+float64(last.IOs), bytes+float64(last.Bytes)
			span += max(x.Seconds-float64(last.Second), 0)
			i++
		}
		if span <= 0 {
			continue
		}
		mid := float64(s.Second) + span/2
		iops.X, iops.Y = append(iops.X, mid), append(iops.Y, ios/span)
		mbps.X, mbps.Y = append(mbps.X, mid), append(mbps.Y, bytes/1e6/span)
	}
	if len(iops.X) == 0 {
		return Chart{}, false
	}
	return Chart{
		Name: name + "-time", Title: x.Name,
		Panels: []Panel{
			{Kind: Lines, Title: "IOPS per second", XLabel: "seconds", YLabel: "IOPS", Series: []Series{iops}},
			{Kind: Lines, Title: "MB/s per second", XLabel: "seconds", YLabel: "MB/s", Series: []Series{mbps}},
		},
		Note: "Completions per second of the measured window (after ramp time), at the middle of each second.",
	}, true
}

// quantiles are the points of the latency distribution a Result keeps.
var quantiles = []struct {
	q    float64
	name string
}{{0.5, "p50"}, {0.9, "p90"}, {0.99, "p99"}, {0.999, "p99.9"}, {1, "max"}}

func latencyPoints(l bench.Latency) []float64 { return []float64{l.P50, l.P90, l.P99, l.P999, l.Max} }

// latencyChart plots a job's latency distribution: the cumulative share
// of I/Os against latency at the percentiles the result keeps, and the
// histogram those percentiles imply for the slower half of the I/Os:
// between two percentiles the I/Os are taken as spread evenly over the
// logarithm of latency, so a bin's height is its share of I/Os per decade
// of latency.
func latencyChart(name string, x bench.Result) (Chart, bool) {
	if x.IOs == 0 || x.Lat.Max <= 0 {
		return Chart{}, false
	}
	lat := latencyPoints(x.Lat)
	cdf := Series{Label: x.Name}
	for i, q := range quantiles {
		cdf.X = append(cdf.X, lat[i])
		cdf.Y = append(cdf.Y, q.q*100)
	}
	hist := Series{Label: x.Name}
	for _, b := range x.LatHist {
		switch {
		case len(hist.X) == 0:
			hist.X = append(hist.X, b.From)
		case b.From != hist.X[len(hist.X)-1]: // an empty stretch between bins
			hist.X = append(hist.X, b.From)
			hist.Y = append(hist.Y, 0)
		}
		hist.X = append(hist.X, b.To)
		hist.Y = append(hist.Y, 100*float64(b.Count)/float64(x.IOs))
	}
	panels := []Panel{{Kind: Lines, Title: "cumulative share of I/Os", XLabel: "latency (µs)", YLabel: "% of I/Os at or below",
		LogX: true, Series: []Series{cdf}}}
	if len(hist.Y) > 0 {
		panels = append(panels, Panel{Kind: Steps, Title: "histogram",
			XLabel: "latency (µs)", YLabel: fmt.Sprintf("%% of I/Os per 1/%d decade", bench.LatBinsPerDecade), LogX: true, Series: []Series{hist}})
	}
	return Chart{
		Name: name + "-latency", Title: x.Name, Panels: panels,
		Note: fmt.Sprintf("Latency from issue to completion: p50 %s µs, p90 %s, p99 %s, p99.9 %s, max %s; mean %s µs. "+
			"The histogram is measured, in %d log-spaced bins per decade.",
			Number(x.Lat.P50), Number(x.Lat.P90), Number(x.Lat.P99), Number(x.Lat.P999), Number(x.Lat.Max), Number(x.Lat.Mean), bench.LatBinsPerDecade),
	}, true
}

// readWrite splits job names of the form "TEST read" / "TEST write" into
// tests, in order of first appearance, and each test's read and write
// result index (-1: none). ok is false unless every name has that form.
func readWrite(results []bench.Result) (tests []string, read, write []int, ok bool) {
	at := map[string]int{}
	for i, x := range results {
		sp := strings.LastIndexByte(x.Name, ' ')
		if sp < 0 {
			return nil, nil, nil, false
		}
		test, dir := x.Name[:sp], x.Name[sp+1:]
		if dir != "read" && dir != "write" {
			return nil, nil, nil, false
		}
		k, seen := at[test]
		if !seen {
			k = len(tests)
			at[test] = k
			tests = append(tests, test)
			read, write = append(read, -1), append(write, -1)
		}
		if dir == "read" {
			read[k] = i
		} else {
			write[k] = i
		}
	}
	return tests, read, write, len(tests) > 0
}

// cdmPanel lays out CrystalDiskMark's results: a row per test, read and
// write MB/s.
func cdmPanel(results []bench.Result) (Panel, bool) {
	tests, read, write, ok := readWrite(results)
	if !ok {
		return Panel{}, false
	}
	p := Panel{Kind: CDM, Categories: tests, Series: []Series{{Label: "Read"}, {Label: "Write"}}}
	for k := range tests {
		p.Series[0].Y = append(p.Series[0].Y, mbpsAt(results, read[k]))
		p.Series[1].Y = append(p.Series[1].Y, mbpsAt(results, write[k]))
	}
	return p, true
}

func mbpsAt(results []bench.Result, i int) float64 {
	if i < 0 {
		return math.NaN()
	}
	return results[i].MBps
}

// suiteBars shows every job's MB/s and IOPS; jobs named "TEST read" and
// "TEST write" are grouped by test.
func suiteBars(r *bench.Report) Chart {
	c := Chart{Name: "bars", Title: join(r.Suite, r.Target),
		Note: "Each job's throughput over its measured window; MB/s is 10^6 bytes per second."}
	if tests, read, write, ok := readWrite(r.Results); ok {
		for _, m := range []struct {
			label string
			get   func(bench.Result) float64
		}{{"MB/s", func(x bench.Result) float64 { return x.MBps }}, {"IOPS", func(x bench.Result) float64 { return x.IOPS }}} {
			p := Panel{Kind: Bars, YLabel: m.label, Categories: tests, Series: []Series{{Label: "read"}, {Label: "write"}}}
			for k := range tests {
				for s, idx := range []int{read[k], write[k]} {
					v := 0.0
					if idx >= 0 {
						v = m.get(r.Results[idx])
					}
					p.Series[s].Y = append(p.Series[s].Y, v)
				}
			}
			c.Panels = append(c.Panels, p)
		}
		return c
	}
	mb := Panel{Kind: Bars, YLabel: "MB/s", Series: []Series{{Label: r.Target}}}
	io := Panel{Kind: Bars, YLabel: "IOPS", Series: []Series{{Label: r.Target}}}
	for _, x := range r.Results {
		mb.Categories = append(mb.Categories, x.Name)
		io.Categories = append(io.Categories, x.Name)
		mb.Series[0].Y = append(mb.Series[0].Y, x.MBps)
		io.Series[0].Y = append(io.Series[0].Y, x.IOPS)
	}
	c.Panels = []Panel{mb, io}
	return c
}

// CompareCharts returns the charts of a comparison: grouped bars of every
// job's MB/s and IOPS, a bar per target, and for CrystalDiskMark suites
// each target's CrystalDiskMark panel.
func CompareCharts(c *Comparison) []Chart {
	if len(c.Runs) == 0 {
		return nil
	}
	first := c.Runs[0].Report.Results
	bars := Chart{Name: "compare", Title: "Comparison: " + c.Workload,
		Note: "Each job's throughput on each target; the table gives the ratios against the first target."}
	for _, m := range []struct {
		label string
		get   func(bench.Result) float64
	}{{"MB/s", func(x bench.Result) float64 { return x.MBps }}, {"IOPS", func(x bench.Result) float64 { return x.IOPS }}} {
		p := Panel{Kind: Bars, YLabel: m.label}
		for _, x := range first {
			p.Categories = append(p.Categories, x.Name)
		}
		for _, run := range c.Runs {
			s := Series{Label: run.Report.Target}
			for j := range first {
				v := 0.0
				if j < len(run.Report.Results) {
					v = m.get(run.Report.Results[j])
				}
				s.Y = append(s.Y, v)
			}
			p.Series = append(p.Series, s)
		}
		bars.Panels = append(bars.Panels, p)
	}
	charts := []Chart{bars}
	if strings.HasPrefix(c.Workload, "cdm") {
		cdm := Chart{Name: "compare-cdm", Title: "CrystalDiskMark",
			Note: "Each target's CrystalDiskMark panel, MB/s."}
		for _, run := range c.Runs {
			if p, ok := cdmPanel(run.Report.Results); ok {
				p.Title = run.Report.Target
				cdm.Panels = append(cdm.Panels, p)
			}
		}
		if len(cdm.Panels) > 0 {
			charts = append(charts, cdm)
		}
	}
	return charts
}

// ProfileCharts returns the charts of an over-provisioning sweep: IOPS
// against data written, a line per OP level; and the steady-state IOPS and
// write amplification per level.
func ProfileCharts(p *bench.SSDProfile) []Chart {
	curves := Panel{Kind: Lines, XLabel: "data written by random writes (GB)", YLabel: "IOPS (4 KiB random write, Q32)"}
	iops := Panel{Kind: Bars, Title: "steady-state IOPS", YLabel: "IOPS", Series: []Series{{Label: "IOPS"}}}
	wa := Panel{Kind: Bars, Title: "write amplification", YLabel: "NAND / host bytes", Series: []Series{{Label: "WA"}}}
	for _, lv := range p.Levels {
		s := Series{Label: fmt.Sprintf("OP %.0f%%", lv.Overprovision*100)}
		for _, r := range lv.Rounds {
			s.X = append(s.X, float64(r.Written)/1e9)
			s.Y = append(s.Y, r.IOPS)
		}
		curves.Series = append(curves.Series, s)
		cat := fmt.Sprintf("%.0f%%", lv.Overprovision*100)
		if lv.Overprovision == p.Recommended {
			cat += " (knee)"
		}
		iops.Categories = append(iops.Categories, cat)
		wa.Categories = append(wa.Categories, cat)
		iops.Series[0].Y = append(iops.Series[0].Y, lv.SteadyIOPS)
		wa.Series[0].Y = append(wa.Series[0].Y, lv.WA)
	}
	return []Chart{
		{Name: "ssd-profile-curves", Title: "Random-write IOPS against data written, per OP level", Panels: []Panel{curves},
			Note: "Each point is one round of random writes after the sequential precondition; a level ends when its last " +
				"five rounds meet SNIA PTS steady state."},
		{Name: "ssd-profile-steady", Title: p.Target, Panels: []Panel{iops, wa},
			Note: fmt.Sprintf("Steady-state IOPS (mean of the last five rounds) and write amplification over them. "+
				"The knee, %.0f %% OP, is where more OP starts to gain less IOPS than it costs capacity.", p.Recommended*100)},
	}
}
