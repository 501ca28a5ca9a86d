package nasemu

import (
	"container/heap"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
)

// BenchmarkFullStack measures how many requests per wall second the whole
// model of a built-in setup simulates: SMB 3 → 1GbE → Synology DS1817
// (CPU, page cache) → RAID 5 of four WD Red HDDs, driven by a closed loop
// of 4 KiB random reads or writes over the whole volume at QD32 (so most
// requests reach the drives). The ios/s metric is the figure to compare.
func BenchmarkFullStack(b *testing.B) {
	for _, tc := range []struct {
		setup string
		op    models.Op
	}{
		{"ds1817-raid5-hdd-smb-1g", models.Read},
		{"ds1817-raid5-hdd-smb-1g", models.Write},
		{"ds1817-raid5-ssd-iscsi-1g", models.Read},
	} {
		b.Run("setup="+tc.setup+"/op="+tc.op.String(), func(b *testing.B) {
			s, err := LoadSetup(tc.setup)
			if err != nil {
				b.Fatal(err)
			}
			dev, err := s.Build(1)
			if err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			pages := dev.Capacity() / 4096
			const qd = 32
			q := make(doneHeap, qd)
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for b.Loop() {
				at := q[0]
				done, err := dev.Submit(at, models.Request{Op: tc.op, Offset: rng.Int64N(pages) * 4096, Length: 4096})
				if err != nil {
					b.Fatal(err)
				}
				q[0] = done
				heap.Fix(&q, 0)
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ios/s")
		})
	}
}

// doneHeap is a min-heap of the completion times of the requests in flight.
type doneHeap []time.Duration

func (h doneHeap) Len() int           { return len(h) }
func (h doneHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h doneHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *doneHeap) Push(x any)        { *h = append(*h, x.(time.Duration)) }
func (h *doneHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
