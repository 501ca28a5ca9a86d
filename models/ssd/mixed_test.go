package ssd_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/catalog"
	"github.com/nasemu/nasemu/models/ssd"
)

// mixedIOPS preconditions a drive to the random-write steady state and
// then runs 4 KiB random I/O, readPct % reads, at queue depth qd over the
// whole span, returning IOPS and the reads' mean latency.
func mixedIOPS(t *testing.T, cfg ssd.Config, readPct, qd int) (iops float64, readLat time.Duration) {
	t.Helper()
	d, err := ssd.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	stim := ssd.Stimulus{Op: models.Write, BlockSize: 4096, Random: true, QueueDepth: qd, Seed: 5}
	res, err := ssd.Precondition(d, 0, stim, d.Capacity()/4096/4, 40)
	if err != nil {
		t.Fatal(err)
	}
	at := res.End
	rng := rand.New(rand.NewPCG(7, 11))
	blocks := d.Capacity() / 4096
	slots := make([]time.Duration, qd)
	for i := range slots {
		slots[i] = at
	}
	const n = 300000
	end := at
	var reads int64
	var readSum time.Duration
	for i := range n {
		k := i % qd
		op := models.Write
		if rng.IntN(100) < readPct {
			op = models.Read
		}
		done, err := d.Submit(slots[k], models.Request{Op: op, Offset: rng.Int64N(blocks) * 4096, Length: 4096})
		if err != nil {
			t.Fatal(err)
		}
		if op == models.Read {
			reads++
			readSum += done - slots[k]
		}
		slots[k] = done
		end = max(end, done)
	}
	return n / (end - at).Seconds(), readSum / time.Duration(reads)
}

// A 70/30 mix of 4 KiB random reads and writes shares the dies' time: a
// drive whose reads suspend programs and erases reaches about
// 1/(0.7/R + 0.3/W) of its steady-state read and write rates R and W (the
// WD SN640's data sheet: 428K and 55K, so 141K), while the same drive
// with reads waiting for the word-line program in progress on their die
// (read priority, no suspend: suspend.go) falls far short of it at a
// queue depth that leaves it bound by its reads' latency, 32.
func TestMixedWithSuspend(t *testing.T) {
	drv, err := catalog.LookupDrive("wd-ultrastar-sn640-1.92t")
	if err != nil || drv.SSD == nil {
		t.Fatalf("no SN640 SSD in the catalog: %v", err)
	}
	cfg, err := drv.SSD.ScaleTo(2 << 30)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ProgramSuspend <= 0 {
		t.Fatalf("the SN640's catalog entry has no program suspend")
	}
	want := 1 / (0.7/cfg.RandReadIOPS + 0.3/cfg.RandWriteIOPS)
	got, lat := mixedIOPS(t, cfg, 70, 256)
	got32, lat32 := mixedIOPS(t, cfg, 70, 32)
	cfg.ProgramSuspend, cfg.EraseSuspend = 0, 0
	waiting, waitLat := mixedIOPS(t, cfg, 70, 32)
	t.Logf("70/30: %.0fK IOPS with suspend at QD256 (reads %v), at QD32 %.0fK (%v) with suspend, %.0fK (%v) without; die-time mix of the data sheet %.0fK",
		got/1e3, lat, got32/1e3, lat32, waiting/1e3, waitLat, want/1e3)
	if got < 0.85*want || got > 1.2*want {
		t.Errorf("with suspend: %.0fK IOPS, want within -15 %%..+20 %% of %.0fK", got/1e3, want/1e3)
	}
	if waiting > 0.7*want {
		t.Errorf("without suspend at QD32: %.0fK IOPS, want well below the mix (%.0fK): reads wait for programs", waiting/1e3, want/1e3)
	}
}
