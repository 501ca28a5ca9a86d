package raid

import (
	"fmt"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/devicetest"
	"github.com/nasemu/nasemu/models/fixed"
	"github.com/nasemu/nasemu/models/hdd"
)

// TestConformance runs the device kit on every level over fixed-cost
// members, healthy, degraded and rebuilding, and on a RAID 5 of HDDs.
func TestConformance(t *testing.T) {
	fast := fixed.Config{Capacity: 256 << 20, Units: 2, Read: 100 * time.Microsecond, Write: 200 * time.Microsecond, Other: 50 * time.Microsecond, BytesPerSecond: 500e6}
	for _, g := range []struct {
		level   Level
		n       int
		degrade int // -1: healthy
		rebuild bool
	}{
		{RAID0, 3, -1, false}, {RAID1, 2, -1, false}, {RAID5, 4, -1, false},
		{RAID6, 5, -1, false}, {RAID10, 4, -1, false}, {JBOD, 3, -1, false}, {SHR, 4, -1, false},
		{RAID5, 4, 1, false}, {RAID6, 6, 4, true}, {RAID1, 3, 0, true}, {RAID10, 4, 3, false},
	} {
		name := fmt.Sprintf("%v-%d", g.level, g.n)
		if g.degrade >= 0 {
			name += fmt.Sprintf("-fail%d", g.degrade)
			if g.rebuild {
				name += "-rebuild"
			}
		}
		t.Run(name, func(t *testing.T) {
			devicetest.Run(t, devicetest.Config{
				Parallel: true,
				New: func(t testing.TB, _ uint64) models.Device {
					a := mustNew(t, Config{Level: g.level}, fixedMembers(t, g.n, fast))
					if g.degrade >= 0 {
						if err := a.FailMember(0, g.degrade); err != nil {
							t.Fatal(err)
						}
						if g.rebuild {
							if err := a.ReplaceMember(0, g.degrade, fixedMembers(t, 1, fast)[0]); err != nil {
								t.Fatal(err)
							}
						}
					}
					return a
				},
			})
		})
	}
	t.Run("raid5-hdd", func(t *testing.T) {
		red, err := hdd.Config{
			Capacity: 1_000_204_886_016, RPM: 5400, OuterMBps: 150, Heads: 2,
			TrackToTrack: time.Millisecond, AvgSeek: 11 * time.Millisecond, FullStroke: 24 * time.Millisecond,
			CacheSize: 64 << 20,
		}.ScaleTo(8 << 30)
		if err != nil {
			t.Fatal(err)
		}
		devicetest.Run(t, devicetest.Config{
			Parallel: true,
			New: func(t testing.TB, seed uint64) models.Device {
				ms := make([]models.Device, 4)
				for i := range ms {
					if ms[i], err = hdd.New(red, seed+uint64(i)); err != nil {
						t.Fatal(err)
					}
				}
				return mustNew(t, Config{Level: RAID5}, ms)
			},
		})
	})
}
