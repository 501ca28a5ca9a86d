package hdd

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nasemu/nasemu/internal/golden"
	"github.com/nasemu/nasemu/models"
)

// TestGolden pins every completion time and counter of the drives below
// over seeded traces (testdata/drives.golden). Speed work on the model
// (cheaper arithmetic, fewer scans) must not move a single nanosecond.
// Rewrite the file (-rewrite) only for a deliberate change of the model's
// behaviour, and say so.
func TestGolden(t *testing.T) {
	golden.Check(t, "drives", goldenTables(t, 25_000))
}

// goldenNames name goldenConfigs and the workloads, for the tables.
var (
	goldenNames    = []string{"wd-red", "no-write-cache", "qd1", "exos-tight-cache", "one-zone-sata1.5", "scaled-8g"}
	goldenWorkload = []string{"random-qd32", "streams", "hot-spot"}
)

// goldenConfigs span the model's branches: NCQ on and off, write cache on
// and off, a write cache that fills (few entries), one zone, a slow link,
// a scaled-down drive as the built-in setups use.
func goldenConfigs(t testing.TB) []Config {
	red := wdRed1TB()
	noWC := red
	noWC.WriteCacheDisabled = true
	qd1 := red
	qd1.QueueDepth = 1
	tight := exosX18()
	tight.WriteCacheEntries = 4
	tight.CacheSize = 4 << 20
	tight.CacheSegments = 2
	flat := red
	flat.Zones = 1
	flat.Interface = "sata-1.5g"
	small, err := red.ScaleTo(8 << 30)
	if err != nil {
		t.Fatal(err)
	}
	return []Config{red, noWC, qd1, tight, flat, small}
}

// goldenTables runs each config through three workloads — a queue of 32
// random mixed requests whose parts a composite device submits at future
// times, interleaved sequential streams, and a hot spot that hits the
// buffer — and tabulates every completion, error and counter.
func goldenTables(t testing.TB, n int) string {
	runs := golden.NewTable(append([]string{"drive", "workload"}, golden.Header...)...)
	counters := golden.NewTable("drive/workload", "device", "counter", "value")
	for ci, c := range goldenConfigs(t) {
		for w := range 3 {
			d, err := New(c, uint64(ci*3+w+1))
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(uint64(ci), uint64(w)))
			capa := d.Capacity()
			slots := make([]time.Duration, 32)
			streams := [4]int64{0, capa / 3, capa / 2, capa - 64<<20}
			row := golden.NewSeries()
			for i := range n {
				j := rng.IntN(len(slots))
				at := slots[j]
				switch rng.IntN(10) {
				case 0: // the write phase of a read-modify-write, booked ahead
					at += time.Duration(rng.IntN(30_000_000))
				case 1: // a part submitted late, before earlier arrivals
					at -= time.Duration(rng.IntN(3_000_000))
					at = max(at, 0)
				}
				var r models.Request
				switch w {
				case 0:
					r = models.Request{Op: models.Read, Offset: rng.Int64N(capa/4096) * 4096, Length: 4096 << rng.IntN(3)}
					if rng.IntN(3) == 0 {
						r.Op = models.Write
					}
				case 1:
					k := rng.IntN(len(streams))
					r = models.Request{Op: models.Read, Offset: streams[k], Length: 64 << 10 << rng.IntN(4)}
					if k >= 2 {
						r.Op = models.Write
					}
					if rng.IntN(50) == 0 {
						streams[k] = rng.Int64N(capa/2) &^ 4095
					}
					streams[k] = (streams[k] + r.Length) % (capa - 2<<20)
				default:
					r = models.Request{Op: models.Read, Offset: rng.Int64N(256) * 8192, Length: 8192}
					if rng.IntN(4) == 0 {
						r.Op = models.Write
					}
				}
				switch rng.IntN(200) {
				case 0:
					r = models.Request{Op: models.Flush}
				case 1:
					r.Op = models.Trim
				case 2:
					r.Length = 0
				case 3:
					r.Offset = capa - 1024 // out of range: an error
				}
				done, err := d.Submit(at, r)
				row.Done(i, at, done, err)
				slots[j] = max(slots[j], done)
			}
			runs.Row(append([]string{goldenNames[ci], goldenWorkload[w]}, row.Cells()...)...)
			golden.Counters(counters, goldenNames[ci]+"/"+goldenWorkload[w], "drive", d.Counters())
		}
	}
	return "# hdd: seeded traces over each drive (golden_test.go); latencies in exact µs\n" +
		runs.String() + "\n" + counters.String()
}
