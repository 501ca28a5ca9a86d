package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nasemu/nasemu/bench"
	"github.com/nasemu/nasemu/models/setup"
)

// Facts are what a target offers apart from speed, for comparisons. A
// zero field is unknown and shows as "-" (Tolerates is a pointer because
// 0 drives is a fact).
type Facts struct {
	UsableBytes int64         `json:"usable_bytes,omitempty"` // what the setup offers after RAID
	Tolerates   *int          `json:"drives_tolerated,omitempty"`
	Rebuild     time.Duration `json:"rebuild_ns,omitempty"` // replacing one failed drive, idle array
	// PriceUSD is the setup's price new (NAS and drives, cache drives
	// included) from the catalog's dated street prices, when it prices
	// every part; Price lists the parts and names those it has no price
	// for; USDPerTB is PriceUSD per terabyte (10^12 bytes) of UsableBytes.
	PriceUSD float64      `json:"price_usd,omitempty"`
	Price    *setup.Price `json:"price,omitempty"`
	USDPerTB float64      `json:"usd_per_usable_tb,omitempty"`
	// PageCacheBytes is the NAS's RAM less what its OS keeps: a working
	// set that fits is served from RAM once read or written.
	PageCacheBytes int64 `json:"page_cache_bytes,omitempty"`
}

// SetPrice sets f's price from p: the parts, the total when p prices
// every part, and the total per usable TB when UsableBytes is known.
func (f *Facts) SetPrice(p setup.Price) {
	f.Price = &p
	f.PriceUSD, f.USDPerTB = 0, 0
	if usd, ok := p.USD(); ok {
		f.PriceUSD = usd
		if perTB := setup.USDPerTB(usd, f.UsableBytes); perTB > 0 {
			f.USDPerTB = perTB
		}
	}
}

// FactSource is the optional capability of a target (or of what resolves
// it) to say what it offers apart from speed.
type FactSource interface {
	Facts() Facts
}

// Run is one target's part of a comparison.
type Run struct {
	Report *bench.Report `json:"report"`
	Facts  Facts         `json:"facts"`
	// InPageCache names the jobs whose working set fits in the target's
	// NAS page cache (Facts.PageCacheBytes): their figures are the NAS's
	// RAM, link and protocol, not its storage.
	InPageCache []string `json:"in_page_cache,omitempty"`
	// Note says so in words; empty when no job fits.
	Note string `json:"page_cache_note,omitempty"`
}

// cachedMark marks, in the table, a figure whose job's working set fits
// in that target's NAS page cache.
const cachedMark = " †"

// NotePageCache fills r.InPageCache and r.Note from the working set of
// each job (bytes, by job name; 0 or absent: unknown, e.g. the whole
// target).
func (r *Run) NotePageCache(workingSet map[string]int64) {
	r.InPageCache, r.Note = nil, ""
	pc := r.Facts.PageCacheBytes
	if pc <= 0 || r.Report == nil {
		return
	}
	var largest int64
	for _, x := range r.Report.Results {
		if ws := workingSet[x.Name]; ws > 0 && ws <= pc && !slices.Contains(r.InPageCache, x.Name) {
			r.InPageCache = append(r.InPageCache, x.Name)
			largest = max(largest, ws)
		}
	}
	if len(r.InPageCache) == 0 {
		return
	}
	r.Note = fmt.Sprintf("%d of %d jobs (marked †) have a working set (up to %s) that fits in the NAS page cache (%s): "+
		"they measure RAM, link and protocol, and setups that differ only in storage cannot differ on them; "+
		"a --size larger than the page cache measures the storage",
		len(r.InPageCache), len(r.Report.Results), bytesString(largest), bytesString(pc))
}

// Comparison is the same workload run on several targets. Ratios are
// against the first target.
type Comparison struct {
	Workload string `json:"workload"` // the suite's name, or the job file
	Runs     []Run  `json:"runs"`
}

// WriteFormat writes the comparison as "table", "json" or "csv".
func (c *Comparison) WriteFormat(w io.Writer, format string) error {
	switch format {
	case "table":
		return c.WriteTable(w)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(c)
	case "csv":
		return c.WriteCSV(w)
	}
	return fmt.Errorf("unknown format %q (known: %s)", format, strings.Join(bench.Formats, ", "))
}

