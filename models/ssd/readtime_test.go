package ssd

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
)

// qd1Reads fills a drive without SLC cache sequentially (every page group
// in TLC), then issues n 4 KiB reads of random written units, one at a
// time with an idle millisecond between them so that no read waits for
// another: each latency is the command overhead, tR of the page type, the
// retry steps, and the transfers.
func qd1Reads(t *testing.T, c Config, n int) (*Drive, []time.Duration) {
	t.Helper()
	d := newTest(t, c)
	span := d.Capacity() / 2
	at := time.Duration(0)
	for off := int64(0); off < span; off += 1 << 20 {
		at = submit(t, d, at, models.Write, off, 1<<20)
	}
	at = submit(t, d, at, models.Flush, 0, 0) + time.Second
	rng := rand.New(rand.NewPCG(7, 7))
	lat := make([]time.Duration, n)
	for i := range lat {
		lat[i] = submit(t, d, at, models.Read, rng.Int64N(span/4096)*4096, 4096) - at
		at += lat[i] + time.Millisecond
	}
	return d, lat
}

// TestPageTypeReadTimes: without retries, QD1 reads of TLC data take one
// of three latencies, one per page type, each for a third of the reads,
// in the SimpleSSD ratios 56.5 : 77.5 : 106, and tR averaged over the
// page types is the configured ReadTLC. QLC has four.
func TestPageTypeReadTimes(t *testing.T) {
	for _, bits := range []int{3, 4} {
		c := testConfig(64<<20, 1.2)
		c.CellBits = bits
		c.PagesPerBlock = 24
		c.BlocksPerDie = c.BlocksPerDie * 32 / 24
		d, lat := qd1Reads(t, c, 6000)
		x := transfer(4096, c.ChannelMBps) + transfer(4096, nvmeReadMBps) + c.CommandOverhead
		count := map[time.Duration]int{}
		for _, l := range lat {
			count[l-x]++
		}
		if len(count) != bits {
			t.Fatalf("%d bits per cell: %d distinct read times %v, want %d", bits, len(count), count, bits)
		}
		var mean float64
		for i := range bits {
			tR := d.tR[i]
			mean += float64(tR) / float64(bits)
			if f := float64(count[tR]) / float64(len(lat)); math.Abs(f-1/float64(bits)) > 0.03 {
				t.Errorf("%d bits: page type %d (tR %v) read by %.3f of the reads, want %.3f", bits, i, tR, f, 1/float64(bits))
			}
		}
		if math.Abs(mean-float64(c.ReadTLC)) > 2 {
			t.Errorf("%d bits: mean tR %v, want ReadTLC %v", bits, time.Duration(mean), c.ReadTLC)
		}
		if bits == 3 {
			if r := float64(d.tR[2]) / float64(d.tR[0]); math.Abs(r-106/56.5) > 1e-3 {
				t.Errorf("upper/lower tR %.3f, want 106/56.5", r)
			}
		}
	}
}

// TestReadRetry: the share of reads that retry, and the mean number of
// steps, follow the Poisson law of readtime.go at beginning of life and on
// worn blocks; each step costs one more tR of the page and one transfer.
func TestReadRetry(t *testing.T) {
	c := testConfig(64<<20, 1.2)
	c.ReadRetry = 0.05
	const n = 20000
	d, lat := qd1Reads(t, c, n)
	x := transfer(4096, c.ChannelMBps)
	base := x + transfer(4096, nvmeReadMBps) + c.CommandOverhead
	retried := 0
	for _, l := range lat {
		if l-base > d.tR[2] {
			retried++
		}
	}
	want := n * (1 - math.Exp(-c.ReadRetry))
	if sd := math.Sqrt(want); math.Abs(float64(retried)-want) > 4*sd {
		t.Errorf("%d of %d reads retried, want %.0f ± %.0f", retried, n, want, 4*sd)
	}
	steps := counter(t, d, "read_retries")
	if sd := math.Sqrt(n * c.ReadRetry); math.Abs(steps-n*c.ReadRetry) > 4*sd {
		t.Errorf("%g retry steps, want %.0f", steps, n*c.ReadRetry)
	}
	// A retried lower-page read takes exactly one more tR and transfer.
	found := false
	for _, l := range lat {
		if l-base == 2*d.tR[0]+x {
			found = true
			break
		}
	}
	if !found {
		t.Error("no read of a lower page with one retry step took 2 tR + a transfer more than its base")
	}
	// Worn blocks: 2000 erases add 2 steps per read on average.
	d2 := newTest(t, c)
	for i := range d2.erases {
		d2.erases[i] = 2000
	}
	var sum int
	for range n {
		sum += d2.retrySteps(2000)
	}
	if m, want := float64(sum)/n, c.ReadRetry+2; math.Abs(m-want) > 4*math.Sqrt(want/n) {
		t.Errorf("mean retry steps at 2000 erases %.3f, want %.3f", m, want)
	}
}

// TestReadRetryDeterministic: the same seed gives the same answers; the
// draws come from the drive's generator, not a global one.
func TestReadRetryDeterministic(t *testing.T) {
	c := testConfig(64<<20, 1.2)
	c.ReadRetry = 0.2
	_, a := qd1Reads(t, c, 2000)
	_, b := qd1Reads(t, c, 2000)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("read %d: %v then %v with the same seed", i, a[i], b[i])
		}
	}
}
