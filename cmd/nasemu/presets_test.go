package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/nasemu/nasemu"
	"github.com/nasemu/nasemu/models/catalog"
	"github.com/nasemu/nasemu/models/link"
	"github.com/nasemu/nasemu/models/setup"
)

// TestPresets checks that each list names every entry it should.
func TestPresets(t *testing.T) {
	setups, err := setup.List(nasemu.Setups)
	if err != nil {
		t.Fatal(err)
	}
	lists := map[string][]string{"drives": nil, "systems": nil, "links": nil, "setups": nil}
	for _, d := range catalog.Drives() {
		lists["drives"] = append(lists["drives"], d.Name)
	}
	for _, s := range catalog.Systems() {
		lists["systems"] = append(lists["systems"], s.Name)
	}
	for _, k := range link.Kinds() {
		lists["links"] = append(lists["links"], k.Name)
	}
	for _, s := range setups {
		lists["setups"] = append(lists["setups"], s.Name)
	}
	var all bytes.Buffer
	if code := run([]string{"presets"}, &all, &all); code != 0 {
		t.Fatalf("nasemu presets: exit %d: %s", code, all.String())
	}
	for _, name := range presetOrder {
		var out bytes.Buffer
		if code := run([]string{"presets", name}, &out, &out); code != 0 {
			t.Fatalf("nasemu presets %s: exit %d: %s", name, code, out.String())
		}
		if len(lists[name]) == 0 {
			t.Errorf("%s: nothing to list", name)
		}
		for _, entry := range lists[name] {
			if !strings.Contains(out.String(), entry+" ") {
				t.Errorf("nasemu presets %s does not list %s", name, entry)
			}
			if !strings.Contains(all.String(), entry+" ") {
				t.Errorf("nasemu presets does not list %s", entry)
			}
		}
	}
}

// TestPresetsSetupColumns checks a setup's row: its usable capacity and
// how many drives it survives losing.
func TestPresetsSetupColumns(t *testing.T) {
	var out bytes.Buffer
	if code := run([]string{"presets", "setups"}, &out, &out); code != 0 {
		t.Fatal(out.String())
	}
	for _, want := range []struct{ name, usable, tolerates string }{
		// 4 × WD Red 1TB (1.0002 TB each) in RAID 5: 3 drives' worth.
		{"ds1817-raid5-hdd-smb-1g", "3.00 TB", "1"},
		// 2 × Kingston SUV500 240GB in RAID 1: one drive's worth.
		{"ds1817-raid1-ssd-smb-1g", "240 GB", "1"},
		// 4 × WD Se 4TB in RAID 0: all of it, no redundancy.
		{"rst001-raid0-wdse-local", "16.0 TB", "0"},
	} {
		found := false
		for _, line := range strings.Split(out.String(), "\n") {
			f := strings.Fields(line)
			if len(f) > 4 && f[0] == want.name {
				found = true
				if got := f[1] + " " + f[2]; got != want.usable || f[3] != want.tolerates {
					t.Errorf("%s: usable %s tolerates %s, want %s and %s", want.name, got, f[3], want.usable, want.tolerates)
				}
			}
		}
		if !found {
			t.Errorf("%s not listed", want.name)
		}
	}
}
