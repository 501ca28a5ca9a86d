package ssd_test

import (
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/catalog"
)

// TestLargeReadStreams: a lone SATA SSD reading 1 MiB at QD1 sends the
// data over its link while its dies sense the rest of the request, so a
// read takes the command's overhead, the first page group's sense and
// channel transfer (~0.1 ms), and the request over the link: for a
// Kingston UV500 (4 dies, a 560 MB/s link), 20 µs + ~0.1 ms + 1.87 ms,
// about 2.0 ms (530 MB/s). A drive that sent nothing until every page
// group was in the controller added the dies' time to the link's: 2.7 ms
// (386 MB/s).
func TestLargeReadStreams(t *testing.T) {
	drv, err := catalog.LookupDrive("kingston-suv500-240g")
	if err != nil {
		t.Fatal(err)
	}
	d, err := drv.New(8*models.GiB, 1)
	if err != nil {
		t.Fatal(err)
	}
	const bs, span = models.MiB, 64 * models.MiB
	var at time.Duration
	for off := int64(0); off < span; off += bs {
		if at, err = d.Submit(at, models.Request{Op: models.Write, Offset: off, Length: bs}); err != nil {
			t.Fatal(err)
		}
	}
	at += time.Second // idle: the write buffer has gone to NAND
	var sum time.Duration
	for off := int64(0); off < span; off += bs {
		done, err := d.Submit(at, models.Request{Op: models.Read, Offset: off, Length: bs})
		if err != nil {
			t.Fatal(err)
		}
		sum, at = sum+done-at, done
	}
	mean := sum / time.Duration(span/bs)
	overhead, link := 20*time.Microsecond, 560e6 // the UV500's command overhead; SATA's link
	floor := overhead + time.Duration(float64(bs)/link*float64(time.Second))
	t.Logf("1 MiB sequential reads at QD1: %v each (%.0f MB/s); link-bound floor %v", mean, float64(bs)/mean.Seconds()/1e6, floor)
	if mean < floor || mean > floor+150*time.Microsecond {
		t.Errorf("1 MiB read at QD1 in %v, want %v to %v: the link carries the data as the dies sense it", mean, floor, floor+150*time.Microsecond)
	}
}
