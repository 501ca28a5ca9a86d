package raid

import (
	"testing"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/catalog"
)

// Review 001 with the catalog's WD Red 1 TB model (scaled to 8 GiB, same
// geometry) in place of fixed devices: an Intel RST RAID 5 of four drives
// with a 128 KiB stripe unit. The review measured about 420 MB/s reading
// sequentially, more than 400 MB/s writing large blocks, and writes of
// blocks smaller than the stripe almost ten times slower.
func TestRAID5OfWDRedReview001(t *testing.T) {
	drive, err := catalog.LookupDrive("wd-red-1tb")
	if err != nil {
		t.Fatal(err)
	}
	build := func() *Array {
		ms := make([]models.Device, 4)
		for i := range ms {
			if ms[i], err = drive.New(8<<30, uint64(i+1)); err != nil {
				t.Fatal(err)
			}
		}
		return mustNew(t, Config{Level: RAID5, Chunk: 128 << 10}, ms)
	}
	stripe := 3 * 128 * KiB
	_, read := closedLoop(t, build(), 0, 4, 400, seqOps(models.Read, 8*stripe, 1<<30))
	_, full := closedLoop(t, build(), 0, 4, 400, seqOps(models.Write, 8*stripe, 1<<30))
	t.Logf("raid5 of 4 WD Red 1TB, 128 KiB chunk: sequential 3 MiB QD4 reads %.0f MB/s (review: ~420), full-stripe writes %.0f MB/s (review: >400)", read/1e6, full/1e6)
	for _, bs := range []int64{4 * KiB, 16 * KiB, 64 * KiB} {
		a := build()
		_, small := closedLoop(t, a, 0, 1, 3000, seqOps(models.Write, bs, 1<<30))
		t.Logf("  %2d KiB sequential writes QD1: %6.2f MB/s, %4.1f× slower than full-stripe writes", bs/KiB, small/1e6, full/small)
		if full/small < 5 {
			t.Errorf("%d KiB writes only %.1f× slower than full-stripe writes; review 001 saw almost 10×", bs/KiB, full/small)
		}
	}
}
