package ssd

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
)

// programsConfig is a 16-die drive without SLC cache (4 channels of 4
// dies, 2 planes) whose controller programs at most k page groups at once.
func programsConfig(k int) Config {
	c := testConfig(1<<30, 1.3)
	c.Channels, c.DiesPerChannel, c.Planes = 4, 4, 2
	c.BlocksPerDie = int(math.Round(1 << 30 * 1.3 / (1 << 20) / 16))
	c.ConcurrentPrograms = k
	return c
}

// seqWriteRate writes n bytes sequentially in 1 MiB writes at QD1, flushes,
// and returns the MB/s up to the flush's completion.
func seqWriteRate(t *testing.T, d *Drive, n int64) float64 {
	t.Helper()
	var at time.Duration
	for off := int64(0); off < n; off += 1 << 20 {
		at = submit(t, d, at, models.Write, off, 1<<20)
	}
	at = submit(t, d, at, models.Flush, 0, 0)
	return float64(n) / at.Seconds() / 1e6
}

// A controller that programs k page groups at once sustains k groups per
// (channel transfer + tPROG) whatever its die count: the analytic rate of
// k servers. With k at least the die count it is the dies' rate.
func TestConcurrentProgramsRate(t *testing.T) {
	const n = 128 << 20
	for _, k := range []int{1, 4, 8, 0} {
		c := programsConfig(k)
		d := newTest(t, c)
		got := seqWriteRate(t, d, n)
		servers := k
		if k == 0 {
			servers = c.Channels * c.DiesPerChannel
		}
		group := float64(int64(c.Planes) * int64(c.PageSize))
		x := transfer(int64(group), c.ChannelMBps)
		want := float64(servers) * group / (x + c.ProgramTLC).Seconds() / 1e6
		t.Logf("k=%d: %.1f MB/s, analytic %.1f", k, got, want)
		if math.Abs(got/want-1) > 0.03 {
			t.Errorf("k=%d: %.1f MB/s, want %.1f (%d programs at once)", k, got, want, servers)
		}
	}
}

// A limit at or above the die count never binds: every completion time
// of a mixed load with garbage collection is what it is without a limit.
func TestConcurrentProgramsAboveDies(t *testing.T) {
	a, b := newTest(t, programsConfig(0)), newTest(t, programsConfig(16))
	var at time.Duration
	for off := int64(0); off < a.Capacity(); off += 1 << 20 {
		da := submit(t, a, at, models.Write, off, 1<<20)
		if db := submit(t, b, at, models.Write, off, 1<<20); da != db {
			t.Fatalf("fill at %d: %v without a limit, %v with one of 16 programs on 16 dies", off, da, db)
		}
		at = da
	}
	rng := rand.New(rand.NewPCG(7, 7))
	span := a.Capacity() / 4096
	for i := range 300000 {
		op := models.Write
		if i%4 == 0 {
			op = models.Read
		}
		off := rng.Int64N(span) * 4096
		da := submit(t, a, at, op, off, 4096)
		db := submit(t, b, at, op, off, 4096)
		if da != db {
			t.Fatalf("request %d: %v without a limit, %v with one of 16 programs on 16 dies", i, da, db)
		}
		at += 20 * time.Microsecond
	}
	if wa := counter(t, a, "nand_bytes_written") / counter(t, a, "host_bytes_written"); wa < 1.2 {
		t.Errorf("write amplification %.2f: garbage collection hardly ran", wa)
	}
}

// Garbage collection's programs take the same slots as the host's: with
// one slot, host writes times the write amplification never exceed one
// page group per (transfer + tPROG).
func TestConcurrentProgramsGC(t *testing.T) {
	c := programsConfig(1)
	d := newTest(t, c)
	span := d.Capacity() / 4096
	rng := rand.New(rand.NewPCG(3, 3))
	var at time.Duration
	for off := int64(0); off < d.Capacity(); off += 1 << 20 {
		at = submit(t, d, at, models.Write, off, 1<<20)
	}
	at = submit(t, d, at, models.Flush, 0, 0)
	start, nand0 := at, counter(t, d, "nand_bytes_written")
	const writes = 300000
	for range writes {
		at = submit(t, d, at, models.Write, rng.Int64N(span)*4096, 4096)
	}
	at = submit(t, d, at, models.Flush, 0, 0)
	nand := counter(t, d, "nand_bytes_written") - nand0
	group := float64(int64(c.Planes) * int64(c.PageSize))
	x := transfer(int64(group), c.ChannelMBps)
	limit := group / (x + c.ProgramTLC).Seconds()
	rate := nand / (at - start).Seconds()
	t.Logf("NAND writes %.1f MB/s (host %.1f MB/s, WA %.2f); one slot carries %.1f MB/s",
		rate/1e6, writes*4096/(at-start).Seconds()/1e6, nand/(writes*4096), limit/1e6)
	if nand < 2*writes*4096 {
		t.Fatalf("write amplification %.2f: garbage collection did not run", nand/(writes*4096))
	}
	if rate > limit*1.001 {
		t.Errorf("NAND writes at %.1f MB/s, above one slot's %.1f", rate/1e6, limit/1e6)
	}
}
