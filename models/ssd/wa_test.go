package ssd

import (
	"math"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
)

// testConfig is a small TLC drive without SLC cache whose raw NAND is alpha
// times its user capacity: 2 dies of 512 KiB blocks, so a GiB-size drive has
// hundreds of blocks per die and greedy GC behaves as on a full-size drive.
func testConfig(user int64, alpha float64) Config {
	const blockBytes = 512 << 10
	blocks := int(math.Round(float64(user) * alpha / blockBytes / 2))
	return Config{
		Capacity: models.Bytes(user), Interface: NVMe,
		CommandOverhead: 10 * time.Microsecond,
		Channels:        1, DiesPerChannel: 2, Planes: 1, PageSize: 16 << 10,
		PagesPerBlock: 32, BlocksPerDie: blocks, ChannelMBps: 800,
		ReadTLC: 60 * time.Microsecond, ReadSLC: 30 * time.Microsecond,
		ProgramTLC: 700 * time.Microsecond, ProgramSLC: 200 * time.Microsecond,
		Erase: 3500 * time.Microsecond,
	}
}

func counter(t testing.TB, d *Drive, name string) float64 {
	t.Helper()
	for _, c := range d.Counters() {
		if c.Name == name {
			return c.Value
		}
	}
	t.Fatalf("no counter %q", name)
	return 0
}

func TestAnalyticWA(t *testing.T) {
	if got := AnalyticWA(1.07); math.Abs(got-7.8) > 0.05 {
		t.Errorf("AnalyticWA(1.07) = %.3f, want 7.8", got)
	}
	prev := math.Inf(1)
	for _, alpha := range []float64{1.01, 1.07, 1.28, 1.5, 2, 4} {
		got := AnalyticWA(alpha)
		// The non-trivial root X = 1 - 1/WA satisfies X = exp(-alpha(1-X)).
		x := 1 - 1/got
		if x <= 0 || x >= 1 || math.Abs(x-math.Exp(-alpha*(1-x))) > 1e-9 {
			t.Errorf("AnalyticWA(%g) = %g: X = %g is not the root in (0,1)", alpha, got, x)
		}
		if got >= prev || got <= 1 {
			t.Errorf("AnalyticWA(%g) = %g: not decreasing towards 1", alpha, got)
		}
		prev = got
	}
	if !math.IsInf(AnalyticWA(1), 1) {
		t.Error("AnalyticWA(1) is finite")
	}
}

// Uniform random 4 KiB overwrites of a sequentially filled drive reach the
// write amplification of the analytic cleaning model (greedy does a little
// better than FIFO).
func TestWriteAmplification(t *testing.T) {
	const user = 1 << 30
	for _, alpha := range []float64{1.07, 1.28, 1.5} {
		d, err := New(testConfig(user, alpha), 1)
		if err != nil {
			t.Fatal(err)
		}
		at, err := NewLoad(Stimulus{Op: models.Write, BlockSize: 128 << 10, QueueDepth: 32}).Run(d, 0, user/(128<<10))
		if err != nil {
			t.Fatal(err)
		}
		rnd := NewLoad(Stimulus{Op: models.Write, BlockSize: 4096, Random: true, QueueDepth: 32, Seed: 7})
		units := int64(user / 4096)
		if at, err = rnd.Run(d, at, 3*units); err != nil { // reach steady state
			t.Fatal(err)
		}
		h0, n0 := counter(t, d, "host_bytes_written"), counter(t, d, "nand_bytes_written")
		if _, err = rnd.Run(d, at, units); err != nil {
			t.Fatal(err)
		}
		wa := (counter(t, d, "nand_bytes_written") - n0) / (counter(t, d, "host_bytes_written") - h0)
		want := AnalyticWA(alpha)
		t.Logf("alpha %.2f: steady-state WA %.3f, analytic (FIFO) %.3f, ratio %.3f", alpha, wa, want, wa/want)
		if wa < 0.75*want || wa > 1.05*want {
			t.Errorf("alpha %.2f: WA %.3f outside [0.75, 1.05] x analytic %.3f", alpha, wa, want)
		}
	}
}
