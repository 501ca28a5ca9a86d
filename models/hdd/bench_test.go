package hdd

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
)

// BenchmarkSubmit measures the model's speed: simulated I/Os per wall
// second (ios/s) in a closed loop at the given queue depth.
func BenchmarkSubmit(b *testing.B) {
	for _, bc := range []struct {
		op  string
		qd  int
		gen func(rng *rand.Rand, capacity int64, i int) models.Request
	}{
		{"randread", 1, randReq(models.Read)},
		{"randread", 32, randReq(models.Read)},
		{"randwrite", 1, randReq(models.Write)},
		{"seqread", 1, func(_ *rand.Rand, c int64, i int) models.Request {
			return models.Request{Op: models.Read, Offset: int64(i) * mib % (c - mib), Length: mib}
		}},
		{"seqwrite", 1, seqWrite},
		{"seqwrite", 8, seqWrite},
	} {
		b.Run(fmt.Sprintf("op=%s/qd=%d", bc.op, bc.qd), func(b *testing.B) {
			d := newDrive(b, wdRed1TB())
			rng := rand.New(rand.NewPCG(1, 2))
			slots := make([]time.Duration, bc.qd)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				j := i % bc.qd
				done, err := d.Submit(slots[j], bc.gen(rng, d.Capacity(), i))
				if err != nil {
					b.Fatal(err)
				}
				slots[j] = done
				i++
			}
			b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "ios/s")
		})
	}
}

func randReq(op models.Op) func(*rand.Rand, int64, int) models.Request {
	return func(rng *rand.Rand, c int64, _ int) models.Request {
		return models.Request{Op: op, Offset: rng.Int64N(c/(4*kib)) * 4 * kib, Length: 4 * kib}
	}
}

func seqWrite(_ *rand.Rand, c int64, i int) models.Request {
	return models.Request{Op: models.Write, Offset: int64(i) * mib % (c - mib), Length: mib}
}
