package ssd

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nasemu/nasemu/internal/golden"
	"github.com/nasemu/nasemu/models"
)

// TestGolden pins every completion time and counter of the drives below
// over seeded traces (testdata/drives.golden): the die, channel, link and
// admission timelines, the FTL and garbage collection all feed into it.
// Speed work (here or in models/timeline) must leave it bit-identical.
// Rewrite it (-rewrite) only for a deliberate change of behaviour, and
// say so.
func TestGolden(t *testing.T) {
	golden.Check(t, "drives", goldenTables(t, 30_000))
}

// goldenTables fills small NVMe and SATA drives (one with an SLC cache)
// with random writes until garbage collection runs, mixed with reads,
// sequential streams, trims and flushes, and idle spells, at a queue of 32 whose parts a
// composite device may submit at future or earlier times.
func goldenTables(t testing.TB, n int) string {
	runs := golden.NewTable(append([]string{"drive"}, golden.Header...)...)
	counters := golden.NewTable("drive", "device", "counter", "value")
	names := []string{"nvme", "sata", "sata-slc-cache"}
	nvme := testConfig(64<<20, 1.2)
	sata := testConfig(64<<20, 1.1)
	sata.Interface = SATA
	slc := testConfig(64<<20, 1.3)
	slc.SLCCacheMax, slc.SLCCacheMin = 16<<20, 4<<20
	for ci, c := range []Config{nvme, sata, slc} {
		d, err := New(c, uint64(ci+1))
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(ci), 99))
		capa := d.Capacity()
		slots := make([]time.Duration, 32)
		seq := int64(0)
		row := golden.NewSeries()
		for i := range n {
			if i%3000 == 2999 {
				// An idle spell: the SLC cache folds, GC catches up.
				for k := range slots {
					slots[k] += 3 * time.Second
				}
			}
			j := rng.IntN(len(slots))
			at := slots[j]
			switch rng.IntN(10) {
			case 0:
				at += time.Duration(rng.IntN(5_000_000))
			case 1:
				at = max(at-time.Duration(rng.IntN(1_000_000)), 0)
			}
			var r models.Request
			switch k := rng.IntN(100); {
			case k < 45:
				r = models.Request{Op: models.Write, Offset: rng.Int64N(capa/4096) * 4096, Length: 4096}
			case k < 80:
				r = models.Request{Op: models.Read, Offset: rng.Int64N(capa/4096) * 4096, Length: 4096 << rng.IntN(3)}
			case k < 95:
				r = models.Request{Op: models.Write, Offset: seq, Length: 128 << 10}
				if k >= 90 {
					r.Op = models.Read
				}
				seq = (seq + r.Length) % (capa - 1<<20)
			case k < 97:
				r = models.Request{Op: models.Trim, Offset: rng.Int64N(capa/65536) * 65536, Length: 65536 + 2048}
			case k < 98:
				r = models.Request{Op: models.Flush}
			case k < 99:
				r = models.Request{Op: models.Read, Offset: capa - 2048, Length: 4096} // out of range
			default:
				r = models.Request{Op: models.Write, Offset: rng.Int64N(capa/512) * 512, Length: 1536}
			}
			done, err := d.Submit(at, r)
			row.Done(i, at, done, err)
			slots[j] = max(slots[j], done)
		}
		runs.Row(append([]string{names[ci]}, row.Cells()...)...)
		golden.Counters(counters, names[ci], "drive", d.Counters())
	}
	return "# ssd: seeded traces over each drive (golden_test.go); latencies in exact µs\n" +
		runs.String() + "\n" + counters.String()
}
