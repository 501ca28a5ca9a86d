package ssd

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/internal/digest"
)

// goldenDigest pins every completion time and counter of the drives below
// over seeded traces: the die, channel, link and admission timelines, the
// FTL and garbage collection all feed into it. Speed work (here or in
// models/timeline) must leave it bit-identical. Update it only for a
// deliberate change of behaviour, and say so.
const goldenDigest = 0x3d066ae7385e65ef

func TestGoldenDigest(t *testing.T) {
	if got := goldenDigestOf(t, 30_000); got != goldenDigest {
		t.Errorf("digest %#x, want %#x: the drive's answers changed", got, uint64(goldenDigest))
	}
}

// goldenDigestOf fills small NVMe and SATA drives (one with an SLC cache)
// with random writes until garbage collection runs, mixed with reads,
// sequential streams, trims and flushes, and idle spells, at a queue of 32 whose parts a
// composite device may submit at future or earlier times.
func goldenDigestOf(t testing.TB, n int) uint64 {
	h := digest.New()
	put := h.Uint
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
			put(uint64(done))
			if err != nil {
				put(uint64(i))
			}
			slots[j] = max(slots[j], done)
		}
		h.Counters(d.Counters())
	}
	return h.Sum()
}
