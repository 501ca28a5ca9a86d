package ssd_test

import (
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/catalog"
	"github.com/nasemu/nasemu/models/ssd"
)

// A sequential write larger than a fresh SN700 500GB's SLC cache runs at
// the datasheet speed until the cache is full, then at the TLC rate
// (16 dies x 64 KiB / (82 µs transfer + 630 µs TLC program) = 1.47 GB/s);
// after idle time the cache has been folded into TLC and is back.
func TestSLCCliff(t *testing.T) {
	drv, err := catalog.LookupDrive("wd-red-sn700-500g")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := drv.SSD.ScaleTo(16 << 30)
	if err != nil {
		t.Fatal(err)
	}
	d, err := ssd.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	cache := counterOf(d, "slc_cache_bytes")
	const chunk = 16 << 20
	chunks := int(3 * cache / chunk)
	load := ssd.NewLoad(ssd.Stimulus{Op: models.Write, BlockSize: 128 << 10, QueueDepth: 32})
	at := time.Duration(0)
	var rates []float64
	for i := range chunks {
		end, err := load.Run(d, at, chunk/(128<<10))
		if err != nil {
			t.Fatal(err)
		}
		rates = append(rates, chunk/(end-at).Seconds()/1e6)
		t.Logf("%4d MiB written: %5.0f MB/s, SLC cache used %5.1f of %5.1f MiB", (i+1)*chunk>>20, rates[i],
			counterOf(d, "slc_cache_used_bytes")/(1<<20), counterOf(d, "slc_cache_bytes")/(1<<20))
		at = end
	}
	tlc := 16 * 65536 / (82e-6 + 630e-6) / 1e6
	inCache := int(cache/chunk) - 1
	if r := rates[inCache/2]; r < 0.9*cfg.SeqWriteMBps || r > 1.1*cfg.SeqWriteMBps {
		t.Errorf("in the cache: %.0f MB/s, want datasheet %.0f", r, cfg.SeqWriteMBps)
	}
	if r := rates[len(rates)-1]; r < 0.9*tlc || r > 1.1*tlc {
		t.Errorf("past the cache: %.0f MB/s, want the TLC rate %.0f", r, tlc)
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
	end, err := load.Run(d, at, chunk/(128<<10))
	if err != nil {
		t.Fatal(err)
	}
	if r := chunk / (end - at).Seconds() / 1e6; r < 0.9*cfg.SeqWriteMBps {
		t.Errorf("after idle: %.0f MB/s, want the SLC speed %.0f again", r, cfg.SeqWriteMBps)
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
