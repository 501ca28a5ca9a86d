package ssd

import (
	"math"
	"testing"
	"time"
)

// TestMapCache: a DRAM-less drive whose map cache reaches an eighth of
// the span read at QD1 pays a map read (tR SLC and a 4 KiB transfer) on
// 7/8 of the reads, so its mean latency exceeds the same drive's with
// DRAM by 7/8 of that; within the cache's reach it pays nothing once the
// map pages are in.
func TestMapCache(t *testing.T) {
	c := testConfig(64<<20, 1.2)
	_, dram := qd1Reads(t, c, 20000)
	c.MapCache = c.Capacity / 2 / 4096 * 4 / 8 // reaches an eighth of the half qd1Reads reads
	d, less := qd1Reads(t, c, 20000)
	mean := func(l []time.Duration) float64 {
		s := 0.0
		for _, v := range l {
			s += float64(v)
		}
		return s / float64(len(l))
	}
	miss := 1 - 1.0/8
	extra := float64(c.ReadSLC + transfer(4096, c.ChannelMBps))
	want := mean(dram) + miss*extra
	t.Logf("mean %.1f µs with DRAM, %.1f DRAM-less (analytic %.1f); %g map reads", mean(dram)/1e3, mean(less)/1e3, want/1e3,
		counter(t, d, "map_cache_misses"))
	if got := mean(less); math.Abs(got/want-1) > 0.03 {
		t.Errorf("DRAM-less mean %.1f µs, want %.1f", got/1e3, want/1e3)
	}
	// Within reach: a cache as large as the span's map.
	c.MapCache = c.Capacity / 4096 * 4
	_, all := qd1Reads(t, c, 20000)
	if got, w := mean(all[1000:]), mean(dram[1000:]); math.Abs(got/w-1) > 0.01 {
		t.Errorf("map cache reaching the span: mean %.1f µs, with DRAM %.1f", got/1e3, w/1e3)
	}
}
