package report

import (
	"cmp"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/nasemu/nasemu/bench"
)

// Page is an index.html: what was run on what, the results as tables,
// and the charts.
type Page struct {
	Title  string
	Facts  [][2]string // name, value: the target, its setup, the suite
	Setup  string      // the setup as text, shown preformatted; may be empty
	Tables []Table
	Charts []Chart
}

// Table is a table of a page; its first row is the header.
type Table struct {
	Caption string
	Rows    [][]string
}

// The page loads each chart's SVG; a small script marks the page once
// every image has loaded (data-charts-ok) and flags any that did not, so
// that a broken chart is visible to a reader and detectable by a headless
// browser.
var pageTmpl = template.Must(template.New("index").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<style>
body { font-family: "Liberation Sans", Arial, sans-serif; margin: 2em auto; max-width: 60em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; }
td { text-align: right; } td:first-child, th { text-align: left; }
dl { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1em; }
dt { font-weight: bold; } dd { margin: 0; }
figure { margin: 1.5em 0; } figure img { width: 100%; border: 1px solid #eee; }
figcaption { font-size: 0.9em; color: #555; }
.broken { border: 2px solid #c00; padding: 1em; color: #c00; }
pre { background: #f6f6f6; padding: 0.8em; overflow-x: auto; }
</style>
</head>
<body data-charts="{{len .Charts}}">
<h1>{{.Title}}</h1>
<dl>{{range .Facts}}<dt>{{index . 0}}</dt><dd>{{index . 1}}</dd>
{{end}}</dl>
{{if .Setup}}<h2>Setup</h2>
<pre>{{.Setup}}</pre>
{{end}}{{range .Tables}}<h2>{{.Caption}}</h2>
<table>{{range $i, $row := .Rows}}
<tr>{{range $row}}{{if eq $i 0}}<th>{{.}}</th>{{else}}<td>{{.}}</td>{{end}}{{end}}</tr>{{end}}
</table>
{{end}}{{if .Charts}}<h2>Charts</h2>
{{range .Charts}}<figure id="{{.Name}}">
<a href="{{.Name}}.png"><img class="chart" src="{{.Name}}.svg" alt="{{.Title}}"></a>
<figcaption>{{.Title}}{{if .Note}}. {{.Note}}{{end}} (<a href="{{.Name}}.svg">SVG</a>, <a href="{{.Name}}.png">PNG</a>)</figcaption>
</figure>
{{end}}{{end}}<script>
window.addEventListener("load", function () {
  var ok = 0;
  document.querySelectorAll("img.chart").forEach(function (img) {
    if (img.complete && img.naturalWidth > 0) { ok++; return; }
    var p = document.createElement("p");
    p.className = "broken";
    p.textContent = "Chart " + img.getAttribute("src") + " did not load.";
    img.parentNode.replaceWith(p);
  });
  document.body.setAttribute("data-charts-ok", ok);
});
</script>
</body>
</html>
`))

// WritePage draws the page's charts into dir as SVG and PNG and writes
// its index.html, creating dir.
func WritePage(dir string, p Page) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, c := range p.Charts {
		if err := Save(dir, c); err != nil {
			return err
		}
	}
	f, err := os.Create(filepath.Join(dir, "index.html"))
	if err != nil {
		return err
	}
	if err := pageTmpl.Execute(f, p); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// WriteRun writes a run's charts and index.html into dir; setup, when not
// empty, is shown as the setup.
func WriteRun(dir string, r *bench.Report, setup string) error {
	return WritePage(dir, RunPage(r, setup))
}

// RunPage is the index of one run.
func RunPage(r *bench.Report, setup string) Page {
	title := "nasemu bench: " + r.Target
	if r.Suite != "" {
		title += ", suite " + r.Suite
	}
	p := Page{Title: title, Setup: setup, Charts: RunCharts(r)}
	p.Facts = append(p.Facts, [2]string{"target", r.Target}, [2]string{"time", string(r.Mode)})
	if r.Description != "" {
		p.Facts = append(p.Facts, [2]string{"setup", r.Description})
	}
	if r.Suite != "" {
		p.Facts = append(p.Facts, [2]string{"suite", r.Suite})
	}
	if r.Device.Source == "model" && r.Device.NANDBytesWritten > 0 {
		p.Facts = append(p.Facts, [2]string{"drives", fmt.Sprintf("host bytes written %s, NAND bytes written %s, write amplification %.3f",
			bytesString(int64(r.Device.HostBytesWritten)), bytesString(int64(r.Device.NANDBytesWritten)), r.Device.WriteAmplification)})
	}
	rows := [][]string{{"job", "rw", "bs", "QD", "T", "IOPS", "MB/s", "files/s", "lat mean µs", "p50", "p99", "p99.9", "max", "seconds", "bottleneck"}}
	for _, x := range r.Results {
		bs := blockSize(x.BS)
		if x.BSSplit != "" {
			bs = x.BSSplit
		}
		rows = append(rows, []string{x.Name, x.RW, bs, strconv.Itoa(x.IODepth), strconv.Itoa(x.NumJobs),
			Number(x.IOPS), Number(x.MBps), Number(x.FilesPerS), Number(x.Lat.Mean), Number(x.Lat.P50), Number(x.Lat.P99),
			Number(x.Lat.P999), Number(x.Lat.Max), Number(x.Seconds), x.Bottleneck.String()})
	}
	p.Tables = []Table{{Caption: "Results", Rows: rows}}
	return p
}

// priceTable lists each target's priced parts and the parts without a
// price; nil when no target has a price.
func priceTable(c *Comparison) *Table {
	rows := [][]string{{"target", "part", "count", "unit price", "price seen"}}
	for _, r := range c.Runs {
		p := r.Facts.Price
		if p == nil {
			continue
		}
		for _, x := range p.Parts {
			rows = append(rows, []string{r.Report.Target, x.Item, strconv.Itoa(x.Count), "$" + strconv.FormatFloat(x.UnitUSD, 'f', 0, 64), x.Date})
		}
		for _, u := range p.Unknown {
			rows = append(rows, []string{r.Report.Target, u, "", "unknown", ""})
		}
	}
	if len(rows) == 1 {
		return nil
	}
	return &Table{Caption: "Prices (catalog street prices; the total and $ per usable TB are in the table above)", Rows: rows}
}

// WriteCompare writes a comparison's charts and index.html into dir.
func WriteCompare(dir string, c *Comparison) error {
	return WritePage(dir, ComparePage(c))
}

// ComparePage is the index of a comparison.
func ComparePage(c *Comparison) Page {
	p := Page{Title: "nasemu compare: " + c.Workload, Charts: CompareCharts(c)}
	for _, r := range c.Runs {
		v := string(r.Report.Mode) + " time"
		if r.Report.Description != "" {
			v = r.Report.Description + " (" + v + ")"
		}
		p.Facts = append(p.Facts, [2]string{r.Report.Target, v})
		if r.Note != "" {
			p.Facts = append(p.Facts, [2]string{r.Report.Target + " †", r.Note})
		}
	}
	p.Tables = []Table{{Caption: "Side by side (ratios against " + c.first() + ")", Rows: c.Rows()}}
	if t := priceTable(c); t != nil {
		p.Tables = append(p.Tables, *t, paretoTable(c))
	}
	return p
}

// paretoTable lists per job the targets on the frontier of price against
// the job's IOPS (equivalently MB/s: the same job moves the same bytes
// per I/O): no other priced target is as cheap and as fast.
func paretoTable(c *Comparison) Table {
	rows := [][]string{{"job", "frontier of price against IOPS (cheapest first)"}}
	for j, x := range c.Runs[0].Report.Results {
		idx := c.Pareto(j, func(r bench.Result) float64 { return r.IOPS })
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(c.Runs[a].Facts.PriceUSD, c.Runs[b].Facts.PriceUSD) })
		var names []string
		for _, i := range idx {
			r := c.Runs[i]
			names = append(names, fmt.Sprintf("%s ($%.0f, %s IOPS)", r.Report.Target, r.Facts.PriceUSD, Number(r.Report.Results[j].IOPS)))
		}
		rows = append(rows, []string{x.Name, strings.Join(names, "; ")})
	}
	return Table{Caption: "Pareto frontier: the targets no other priced target matches on both price and IOPS", Rows: rows}
}

// WriteProfile writes an over-provisioning sweep's charts and index.html
// into dir.
func WriteProfile(dir string, s *bench.SSDProfile) error {
	return WritePage(dir, ProfilePage(s))
}

// ProfilePage is the index of an over-provisioning sweep.
func ProfilePage(s *bench.SSDProfile) Page {
	p := Page{Title: "nasemu ssd-profile: " + s.Target, Charts: ProfileCharts(s)}
	p.Facts = append(p.Facts, [2]string{"target", s.Target})
	if s.Description != "" {
		p.Facts = append(p.Facts, [2]string{"setup", s.Description})
	}
	if s.Capacity > 0 {
		p.Facts = append(p.Facts, [2]string{"drives scaled to", binaryBytes(s.Capacity)})
	}
	p.Facts = append(p.Facts, [2]string{"recommended over-provisioning", fmt.Sprintf("%.0f %%", s.Recommended*100)})
	rows := [][]string{{"OP", "usable", "rounds", "steady state", "IOPS", "WA"}}
	for _, lv := range s.Levels {
		steady := "yes"
		if !lv.Steady {
			steady = "no"
		}
		rows = append(rows, []string{fmt.Sprintf("%.0f %%", lv.Overprovision*100), binaryBytes(lv.UserBytes),
			strconv.Itoa(len(lv.Rounds)), steady, Number(lv.SteadyIOPS), Number(lv.WA)})
	}
	p.Tables = []Table{{Caption: "Steady state per over-provisioning level", Rows: rows}}
	return p
}

// blockSize formats a block size the way fio and the suites name them:
// 4K, 1M.
func blockSize(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + "M"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + "K"
	}
	return strconv.FormatInt(n, 10)
}

// binaryBytes formats a scaled drive's capacity in binary units, as it
// was given: "1.00 GiB", "921.6 MiB".
func binaryBytes(b int64) string {
	switch {
	case b >= 1<<40:
		return strconv.FormatFloat(float64(b)/(1<<40), 'f', 2, 64) + " TiB"
	case b >= 1<<30:
		return strconv.FormatFloat(float64(b)/(1<<30), 'f', 2, 64) + " GiB"
	}
	return strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64) + " MiB"
}
