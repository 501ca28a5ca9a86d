package setup

import (
	"errors"
	"strings"
	"testing"

	"github.com/nasemu/nasemu/models"
)

// TestSingleSSDWriteCache: the cache tier follows the NAS OS's rules: QTS
// creates a read-write cache on one SSD, DSM (and a system of unknown OS)
// wants two.
func TestSingleSSDWriteCache(t *testing.T) {
	for _, c := range []struct {
		nas string
		ok  bool
	}{
		{"qnap-ts-464", true},
		{"synology-ds920plus", false},
		{"{cpu: {family: zen, ghz: 2.2}}", false},
	} {
		yaml := "nas: " + c.nas + "\ndrives: {model: wd-red-4tb, count: 2}\nraid: {level: raid1}\n" +
			"cache:\n  drives: {model: kingston-suv500-240g, count: 1}\n  mode: read-write\n"
		_, err := Parse("c.yaml", []byte(yaml))
		switch {
		case c.ok && err != nil:
			t.Errorf("%s: %v", c.nas, err)
		case !c.ok && (!errors.Is(err, models.ErrConfig) || !strings.Contains(fmtErr(err), "cache.mode")):
			t.Errorf("%s: a read-write cache on one SSD: %v", c.nas, err)
		}
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestRAIDStack: a system's arrays are Linux md ones (nas.Config.RAIDStack)
// under the NAS OSes built on md and when the system is written inline;
// not under ZFS, nor on the catalog's Windows servers (no OS stated); a
// setup's own raid_stack wins.
func TestRAIDStack(t *testing.T) {
	for _, c := range []struct {
		nas, want string
	}{
		{"synology-ds1817", "md"},
		{"qnap-ts-464", "md"},
		{"qnap-ts-h973ax", "none"},
		{"truenas-mini-x-plus", "none"},
		{"rst-server-001", "none"},
		{"{base: xeon-server-002}", "none"},
		{"{cpu: {family: zen, ghz: 2.2}}", "md"},
		{"{base: synology-ds1817, raid_stack: none}", "none"},
	} {
		s, err := Parse("s.yaml", []byte("nas: "+c.nas+"\ndrives: {model: wd-red-4tb, count: 3}\nraid: {level: raid5}\n"))
		if err != nil {
			t.Fatalf("%s: %v", c.nas, err)
		}
		got := s.NAS.Config.RAIDStack
		if got == "" {
			got = raidStack(s.NAS)
		}
		if got != c.want {
			t.Errorf("%s: raid stack %q, want %q", c.nas, got, c.want)
		}
	}
}
