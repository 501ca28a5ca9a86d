package fusefs

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// The Grafana dashboard in contrib/ queries only metrics the share
// exports, under the names it exports them.
func TestDashboardMetrics(t *testing.T) {
	b, err := os.ReadFile("../contrib/grafana/nasemu.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("the dashboard is not JSON: %v", err)
	}

	exported := map[string]bool{}
	families, err := NewMetrics().reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		exported[f.GetName()] = true
	}
	fqName := regexp.MustCompile(`fqName: "([a-z0-9_]+)"`)
	for _, d := range []interface{ String() string }{capacityDesc, freeDesc, volOpsDesc, volErrsDesc, volBytesDesc, volQDDesc, lateDesc, latenessDesc, raidStateDesc, rebuildDesc, failedDesc} {
		exported[fqName.FindStringSubmatch(d.String())[1]] = true
	}
	for _, mm := range modelMetrics {
		exported[mm.name] = true
	}

	name := regexp.MustCompile(`nasemu_[a-z0-9_]+`)
	queries := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			queries++
			for _, n := range name.FindAllString(tg.Expr, -1) {
				if !exported[n] && !exported[strings.TrimSuffix(n, "_bucket")] {
					t.Errorf("panel %q queries %s, which nasemu does not export", p.Title, n)
				}
			}
		}
	}
	if queries < 10 {
		t.Errorf("%d queries in the dashboard", queries)
	}
}
