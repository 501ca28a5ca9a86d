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

// TestWithAll checks that keys set together are judged together: two
// drives in RAID 1 is a setup, though two drives alone are refused by the
// RAID 5 they would otherwise keep; and that a refused combination names
// the caller's label and the key at fault.
func TestWithAll(t *testing.T) {
	s := loadBuiltin(t, "ds1817-raid5-hdd-smb-1g")
	if _, err := s.With("drives.count", "2"); err == nil {
		t.Fatal("drives.count=2 alone on RAID 5: no error")
	}
	x, err := s.WithAll("point 3", KeyValue{"drives.count", "2"}, KeyValue{"raid.level", "raid1"})
	if err != nil {
		t.Fatal(err)
	}
	if x.DriveCount() != 2 || x.RAID.Level.String() != "raid1" {
		t.Errorf("got %d drives in %s, want 2 in raid1", x.DriveCount(), x.RAID.Level)
	}
	_, err = s.WithAll("point 7", KeyValue{"drives.count", "2"}, KeyValue{"raid.level", "raid6"})
	var se *Error
	if !errors.As(err, &se) || se.File != "point 7" || !strings.HasPrefix(se.Key, "drives") && se.Key != "raid.level" {
		t.Fatalf("raid6 on 2 drives: got %v, want an *Error of point 7 at drives or raid.level", err)
	}
	if !errors.Is(err, models.ErrConfig) || errors.Is(err, ErrUnknown) {
		t.Errorf("%v: want models.ErrConfig and not ErrUnknown (other keys could make it right)", err)
	}
	for _, kv := range []KeyValue{
		{"drives.model", "wd-red-99tb"}, {"raid.levle", "raid6"}, {"raid.level", "raid7"},
		{"link.kind", "100gbe"}, {"nas", "synology-ds9999"}, {"drives[3].count", "2"}, {"link", "{kind: 10gbe"},
	} {
		if _, err := s.WithAll("p", kv); !errors.Is(err, ErrUnknown) {
			t.Errorf("%s=%s: got %v, want an error matching ErrUnknown", kv.Key, kv.Value, err)
		}
	}
}
