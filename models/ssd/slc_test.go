package ssd_test

import (
	"math"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/catalog"
	"github.com/nasemu/nasemu/models/ssd"
)

// nandRates returns a drive's sequential write rates in MB/s in SLC mode
// and in its native mode, from its geometry alone: every die programs
// one page group (planes x page size) per channel transfer + tPROG, and
// the host link caps the sum.
func nandRates(cfg ssd.Config) (slc, native float64) {
	link := cfg.LinkWriteMBps
	if link == 0 {
		link = 3150
		if cfg.Interface == ssd.SATA {
			link = 560
		}
	}
	dies := float64(cfg.Channels * cfg.DiesPerChannel)
	group := float64(cfg.Planes) * float64(cfg.PageSize)
	x := group / cfg.ChannelMBps / 1e6 // seconds
	rate := func(prog time.Duration) float64 { return min(link, dies*group/(x+prog.Seconds())/1e6) }
	return rate(cfg.ProgramSLC), rate(cfg.ProgramTLC)
}

// seqWrite writes n bytes sequentially (128 KiB, QD32) from offset 0 of
// d in chunks, starting at `at`, and returns the MB/s of each chunk and
// the end time.
func seqWrite(t *testing.T, d *ssd.Drive, at time.Duration, n, chunk int64) ([]float64, time.Duration) {
	t.Helper()
	load := ssd.NewLoad(ssd.Stimulus{Op: models.Write, BlockSize: 128 << 10, QueueDepth: 32})
	var rates []float64
	for w := int64(0); w < n; w += chunk {
		end, err := load.Run(d, at, chunk/(128<<10))
		if err != nil {
			t.Fatal(err)
		}
		rates = append(rates, float64(chunk)/(end-at).Seconds()/1e6)
		at = end
	}
	return rates, at
}

func scaled(t *testing.T, name string, capacity int64) ssd.Config {
	t.Helper()
	drv, err := catalog.LookupDrive(name)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := drv.SSD.ScaleTo(capacity)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestSLCCliff: a sustained sequential write of 100 GB to a fresh SN700
// 500GB (here a fifth of the drive, on a copy scaled to 16 GiB with the
// same dies, page groups and program times, and its SLC cache scaled in
// proportion) runs at the SLC rate of its NAND until the cache is full,
// then at the rate of its dies programming TLC directly (the cliff), both
// as the geometry gives them; after idle time the cache has been folded
// into TLC and is back.
func TestSLCCliff(t *testing.T) {
	cfg := scaled(t, "wd-red-sn700-500g", 16<<30)
	d, err := ssd.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	cache := counterOf(d, "slc_cache_bytes")
	const chunk = 16 << 20
	n := d.Capacity() / 5 / chunk * chunk
	rates, at := seqWrite(t, d, 0, n, chunk)
	slc, tlc := nandRates(cfg)
	inCache := int(cache/chunk) - 1
	t.Logf("cache %.0f MiB: %.0f MB/s in it (geometry: %.0f), %.0f past it (geometry: %.0f, published post-cache %.0f)",
		cache/(1<<20), rates[inCache/2], slc, rates[len(rates)-1], tlc, cfg.PostCacheWriteMBps)
	if r := rates[inCache/2]; math.Abs(r/slc-1) > 0.1 {
		t.Errorf("in the cache: %.0f MB/s, want the SLC rate %.0f", r, slc)
	}
	for i := inCache + 2; i < len(rates); i++ {
		if r := rates[i]; math.Abs(r/tlc-1) > 0.1 {
			t.Errorf("%d MiB written, past the cache: %.0f MB/s, want the TLC rate %.0f", (i+1)*chunk>>20, r, tlc)
		}
	}
	// Idle: folding empties the cache.
	at += 2 * time.Second
	if _, err := d.Submit(at, models.Request{Op: models.Read, Offset: 0, Length: 4096}); err != nil {
		t.Fatal(err)
	}
	used := counterOf(d, "slc_cache_used_bytes")
	t.Logf("after 2 s idle: SLC cache used %.1f MiB, %g blocks folded", used/(1<<20), counterOf(d, "slc_folds"))
	if used > 0.05*cache {
		t.Errorf("idle time did not fold the SLC cache: %.0f bytes still used", used)
	}
	at += time.Millisecond
	r, _ := seqWrite(t, d, at, chunk, chunk)
	if math.Abs(r[0]/slc-1) > 0.1 {
		t.Errorf("after idle: %.0f MB/s, want the SLC rate %.0f again", r[0], slc)
	}
}

// TestFullDriveFill: filling a whole fresh drive sequentially without
// pause takes the cache's bytes at the SLC rate and every byte once at the
// TLC rate (the data past the cache written directly, the cache's data
// folded when free blocks run out): average rate
// U / (C/R_slc + U/R_tlc), within 10 %, for the SN700 500GB and for a QLC
// drive whose cache is a large share of its capacity.
func TestFullDriveFill(t *testing.T) {
	for _, name := range []string{"wd-red-sn700-500g", "samsung-870-qvo-1t"} {
		cfg := scaled(t, name, 8<<30)
		d, err := ssd.New(cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		u := float64(d.Capacity())
		c := counterOf(d, "slc_cache_bytes")
		slc, tlc := nandRates(cfg)
		n := d.Capacity() / (16 << 20) * (16 << 20)
		_, end := seqWrite(t, d, 0, n, 16<<20)
		got := float64(n) / end.Seconds() / 1e6
		want := u / (c/(slc*1e6) + u/(tlc*1e6)) / 1e6
		t.Logf("%s: full fill at %.0f MB/s, analytic %.0f (cache %.0f MiB at %.0f MB/s, native %.0f MB/s); WA %.2f",
			name, got, want, c/(1<<20), slc, tlc, counterOf(d, "write_amplification"))
		if math.Abs(got/want-1) > 0.1 {
			t.Errorf("%s: full fill %.0f MB/s, want %.0f", name, got, want)
		}
	}
}

// The mapping state of every full-size catalog SSD costs at most 8 bytes
// per 4 KiB user page (computed from the table sizes New would allocate as
// the drive fills; a 4 TB drive's model fits in about 8 GB).
func TestMappingBytesPerPage(t *testing.T) {
	for _, drv := range catalog.Drives() {
		if drv.SSD == nil {
			continue
		}
		per := float64(drv.SSD.MappingBytes()) / float64(drv.SSD.UserPages())
		t.Logf("%-26s %6.2f bytes of mapping per 4 KiB user page (%.2f GB when full)", drv.Name, per, float64(drv.SSD.MappingBytes())/1e9)
		if per > 8 {
			t.Errorf("%s: %.2f bytes per user page", drv.Name, per)
		}
	}
}
