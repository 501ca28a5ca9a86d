package raid

import (
	"errors"
	"strings"
	"testing"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fixed"
)

func TestParseLevel(t *testing.T) {
	for _, s := range []string{"single", "raid0", "raid1", "raid5", "raid6", "raid10", "jbod", "shr"} {
		l, err := ParseLevel(s)
		if err != nil || l.String() != s {
			t.Errorf("ParseLevel(%q) = %v, %v", s, l, err)
		}
		var u Level
		if err := u.UnmarshalText([]byte(strings.ToUpper(s))); err != nil || u != l {
			t.Errorf("UnmarshalText(%q) = %v, %v", strings.ToUpper(s), u, err)
		}
	}
	for _, s := range []string{"", "raid 5", "raid50", "unset"} {
		if _, err := ParseLevel(s); !errors.Is(err, models.ErrConfig) {
			t.Errorf("ParseLevel(%q) error %v, want ErrConfig", s, err)
		}
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg    Config
		drives int
		want   string // substring of the error; "" for none
	}{
		{Config{Level: Single}, 1, ""},
		{Config{Level: Single}, 2, "single with 2 drives: single needs exactly 1 drive"},
		{Config{Level: RAID0}, 1, "needs at least 2 drives"},
		{Config{Level: RAID1}, 2, ""},
		{Config{Level: RAID5}, 2, "raid5 with 2 drives: raid5 needs at least 3 drives"},
		{Config{Level: RAID5}, 3, ""},
		{Config{Level: RAID6}, 3, "raid6 needs at least 4 drives"},
		{Config{Level: RAID6}, 4, ""},
		{Config{Level: RAID10}, 5, "an even number of drives"},
		{Config{Level: RAID10}, 2, "an even number of drives, at least 4"},
		{Config{Level: RAID10}, 6, ""},
		{Config{Level: JBOD}, 1, ""},
		{Config{Level: JBOD}, 0, "at least 1 drive"},
		{Config{Level: SHR}, 1, "use single for one drive"},
		{Config{}, 1, "level not set"},
		{Config{Level: RAID5, Chunk: 3000}, 4, "chunk 3000: want a power of two"},
		{Config{Level: RAID5, Chunk: 2048}, 4, "chunk 2KiB"},
		{Config{Level: RAID5, Chunk: 128 << 10}, 4, ""},
		{Config{Level: RAID5, RebuildRate: -1}, 4, "rebuild_mbps -1"},
	} {
		err := tc.cfg.Validate(tc.drives)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v with %d drives: %v", tc.cfg, tc.drives, err)
		case tc.want != "" && (err == nil || !errors.Is(err, models.ErrConfig) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v with %d drives: error %v, want ErrConfig saying %q", tc.cfg, tc.drives, err, tc.want)
		}
	}
}

// TestUsable checks capacities and tolerances against hand-computed
// figures (the SHR ones match Synology's RAID calculator: 1+1+2+2 TB gives
// 4 TB, 1+2+3+4 TB gives 6 TB).
func TestUsable(t *testing.T) {
	const G = int64(1) << 30
	for _, tc := range []struct {
		level     Level
		caps      []int64
		want      int64
		tolerates int
	}{
		{Single, []int64{G}, G, 0},
		{RAID0, []int64{G, G, G, G}, 4 * G, 0},
		{RAID1, []int64{G, G, G}, G, 2},
		{RAID5, []int64{G, G, G, G}, 3 * G, 1},
		{RAID5, []int64{G, 2 * G, 2 * G}, 2 * G, 1},
		{RAID5, []int64{G + 1000, G + 5000, G + 70000}, 2 * G, 1}, // rounded down to whole 64 KiB chunks
		{RAID6, []int64{G, G, G, G, G, G}, 4 * G, 2},
		{RAID10, []int64{G, G, G, G}, 2 * G, 1},
		{JBOD, []int64{G, 2 * G, 3*G + 5}, 6*G + 5, 0},
		{SHR, []int64{G, G, G, G}, 3 * G, 1},
		{SHR, []int64{G, G}, G, 1},
		{SHR, []int64{G, G, 2 * G, 2 * G}, 4 * G, 1},
		{SHR, []int64{G, 2 * G, 3 * G, 4 * G}, 6 * G, 1},
		{SHR, []int64{2 * G, 4 * G}, 2 * G, 1},
	} {
		got, tol, err := Usable(Config{Level: tc.level}, tc.caps)
		if err != nil || got != tc.want || tol != tc.tolerates {
			t.Errorf("%s %v: Usable = %d, %d, %v; want %d, %d", tc.level, tc.caps, got, tol, err, tc.want, tc.tolerates)
		}
		ms := make([]models.Device, len(tc.caps))
		for i, c := range tc.caps {
			ms[i] = &fakeDev{capacity: c}
		}
		if a, err := New(Config{Level: tc.level}, ms); err != nil || a.Capacity() != tc.want {
			t.Errorf("%s %v: New: %v, %v", tc.level, tc.caps, a, err)
		}
	}
	if _, _, err := Usable(Config{Level: RAID5}, []int64{G, G, 4096}); !errors.Is(err, models.ErrConfig) || !strings.Contains(err.Error(), "smaller than one chunk") {
		t.Errorf("raid5 of a 4 KiB member: %v", err)
	}
	if _, _, err := Usable(Config{Level: RAID0}, []int64{G, 0}); !errors.Is(err, models.ErrConfig) {
		t.Errorf("zero-capacity member: %v", err)
	}
}

// The defaults, spelled out: a change to any of them changes every
// simulated array and must show up here.
func TestDefaults(t *testing.T) {
	c := Config{Level: RAID5}.withDefaults(4)
	if c.Chunk != 64<<10 || c.Name != "raid5 array of 4" || c.RebuildRate != 0 {
		t.Errorf("defaults %+v", c)
	}
	a := mustNew(t, Config{Level: RAID5}, fixedMembers(t, 4, fixed.Config{Capacity: GiB}))
	if busy, idle := a.rates(); busy != 1000*1024 || idle != 200000*1024 {
		t.Errorf("default rebuild rates %v, %v B/s; want md's 1000 and 200000 KiB/s", busy, idle)
	}
	a = mustNew(t, Config{Level: RAID5, RebuildRate: 80}, fixedMembers(t, 4, fixed.Config{Capacity: GiB}))
	if busy, idle := a.rates(); busy != 80e6 || idle != 80e6 {
		t.Errorf("rebuild_mbps 80: rates %v, %v B/s", busy, idle)
	}
}
