package bench

import (
	"math"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/setup"
)

// simOf builds a sim target of a setup written as YAML.
func simOf(t *testing.T, yaml string) *Sim {
	t.Helper()
	s, err := setup.Parse("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	dev, err := s.Build(1)
	if err != nil {
		t.Fatal(err)
	}
	return NewSim("sim:"+s.Name, SimSetup{Device: dev})
}

// The bottleneck is the component analysis says it must be, on setups
// where it is known without the model: eight SATA SSDs (over 4 GB/s
// together) behind one 1GbE link read sequentially at the link's rate, so
// the link's transmit direction is saturated and named; one hard disk
// behind 10GbE (a NAS with 2 GiB of RAM, so that the 8 GiB file does not
// fit its page cache) reads 4 KiB at random at a few hundred IOPS while the link
// carries under 1 % of its rate, so the disk's head is. Each resource's
// utilisation also obeys the utilisation law, U = X·D/units, with its
// own service demand D.
func TestBottleneckKnownAnalytically(t *testing.T) {
	cases := []struct {
		name, yaml string
		job        Job
		class      models.Class
		component  string
		check      func(t *testing.T, r Result)
	}{
		{
			name: "1GbE in front of 8 SSDs",
			yaml: `name: eight-ssd-1g
nas: synology-ds1817
drives: {model: micron-5300-960g, count: 8, capacity: 4GiB}
raid: {level: raid0}
link: 1gbe
protocol: smb3
`,
			job:   Job{Name: "seq read", RW: Read, BS: 1 << 20, IODepth: 8, Filename: "f", Size: 2 << 30, TimeBased: true, Runtime: 2 * time.Second},
			class: models.ClassLink, component: "link",
			check: func(t *testing.T, r Result) {
				// 1GbE carries at most 125 MB/s on the wire.
				if r.MBps > 125 || r.MBps < 100 {
					t.Errorf("%.1f MB/s, want the link's rate (100–125)", r.MBps)
				}
				for _, u := range r.Utilisation {
					if u.Class == models.ClassDrive && u.Busy > 0.5 {
						t.Errorf("%s is %.0f%% busy behind a saturated 1GbE link", u.Resource, u.Busy*100)
					}
				}
			},
		},
		{
			name: "one HDD behind 10GbE",
			yaml: `name: one-hdd-10g
nas: {base: synology-ds3622xsplus, ram: 2GiB}
drives: {model: wd-red-1tb, count: 1}
raid: {level: single}
link: 10gbe
protocol: smb3
`,
			job:   Job{Name: "rand read", RW: RandRead, BS: 4096, IODepth: 32, Filename: "f", Size: 8 << 30, TimeBased: true, Runtime: 2 * time.Second},
			class: models.ClassDrive, component: "drives",
			check: func(t *testing.T, r Result) {
				if r.IOPS > 1000 {
					t.Errorf("%.0f IOPS from one 5400 rpm disk", r.IOPS)
				}
				for _, u := range r.Utilisation {
					if u.Class == models.ClassLink && u.Busy > 0.05 {
						t.Errorf("%s %.1f%% busy, want a small share of 10GbE", u.Resource, u.Busy*100)
					}
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sim := simOf(t, tc.yaml)
			rep, err := Run(sim, []Job{tc.job}, Options{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			r := rep.Results[0]
			b := r.Bottleneck
			if b == nil {
				t.Fatal("no bottleneck")
			}
			t.Logf("%.0f IOPS %.1f MB/s; bottleneck %s; next %v", r.IOPS, r.MBps, b, r.Utilisation[1:min(4, len(r.Utilisation))])
			if b.Class != string(tc.class) || b.Component != tc.component || b.Busy < Saturated {
				t.Errorf("bottleneck %+v, want a saturated %s (%s)", *b, tc.class, tc.component)
			}
			tc.check(t, r)
			// The utilisation law: U = X × D / units, X the I/Os per
			// second of the window (the job ran alone, from its start).
			x := float64(r.IOs) / r.Seconds
			for _, u := range r.Utilisation {
				want := min(1, x*u.DemandUs*1e-6/float64(u.Units))
				if math.Abs(u.Busy-want) > 0.02 {
					t.Errorf("%s: busy %.3f, X·D/units %.3f", u.Resource, u.Busy, want)
				}
			}
		})
	}
}

// A setup whose array is the limit of a long random-write run (RAID 5 of
// hard disks, writes past what the NAS's dirty page cache may hold) names
// its drives and the parity work, and a run too short to fill the dirty
// limit names the front instead: the page cache absorbs it, and the
// drives' writeback is background work no write waited for.
func TestBottleneckDirtyLimit(t *testing.T) {
	const yaml = `name: raid5-hdd
nas: synology-ds1817
drives: {model: wd-red-1tb, count: 4}
raid: {level: raid5}
link: 1gbe
protocol: smb3
`
	job := func(runtime time.Duration) Job {
		return Job{Name: "rand write", RW: RandWrite, BS: 4096, IODepth: 32, Filename: "f", Size: 16 << 30,
			Direct: true, TimeBased: true, Runtime: runtime}
	}
	short, err := Run(simOf(t, yaml), []Job{job(time.Second)}, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	long, err := Run(simOf(t, yaml), []Job{job(40 * time.Second)}, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	s, l := short.Results[0], long.Results[0]
	t.Logf("1 s: %.0f IOPS, %s; 40 s: %.0f IOPS, %s", s.IOPS, s.Bottleneck, l.IOPS, l.Bottleneck)
	if s.Bottleneck == nil || s.Bottleneck.Class == string(models.ClassDrive) {
		t.Errorf("1 s of writes (%.0f MB) within the dirty limit: bottleneck %s, want the front", s.MBps, s.Bottleneck)
	}
	for _, u := range s.Utilisation {
		if u.Class == models.ClassDrive && !u.Background {
			t.Errorf("1 s of absorbed writes: %s (%.0f%% busy) counted as on the writes' path", u.Resource, u.Busy*100)
		}
	}
	if l.Bottleneck == nil || l.Bottleneck.Component != "drives (RAID parity)" {
		t.Errorf("40 s of random writes on RAID 5 HDDs: bottleneck %s, want the drives' parity work", l.Bottleneck)
	}
	if l.IOPS > s.IOPS/3 {
		t.Errorf("40 s at %.0f IOPS against %.0f for 1 s: the dirty limit should hold the long run to the array's pace", l.IOPS, s.IOPS)
	}
}
