package sweep

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nasemu/nasemu/report"
)

// TestPage checks the HTML page's frontier against its definition: per
// job, every priced point left off the frontier is matched or beaten on
// both price and IOPS by a point on it, and no point on it is by another;
// the page and its chart are written.
func TestPage(t *testing.T) {
	res := smallResults(t)
	p, err := res.Page("iops")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Tables) != 8 || len(p.Charts) != 1 || len(p.Charts[0].Panels) != 8 {
		t.Fatalf("%d tables, %d charts; want one table and one panel per cdm job", len(p.Tables), len(p.Charts))
	}
	for ti, tab := range p.Tables {
		job := res.Records[0].Results[ti].Name
		on := map[int]bool{}
		for _, row := range tab.Rows[1:] {
			i, err := strconv.Atoi(row[0])
			if err != nil {
				t.Fatal(err)
			}
			on[i] = true
		}
		if len(on) == 0 {
			t.Errorf("%s: an empty frontier", job)
		}
		iops := func(rec Record) float64 {
			for _, j := range rec.Results {
				if j.Name == job {
					return j.IOPS
				}
			}
			return -1
		}
		beats := func(a, b Record) bool { // a as cheap and as fast as b, better on one
			return a.PriceUSD <= b.PriceUSD && iops(a) >= iops(b) && (a.PriceUSD < b.PriceUSD || iops(a) > iops(b))
		}
		for _, b := range res.Records {
			if b.PriceUSD <= 0 || iops(b) < 0 {
				continue
			}
			dominated := false
			for _, a := range res.Records {
				if a.PriceUSD > 0 && iops(a) >= 0 && beats(a, b) {
					dominated = true
				}
			}
			if dominated == on[b.Index] {
				t.Errorf("%s: point %d (%v, $%.0f, %.0f IOPS): on the frontier %v, dominated %v", job, b.Index, b.Values, b.PriceUSD, iops(b), on[b.Index], dominated)
			}
		}
	}
	dir := t.TempDir()
	if err := report.WritePage(dir, p); err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), "Pareto frontier") || !strings.Contains(string(html), "bottleneck") {
		t.Errorf("index.html lacks the frontier or the bottleneck")
	}
	if _, err := os.Stat(filepath.Join(dir, "pareto-iops.svg")); err != nil {
		t.Error(err)
	}
	if _, err := res.Page("latency"); err == nil {
		t.Error("an unknown metric: no error")
	}
}
