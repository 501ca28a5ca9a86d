package fusefs

import (
	"io/fs"
	"strings"
	"testing"

	"github.com/nasemu/nasemu"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/setup"
)

// Every counter a built-in setup's model reports is described, and the
// descriptions follow Prometheus' conventions: names carry base units (no
// _ms, _ns, _pct), a counter given in one is exported in seconds or as a
// ratio, and the counters that share a family share its help and label.
func TestModelMetricsDescribed(t *testing.T) {
	names, err := fs.Glob(nasemu.Setups, "*.yaml")
	if err != nil || len(names) == 0 {
		t.Fatalf("built-in setups: %v, %v", names, err)
	}
	seen := map[string]bool{}
	for _, n := range names {
		s, err := setup.Load(strings.TrimSuffix(n, ".yaml"), nasemu.Setups, nil)
		if err != nil {
			t.Fatal(err)
		}
		m, err := s.Build(1)
		if err != nil {
			t.Fatal(err)
		}
		models.Walk(m, func(d models.Device, _ int) {
			if o, ok := d.(models.Observer); ok {
				for _, c := range o.Counters() {
					seen[c.Name] = true
				}
			}
		})
	}
	for name := range seen {
		if _, ok := modelMetrics[name]; !ok {
			t.Errorf("model counter %q is not described in modelMetrics", name)
		}
	}
	families := map[string]modelMetric{}
	for name, mm := range modelMetrics {
		if mm.name == "" {
			continue
		}
		if len(mm.help) < 30 {
			t.Errorf("%s: help %q", name, mm.help)
		}
		if mm.scale != 1 && !strings.Contains(mm.name, "_seconds") && !strings.HasSuffix(mm.name, "_ratio") {
			t.Errorf("%s: scaled by %v to %s, which names no base unit", name, mm.scale, mm.name)
		}
		for _, word := range strings.Split(mm.name, "_") {
			switch word {
			case "ms", "us", "ns", "pct", "percent", "kb", "mb", "kib", "mib":
				t.Errorf("%s: %s is not in a base unit", name, mm.name)
			}
		}
		if f, ok := families[mm.name]; ok && (f.help != mm.help || f.label[0] != mm.label[0] || mm.label[0] == "") {
			t.Errorf("%s: family %s described two ways", name, mm.name)
		}
		families[mm.name] = mm
	}
}
