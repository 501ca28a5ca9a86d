package setup

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/nasemu/nasemu/models"
)

func loadBuiltin(t *testing.T, name string) *Setup {
	t.Helper()
	s, err := Load(name, os.DirFS("../../testdata/setups"), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestWith(t *testing.T) {
	s := loadBuiltin(t, "ds1817-raid5-hdd-cache-smb-1g")
	cases := []struct {
		key, value string
		check      func(*Setup) bool
	}{
		{"drives.count", "6", func(x *Setup) bool { return x.DriveCount() == 6 }},
		{"link.kind", "10gbe", func(x *Setup) bool { return x.Link.Kind == "10gbe" }},
		{"raid.level", "raid6", func(x *Setup) bool { return x.RAID.Level.String() == "raid6" }},
		{"cache.mode", "read-only", func(x *Setup) bool { return x.Cache.Config.Mode == "read-only" }},
		{"drives[0].model", "micron-5300-960g", func(x *Setup) bool { return x.Drives[0].Drive.SSD != nil }},
		{"nas", "{base: synology-ds1817, ram: 16GiB}", func(x *Setup) bool { return x.NAS.Config.RAM == 16<<30 }},
		{"protocol", "iscsi", func(x *Setup) bool { return x.Protocol.Protocol == "iscsi" }},
	}
	for _, c := range cases {
		x, err := s.With(c.key, c.value)
		if err != nil {
			t.Errorf("%s=%s: %v", c.key, c.value, err)
			continue
		}
		if !c.check(x) {
			t.Errorf("%s=%s: not applied", c.key, c.value)
		}
		if x.Name != s.Name {
			t.Errorf("%s=%s: name %q, want %q", c.key, c.value, x.Name, s.Name)
		}
	}
	if s.DriveCount() != 4 || s.Link.Kind != "1gbe" {
		t.Error("With changed the setup it was called on")
	}
}

func TestWithRefused(t *testing.T) {
	s := loadBuiltin(t, "ds1817-raid5-hdd-smb-1g")
	for _, c := range []struct{ key, value, want string }{
		{"drives.count", "2", "drives.count"}, // raid5 needs 3
		{"drives.count", "many", "drives.count"},
		{"link.kind", "100gbe", "link.kind"},
		{"raid.levle", "raid6", "raid.levle"},
		{"link.mtu", "9000x", "link.mtu"},
		{"drives[3].count", "1", "drives[3]"},
		{"", "1", "KEY=VALUE"},
	} {
		_, err := s.With(c.key, c.value)
		if err == nil {
			t.Errorf("%s=%s: accepted", c.key, c.value)
			continue
		}
		var se *Error
		if !errors.Is(err, models.ErrConfig) || !errors.As(err, &se) {
			t.Errorf("%s=%s: %v is not a setup error", c.key, c.value, err)
		}
		if msg := err.Error(); !strings.Contains(msg, c.want) || !strings.Contains(msg, "--set "+c.key+"="+c.value) {
			t.Errorf("%s=%s: error %q does not name %q and the --set", c.key, c.value, msg, c.want)
		}
	}
}
