package hdd

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/internal/digest"
)

// goldenDigest pins every completion time and counter of the drives below
// over seeded traces. Speed work on the model (cheaper arithmetic, fewer
// scans) must not move a single nanosecond; this digest proves it. Update
// it only for a deliberate change of the model's behaviour, and say so.
const goldenDigest = 0xa8b6efc0a3e3f077

func TestGoldenDigest(t *testing.T) {
	if got := goldenDigestOf(t, 25_000); got != goldenDigest {
		t.Errorf("digest %#x, want %#x: the drive's answers changed", got, uint64(goldenDigest))
	}
}

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

// goldenDigestOf runs each config through three workloads — a queue of 32
// random mixed requests whose parts a composite device submits at future
// times, interleaved sequential streams, and a hot spot that hits the
// buffer — and hashes every completion, error and counter.
func goldenDigestOf(t testing.TB, n int) uint64 {
	h := digest.New()
	put := h.Uint
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
				put(uint64(done))
				if err != nil {
					put(uint64(i))
				}
				slots[j] = max(slots[j], done)
			}
			h.Counters(d.Counters())
		}
	}
	return h.Sum()
}
