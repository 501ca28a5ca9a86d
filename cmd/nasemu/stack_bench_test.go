package main

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/nasemu/nasemu"
	"github.com/nasemu/nasemu/models"
)

// BenchmarkFullStack measures how many requests per wall second the whole
// model of a built-in setup simulates: SMB 3 → 1GbE → Synology DS1817
// (CPU, page cache) → RAID 5 of four WD Red HDDs, driven by a closed loop
// of 4 KiB random reads or writes over the whole volume, as if full of
// data, at QD32 (so most requests reach the drives). The ios/s metric
// is the figure to compare.
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
			s, err := nasemu.LoadSetup(tc.setup)
			if err != nil {
				b.Fatal(err)
			}
			// A volume full of data: the DS1817 reads never-written
			// blocks as holes without the drives (sparse_files), which
			// would turn this into a benchmark of the hole bitmap.
			sys := *s.NAS
			sys.Config.SparseFiles = false
			s.NAS = &sys
			dev, err := s.Build(1)
			if err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			pages := dev.Capacity() / 4096
			const qd = 32
			q := make(doneHeap, qd) // all zero: a valid heap
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for b.Loop() {
				at := q[0]
				done, err := dev.Submit(at, models.Request{Op: tc.op, Offset: rng.Int64N(pages) * 4096, Length: 4096})
				if err != nil {
					b.Fatal(err)
				}
				q.replaceMin(done)
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ios/s")
		})
	}
}

// doneHeap is a min-heap of the completion times of the requests in
// flight. The loop only ever replaces the earliest with the next
// request's completion, so it needs just a sift-down, written out for
// time.Duration: container/heap's calls through an interface cost more
// than some of the models the benchmark measures.
type doneHeap []time.Duration

// replaceMin replaces the earliest time with t and restores heap order.
func (h doneHeap) replaceMin(t time.Duration) {
	i := 0
	for {
		c := 2*i + 1
		if c >= len(h) {
			break
		}
		if r := c + 1; r < len(h) && h[r] < h[c] {
			c = r
		}
		if h[c] >= t {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i] = t
}

// The benchmark's heap hands out the earliest completion each time, as a
// sorted list of the same times would.
func TestDoneHeap(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	h := make(doneHeap, 32)
	ref := make([]time.Duration, 32)
	for range 10000 {
		next := h[0] + time.Duration(rng.IntN(1000))
		h.replaceMin(next)
		slices.Sort(ref)
		ref[0] = next
		if want := slices.Min(ref); h[0] != want {
			t.Fatalf("earliest %v, want %v", h[0], want)
		}
	}
}