// Rows returns the comparison as a table for people: a header row of
// targets, then one row per fact and per job and metric, each cell the
// target's value with its ratio against the first target's.
func (c *Comparison) Rows() [][]string {
	header := []string{""}
	for _, r := range c.Runs {
		header = append(header, r.Report.Target)
	}
	rows := [][]string{header}
	fact := func(name string, get func(Facts) string) {
		row := []string{name}
		for _, r := range c.Runs {
			row = append(row, get(r.Facts))
		}
		rows = append(rows, row)
	}
	fact("usable capacity", func(f Facts) string { return bytesString(f.UsableBytes) })
	fact("drives tolerated to fail", func(f Facts) string {
		if f.Tolerates == nil {
			return "-"
		}
		return strconv.Itoa(*f.Tolerates)
	})
	fact("rebuild time", func(f Facts) string { return durationString(f.Rebuild) })
	fact("NAS page cache", func(f Facts) string { return bytesString(f.PageCacheBytes) })
	fact("price (NAS + drives)", priceString)
	fact("$ per usable TB", func(f Facts) string {
		if f.USDPerTB <= 0 {
			return "-"
		}
		return "$" + strconv.FormatFloat(f.USDPerTB, 'f', 0, 64)
	})
	if len(c.Runs) == 0 {
		return rows
	}
	metrics := []struct {
		unit string
		get  func(bench.Result) float64
	}{
		{"MB/s", func(x bench.Result) float64 { return x.MBps }},
		{"IOPS", func(x bench.Result) float64 { return x.IOPS }},
		{"p99 µs", func(x bench.Result) float64 { return x.Lat.P99 }},
	}
	for j, x := range c.Runs[0].Report.Results {
		for _, m := range metrics {
			row := []string{x.Name + " " + m.unit}
			base := m.get(x)
			for i, r := range c.Runs {
				if j >= len(r.Report.Results) {
					row = append(row, "-")
					continue
				}
				v := m.get(r.Report.Results[j])
				cell := Number(v)
				if i > 0 && base > 0 {
					cell += " (" + ratioString(v/base) + ")"
				}
				if slices.Contains(r.InPageCache, x.Name) {
					cell += cachedMark
				}
				row = append(row, cell)
			}
			rows = append(rows, row)
		}
		row := []string{x.Name + " bottleneck"}
		for _, r := range c.Runs {
			if j >= len(r.Report.Results) {
				row = append(row, "-")
				continue
			}
			row = append(row, r.Report.Results[j].Bottleneck.String())
		}
		rows = append(rows, row)
	}
	return rows
}

// priceString is a target's price for the table: the total, "unknown:
// PART" when the catalog lacks a part's price, "-" when nothing is known.
func priceString(f Facts) string {
	switch {
	case f.PriceUSD > 0:
		return "$" + strconv.FormatFloat(f.PriceUSD, 'f', 0, 64)
	case f.Price != nil && len(f.Price.Unknown) > 0:
		s := "unknown: no price for " + f.Price.Unknown[0]
		if n := len(f.Price.Unknown) - 1; n > 0 {
			s += fmt.Sprintf(" and %d more", n)
		}
		return s
	}
	return "-"
}

