package sweep

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/report"
)

// Metrics are what WriteHTML may set the price against: higher is better.
var Metrics = []string{"iops", "mbps"}

func metricOf(name string) (func(Job) float64, string, error) {
	switch name {
	case "iops":
		return func(j Job) float64 { return j.IOPS }, "IOPS", nil
	case "mbps":
		return func(j Job) float64 { return j.MBps }, "MB/s", nil
	}
	return nil, "", fmt.Errorf("%w: unknown metric %q (known: %s)", models.ErrConfig, name, strings.Join(Metrics, ", "))
}

// Page returns the sweep's HTML page (report.WritePage writes it): per
// job, the Pareto frontier of price against metric ("iops" or "mbps") —
// the points no other priced point matches on both, cheapest first, with
// their axes, capacity, $/TB and bottleneck — as a table and as a chart.
// Points without a price (an inline part) cannot be placed and are left
// out.
func (r *Results) Page(metric string) (report.Page, error) {
	get, label, err := metricOf(metric)
	if err != nil {
		return report.Page{}, err
	}
	p := report.Page{Title: "nasemu sweep: " + r.Header.Sweep, Facts: [][2]string{
		{"points", fmt.Sprintf("%d of %d", len(r.Records), r.Header.Points)},
		{"axes", strings.Join(r.Header.Keys, ", ")},
		{"sweep digest", r.Header.Digest},
		{"frontier", "price (the catalog's street prices of system and drives) against " + label},
	}}
	// Jobs by workload and name, in the order the records first have them.
	type jobKey struct{ workload, name string }
	var jobs []jobKey
	for _, rec := range r.Records {
		for _, j := range rec.Results {
			if k := (jobKey{rec.Workload, j.Name}); !slices.Contains(jobs, k) {
				jobs = append(jobs, k)
			}
		}
	}
	chart := report.Chart{Name: "pareto-" + metric, Title: "Pareto frontier: price against " + label,
		Note: "Per job, the points no other point matches on both price and " + label + "; the tables name them."}
	for _, k := range jobs {
		var price, value []float64
		var at []struct {
			rec *Record
			job Job
		}
		for i := range r.Records {
			rec := &r.Records[i]
			if rec.Workload != k.workload {
				continue
			}
			for _, j := range rec.Results {
				if j.Name == k.name {
					price = append(price, rec.PriceUSD)
					value = append(value, get(j))
					at = append(at, struct {
						rec *Record
						job Job
					}{rec, j})
				}
			}
		}
		front := report.Frontier(price, value)
		slices.SortStableFunc(front, func(a, b int) int { return cmp.Compare(price[a], price[b]) })
		head := append(append([]string{"point"}, r.Header.Keys...), "price", "$/TB", "usable", label, "p99 µs", "bottleneck")
		rows := [][]string{head}
		s := report.Series{Label: k.name}
		for _, i := range front {
			x := at[i]
			row := append([]string{strconv.Itoa(x.rec.Index)}, x.rec.Values...)
			row = append(row, dollars(x.rec.PriceUSD), dollars(x.rec.USDPerTB()), human(x.rec.UsableBytes),
				report.Number(get(x.job)), report.Number(x.job.Lat.P99), x.job.Bottleneck.String())
			rows = append(rows, row)
			s.X = append(s.X, price[i])
			s.Y = append(s.Y, value[i])
		}
		title := k.name
		if len(r.Records) > 0 && k.workload != r.Records[0].Workload {
			title = k.workload + ": " + k.name
		}
		p.Tables = append(p.Tables, report.Table{Caption: title + ": " + strconv.Itoa(len(front)) + " points on the frontier of " + strconv.Itoa(len(price)), Rows: rows})
		if len(s.X) > 0 {
			logY := slices.Min(s.Y) > 0 && slices.Max(s.Y) > 10*slices.Min(s.Y) // values spanning a decade
			chart.Panels = append(chart.Panels, report.Panel{Kind: report.Lines, Title: title, XLabel: "price (US$)", YLabel: label, LogY: logY, Series: []report.Series{s}})
		}
	}
	if len(chart.Panels) > 0 {
		p.Charts = []report.Chart{chart}
	}
	return p, nil
}
