package catalog

import (
	"testing"

	"github.com/nasemu/nasemu/models"
)

// Every catalog drive has a unique name, a source, a dated street price,
// a valid configuration, and builds a model whose capacity is what the configuration says.
func TestDrivesBuild(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range Drives() {
		if seen[d.Name] {
			t.Errorf("duplicate drive %q", d.Name)
		}
		seen[d.Name] = true
		if d.Source == "" || d.Product == "" {
			t.Errorf("%s: no product or source", d.Name)
		}
		if p := d.Price; !(p.USD > 0) || len(p.Date) != 7 || p.Date[4] != '-' || p.Source == "" {
			t.Errorf("%s: street price %+v, want a positive USD amount, a YYYY-MM date and a source", d.Name, p)
		}
		if (d.SSD == nil) == (d.HDD == nil) {
			t.Errorf("%s: want exactly one of SSD and HDD", d.Name)
			continue
		}
		dev, err := d.New(0, 1)
		if err != nil {
			t.Errorf("%s: %v", d.Name, err)
			continue
		}
		if dev.Capacity() <= 0 {
			t.Errorf("%s: capacity %d", d.Name, dev.Capacity())
		}
		if _, err := LookupDrive(d.Name); err != nil {
			t.Error(err)
		}
	}
	if _, err := LookupDrive("no-such-drive"); err == nil {
		t.Error("LookupDrive of an unknown name succeeded")
	}
	var _ models.Device
}