// WriteTable writes the comparison side by side, targets as columns.
func (c *Comparison) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "comparison of %s on %d targets; ratios against %s\n", c.Workload, len(c.Runs), c.first())
	for _, r := range c.Runs {
		if r.Report.Description != "" {
			fmt.Fprintf(w, "  %s: %s\n", r.Report.Target, r.Report.Description)
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	for i, row := range c.Rows() {
		if i == 0 {
			row[0] = strings.ToUpper(c.Workload)
		}
		fmt.Fprintln(tw, strings.Join(row, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range c.Runs {
		if r.Note != "" {
			fmt.Fprintf(w, "† %s: %s\n", r.Report.Target, r.Note)
		}
	}
	return nil
}

func (c *Comparison) first() string {
	if len(c.Runs) == 0 {
		return "-"
	}
	return c.Runs[0].Report.Target
}

// WriteCSV writes one row per target and job, with the target's facts
// and the job's ratios against the first target.
func (c *Comparison) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"target", "usable_bytes", "drives_tolerated", "rebuild_s", "price_usd", "name", "rw", "bs",
		"iodepth", "numjobs", "iops", "mbps", "lat_mean_us", "lat_p99_us", "iops_ratio", "mbps_ratio", "in_page_cache",
		"usd_per_usable_tb", "bottleneck", "bottleneck_resource", "bottleneck_busy"})
	for _, r := range c.Runs {
		f := r.Facts
		tol := ""
		if f.Tolerates != nil {
			tol = strconv.Itoa(*f.Tolerates)
		}
		for j, x := range r.Report.Results {
			iopsRatio, mbpsRatio := "", ""
			if base := c.Runs[0].Report.Results; j < len(base) {
				iopsRatio, mbpsRatio = ratioCSV(x.IOPS, base[j].IOPS), ratioCSV(x.MBps, base[j].MBps)
			}
			row := []string{r.Report.Target, optInt(f.UsableBytes), tol, optFloat(f.Rebuild.Seconds()), optFloat(f.PriceUSD),
				x.Name, x.RW, strconv.FormatInt(x.BS, 10), strconv.Itoa(x.IODepth), strconv.Itoa(x.NumJobs),
				ftoa(x.IOPS), ftoa(x.MBps), ftoa(x.Lat.Mean), ftoa(x.Lat.P99), iopsRatio, mbpsRatio,
				strconv.FormatBool(slices.Contains(r.InPageCache, x.Name)), optFloat(f.USDPerTB)}
			if b := x.Bottleneck; b != nil {
				row = append(row, b.Component, b.Resource, strconv.FormatFloat(b.Busy, 'f', 4, 64))
			} else {
				row = append(row, "", "", "")
			}
			_ = cw.Write(row)
		}
	}
	cw.Flush()
	return cw.Error()
}

func ftoa(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }

func optInt(v int64) string {
	if v == 0 {
		return ""
	}
	return strconv.FormatInt(v, 10)
}

func optFloat(v float64) string {
	if v == 0 {
		return ""
	}
	return ftoa(v)
}

func ratioCSV(v, base float64) string {
	if base <= 0 {
		return ""
	}
	return strconv.FormatFloat(v/base, 'f', 4, 64)
}

// ratioString formats a ratio: "14.3×", "2.41×", "0.13×", "0.0027×".
func ratioString(r float64) string {
	switch {
	case r >= 10:
		return strconv.FormatFloat(r, 'f', 1, 64) + "×"
	case r >= 0.1 || r == 0:
		return strconv.FormatFloat(r, 'f', 2, 64) + "×"
	}
	return strconv.FormatFloat(r, 'g', 2, 64) + "×"
}

// bytesString formats a capacity in decimal units, as drives are sold.
func bytesString(b int64) string {
	switch {
	case b <= 0:
		return "-"
	case b >= 1e12:
		return strconv.FormatFloat(float64(b)/1e12, 'f', 2, 64) + " TB"
	case b >= 1e9:
		return strconv.FormatFloat(float64(b)/1e9, 'f', 1, 64) + " GB"
	}
	return strconv.FormatFloat(float64(b)/1e6, 'f', 0, 64) + " MB"
}

// durationString formats a long duration in hours and minutes.
func durationString(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	if d < time.Hour {
		return d.Round(time.Second).String()
	}
	h := int(d / time.Hour)
	m := int((d % time.Hour).Round(time.Minute) / time.Minute)
	if m == 60 {
		h, m = h+1, 0
	}
	return fmt.Sprintf("%dh%02dm", h, m)
}

// Pareto returns, for job j of the comparison, the indices of the runs on
// the cost–performance frontier by metric get (higher is better): those
// with a known price that no other priced run matches or beats on both
// price and the metric while being strictly better on one. Runs without a
// price are left out: they cannot be placed.
func (c *Comparison) Pareto(j int, get func(bench.Result) float64) []int {
	price := make([]float64, len(c.Runs))
	value := make([]float64, len(c.Runs))
	for i, r := range c.Runs {
		if j < len(r.Report.Results) {
			price[i], value[i] = r.Facts.PriceUSD, get(r.Report.Results[j])
		}
	}
	return Frontier(price, value)
}

// Frontier returns the indices, in order, of the points on the frontier
// of price against value (lower price and higher value are better): the
// points with a price (> 0) that no other priced point matches or beats
// on both while being strictly better on one.
func Frontier(price, value []float64) []int {
	var out []int
	for i, p := range price {
		if p <= 0 {
			continue
		}
		v := value[i]
		dominated := false
		for k, op := range price {
			if k == i || op <= 0 {
				continue
			}
			if ov := value[k]; op <= p && ov >= v && (op < p || ov > v) {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, i)
		}
	}
	return out
}
