package ssd_test

import (
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/catalog"
	"github.com/nasemu/nasemu/models/devicetest"
	"github.com/nasemu/nasemu/models/ssd"
)

// TestReadAfterFill: a drive that has just taken a 2 GiB sequential write
// into its SLC cache and then sat idle for a second (long enough to start
// folding, too short to finish) reads the file back sequentially, 1 MiB at
// QD8 as CrystalDiskMark does, near its datasheet read rate, and no read
// waits for folding work booked past its own arrival: idle-time folding
// must stop when the host comes back, on every die of a channel (the 2 TB
// 870 QVO, two dies a channel, once booked a whole SLC block's folding,
// 1.15 s, ahead of the first read).
func TestReadAfterFill(t *testing.T) {
	for _, drv := range catalog.Drives() {
		if drv.SSD == nil || drv.SSD.SLCCacheMax == 0 {
			continue
		}
		t.Run(drv.Name, func(t *testing.T) {
			d, err := ssd.New(*drv.SSD, 1)
			if err != nil {
				t.Fatal(err)
			}
			const fill, bs = 2 << 30, 1 << 20
			w := devicetest.ClosedLoop(t, d, 0, 8, fill/bs, func(i int) models.Request {
				return models.Request{Op: models.Write, Offset: int64(i) * bs, Length: bs}
			})
			at := w.Elapsed + time.Second
			var worst time.Duration
			lat := &latencyProbe{Device: d, worst: &worst}
			r := devicetest.ClosedLoop(t, lat, at, 8, fill/bs, func(i int) models.Request {
				return models.Request{Op: models.Read, Offset: int64(i) * bs, Length: bs}
			})
			want := drv.SSD.SeqReadMBps
			t.Logf("read %.0f MB/s (datasheet %.0f), slowest 1 MiB read %v", r.MBps(), want, worst)
			if r.MBps() < 0.8*want {
				t.Errorf("sequential read after a fill: %.0f MB/s, want ≥ 80 %% of the datasheet's %.0f", r.MBps(), want)
			}
			// Eight 1 MiB reads in flight, each at worst a sense and a
			// transfer per page group behind one program or erase on its
			// die: tens of ms would mean a read waited for work booked
			// after it arrived.
			if worst > 20*time.Millisecond {
				t.Errorf("a 1 MiB read took %v", worst)
			}
		})
	}
}

// latencyProbe records the longest time any request took.
type latencyProbe struct {
	models.Device
	worst *time.Duration
}

func (p *latencyProbe) Submit(at time.Duration, r models.Request) (time.Duration, error) {
	done, err := p.Device.Submit(at, r)
	*p.worst = max(*p.worst, done-at)
	return done, err
}
