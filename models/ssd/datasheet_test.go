package ssd_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/catalog"
	"github.com/nasemu/nasemu/models/ssd"
)

// figures are what a datasheet quotes, and the post-cache write rate
// that reviews publish.
type figures struct{ seqR, seqW, rr, rw, post float64 }

// measureDatasheet runs the vendor's test conditions against a scaled copy
// of a catalog SSD:
//
//   - sequential write: 128 KiB, QD32, on the fresh drive, within the SLC
//     cache where there is one (consumer drives quote the cached speed);
//   - sequential read: 128 KiB, QD32, of the data just written;
//   - random read: 4 KiB, QD32 x 8 threads (QD256) for NVMe, QD32 for SATA
//     (NCQ's limit), over the written span;
//   - random write, consumer drives (fresh out of box): 4 KiB at the same
//     queue depth on the fresh drive, within the SLC cache (a burst on a
//     span the cache holds) where the vendor says so (RandWriteInCache),
//     else over the whole span, measured once the cache is full (a
//     full-span test runs far past the cache);
//   - random write, enterprise drives: steady state after SNIA
//     preconditioning (purge, 2x sequential fill, 4 KiB random rounds);
//   - post-cache write: 128 KiB QD32 sequential once the SLC cache is full
//     (for drives without one, the sequential write above).
//
// Most figures are predictions: NAND timings come from the NAND class,
// geometry from the die count, the link from the interface. The few from
// which a class or drive parameter was set are listed in fitted, and the
// test says so where it compares them.
func measureDatasheet(t *testing.T, cfg ssd.Config) figures {
	t.Helper()
	qd := 256
	if cfg.Interface == ssd.SATA {
		qd = 32
	}
	var f figures
	d, err := ssd.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	span := d.Capacity() / 4
	if cfg.SLCCacheMax > 0 {
		span = int64(counterOf(d, "slc_cache_bytes")) / 2
	}
	span -= span % (128 << 10)
	n := span / (128 << 10)
	end, err := ssd.NewLoad(ssd.Stimulus{Op: models.Write, BlockSize: 128 << 10, QueueDepth: 32, Span: span}).Run(d, 0, n)
	if err != nil {
		t.Fatal(err)
	}
	f.seqW = float64(span) / end.Seconds() / 1e6
	if c := counterOf(d, "slc_cache_used_bytes"); cfg.SLCCacheMax > 0 && c < float64(span) {
		t.Errorf("sequential write did not go to the SLC cache (%g bytes there)", c)
	}
	start := end
	end, err = ssd.NewLoad(ssd.Stimulus{Op: models.Read, BlockSize: 128 << 10, QueueDepth: 32, Span: span}).Run(d, start, n)
	if err != nil {
		t.Fatal(err)
	}
	f.seqR = float64(span) / (end - start).Seconds() / 1e6
	start = end
	const reads = 200000
	end, err = ssd.NewLoad(ssd.Stimulus{Op: models.Read, BlockSize: 4096, Random: true, QueueDepth: qd, Span: span, Seed: 3}).Run(d, start, reads)
	if err != nil {
		t.Fatal(err)
	}
	f.rr = reads / (end - start).Seconds()

	stim := ssd.Stimulus{Op: models.Write, BlockSize: 4096, Random: true, QueueDepth: qd, Seed: 5}
	if cfg.SLCCacheMax == 0 {
		f.post = f.seqW
		d, _ = ssd.New(cfg, 1)
		res, err := ssd.Precondition(d, 0, stim, d.Capacity()/4096/4, 40)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Steady {
			t.Errorf("no steady state after %d rounds: %.0f", len(res.Rounds), res.Rounds)
		}
		last := res.Rounds[len(res.Rounds)-5:]
		for _, v := range last {
			f.rw += v / 5
		}
		t.Logf("preconditioning rounds (IOPS): %.0f; WA %.2f", res.Rounds, counterOf(d, "write_amplification"))
		return f
	}
	d, _ = ssd.New(cfg, 1)
	cache := counterOf(d, "slc_cache_bytes")
	if cfg.RandWriteInCache {
		// A burst on a fresh drive: fewer writes than the cache holds,
		// over a span of half the cache.
		stim.Span = int64(cache/2) / 4096 * 4096
		writes := int64(0.8 * cache / 4096)
		end, err = ssd.NewLoad(stim).Run(d, 0, writes)
		if err != nil {
			t.Fatal(err)
		}
		f.rw = float64(writes) / end.Seconds()
	} else {
		load := ssd.NewLoad(stim)
		end, err := load.Run(d, 0, int64(cache)/4096+10000)
		if err != nil {
			t.Fatal(err)
		}
		const writes = 200000
		start := end
		if end, err = load.Run(d, start, writes); err != nil {
			t.Fatal(err)
		}
		f.rw = writes / (end - start).Seconds()
	}
	// Post-cache: fill the cache sequentially, then measure.
	d, _ = ssd.New(cfg, 1)
	load := ssd.NewLoad(ssd.Stimulus{Op: models.Write, BlockSize: 128 << 10, QueueDepth: 32})
	end, err = load.Run(d, 0, int64(cache)/(128<<10)+64)
	if err != nil {
		t.Fatal(err)
	}
	if used, capa := counterOf(d, "slc_cache_used_bytes"), counterOf(d, "slc_cache_bytes"); used+float64(cfg.Planes)*float64(cfg.PageSize) < capa {
		t.Errorf("SLC cache not full after the warm-up: %g of %g bytes", used, capa)
	}
	const post = 256 << 20
	start = end
	if end, err = load.Run(d, start, post/(128<<10)); err != nil {
		t.Fatal(err)
	}
	f.post = post / (end - start).Seconds() / 1e6
	return f
}

func counterOf(d *ssd.Drive, name string) float64 {
	for _, c := range d.Counters() {
		if c.Name == name {
			return c.Value
		}
	}
	return math.NaN()
}

// knownDeviations are datasheet figures the model's physics does not
// reach within 10 %, with the model's figure and why; the test holds the
// model to that figure (±5 %), so that a change of either is seen.
var knownDeviations = map[string]struct {
	model float64
	why   string
}{
	"wd-red-sn700-500g/seq write MB/s": {3146, "16 dies of the family's NAND program SLC pages at 3.2 GB/s, which the " +
		"link caps at 3.15; the data sheet's 2.6 GB/s is lower for a reason it does not give"},
	"kingston-dc500m-480g/random write IOPS": {48.3e3, "Kingston does not name the NAND; the charge-trap (BiCS) " +
		"family's enterprise program time, set from the DC SN640's sequential write, predicts 48K steady-state " +
		"random writes where the data sheet gives 58K (a page group in 850 µs would reach it)"},
}

// fitted names the datasheet figures from which a catalog parameter was
// set (the parameter in the value). The model reproduces them by
// construction, so for them the test checks only the derivation's
// arithmetic; every other figure is a prediction from the NAND class, the
// geometry and the interface.
var fitted = map[string]string{
	"wd-red-sn700-250g/seq write MB/s":           "the 64-layer class's SLC program time",
	"wd-red-sn700-1t/random read IOPS":           "the SN700 controller's command rate",
	"kingston-suv500-240g/seq write MB/s":        "its SLC program time",
	"kingston-suv500-240g/random read IOPS":      "its controller's command rate",
	"kingston-suv500-240g/random write IOPS":     "its TLC program time",
	"intel-s4510-960g/random write IOPS":         "the IMFT enterprise TLC family's program time",
	"wd-ultrastar-sn640-1.92t/seq write MB/s":    "the BiCS enterprise TLC family's program time",
	"wd-ultrastar-sn640-1.92t/random write IOPS": "its usable blocks per die",
	"wd-ultrastar-sn640-1.92t/random read IOPS":  "its controller's command rate",
	"samsung-970-evo-plus-1t/post-cache write":   "the V5 TLC class's program time",
	"samsung-970-evo-plus-1t/random read IOPS":   "the Phoenix controller's command rate",
	"samsung-970-evo-plus-250g/seq write MB/s":   "the V5 TLC class's SLC program time",
	"samsung-970-evo-plus-250g/random read IOPS": "the V5 TLC class's SLC read time",
	"samsung-870-qvo-1t/post-cache write":        "the V5 QLC class's program time",
	"samsung-870-qvo-1t/random read IOPS":        "the MKX controller's command rate",
	"samsung-870-qvo-4t/post-cache write":        "the MKX controller's concurrent programs",
}

// Every catalog SSD, scaled down with its physics unchanged, reaches its
// datasheet sequential MB/s and random IOPS within 10 % under the vendor's
// conditions (but for knownDeviations), its published post-cache write
// rate within 15 %, and never exceeds its host link.
func TestDatasheet(t *testing.T) {
	for _, drv := range catalog.Drives() {
		if drv.SSD == nil {
			continue
		}
		t.Run(drv.Name, func(t *testing.T) {
			cfg, err := drv.SSD.ScaleTo(4 << 30)
			if err != nil {
				t.Fatal(err)
			}
			got := measureDatasheet(t, cfg)
			want := figures{cfg.SeqReadMBps, cfg.SeqWriteMBps, cfg.RandReadIOPS, cfg.RandWriteIOPS, cfg.PostCacheWriteMBps}
			t.Logf("seq read %.0f MB/s (datasheet %.0f), seq write %.0f (%.0f), 4K random read %.0fK IOPS (%.0fK), write %.0fK (%.0fK), post-cache write %.0f MB/s (published %.0f)",
				got.seqR, want.seqR, got.seqW, want.seqW, got.rr/1e3, want.rr/1e3, got.rw/1e3, want.rw/1e3, got.post, want.post)
			check := func(what string, g, w float64) {
				if k, ok := knownDeviations[drv.Name+"/"+what]; ok {
					t.Logf("%s: model %.0f, datasheet %.0f: known deviation: %s", what, g, w, k.why)
					if math.Abs(g/k.model-1) > 0.05 {
						t.Errorf("%s: model %.0f, want the known deviation's %.0f", what, g, k.model)
					}
					return
				}
				if p, ok := fitted[drv.Name+"/"+what]; ok {
					t.Logf("%s: model %.0f, datasheet %.0f: fitted (it set %s), not a prediction", what, g, w, p)
				}
				if math.Abs(g-w) > 0.1*w {
					t.Errorf("%s: model %.0f, datasheet %.0f (%+.1f %%)", what, g, w, (g/w-1)*100)
				}
			}
			check("seq read MB/s", got.seqR, want.seqR)
			check("seq write MB/s", got.seqW, want.seqW)
			check("random read IOPS", got.rr, want.rr)
			check("random write IOPS", got.rw, want.rw)
			if k, ok := knownDeviations[drv.Name+"/post-cache write"]; ok && want.post > 0 {
				t.Logf("post-cache write: model %.0f, published %.0f: known deviation: %s", got.post, want.post, k.why)
				if math.Abs(got.post/k.model-1) > 0.05 {
					t.Errorf("post-cache write: model %.0f, want the known deviation's %.0f", got.post, k.model)
				}
			} else if want.post > 0 {
				// Published by reviews as read off a chart, or by the
				// vendor rounded: 15 %.
				if p, ok := fitted[drv.Name+"/post-cache write"]; ok {
					t.Logf("post-cache write: fitted (it set %s), not a prediction", p)
				}
				if math.Abs(got.post/want.post-1) > 0.15 {
					t.Errorf("post-cache write: model %.0f MB/s, published %.0f (%+.1f %%)", got.post, want.post, (got.post/want.post-1)*100)
				}
			} else {
				t.Logf("no published post-cache write rate: the model's %.0f MB/s is a prediction", got.post)
			}
			limit := 3500.0
			if cfg.Interface == ssd.SATA {
				limit = 560
			}
			for _, v := range []float64{got.seqR, got.seqW, got.rr * 4096 / 1e6, got.rw * 4096 / 1e6} {
				if v > limit*1.0001 {
					t.Errorf("%.0f MB/s exceeds the %s link's %.0f MB/s", v, strings.ToUpper(cfg.Interface), limit)
				}
			}
		})
	}
}

// TestQD1ReadTail: 4 KiB random reads at QD1 of a file just written to an
// SN700 500GB (fio's layout: 1 MiB sequential writes, so the data sits in
// the SLC cache) have a tail from read retries: the 99.9th percentile at
// 1.5 to 2.5 times the median, the range published QD1 distributions of
// flash SSDs span (AnandTech's 2018 enterprise SSD roundup, "4kB Random
// Read QD1 QoS": every flash SSD's 99.99th percentile within 2.5 times
// its mean).
func TestQD1ReadTail(t *testing.T) {
	drv, err := catalog.LookupDrive("wd-red-sn700-500g")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := drv.SSD.ScaleTo(8 << 30)
	if err != nil {
		t.Fatal(err)
	}
	d, err := ssd.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	const span = 1 << 30
	at, err := ssd.NewLoad(ssd.Stimulus{Op: models.Write, BlockSize: 1 << 20, QueueDepth: 1, Span: span}).Run(d, 0, span>>20)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 3))
	lat := make([]time.Duration, 200000)
	for i := range lat {
		done, err := d.Submit(at, models.Request{Op: models.Read, Offset: rng.Int64N(span/4096) * 4096, Length: 4096})
		if err != nil {
			t.Fatal(err)
		}
		lat[i], at = done-at, done
	}
	slices.Sort(lat)
	p50, p999 := lat[len(lat)/2], lat[len(lat)*999/1000]
	r := float64(p999) / float64(p50)
	t.Logf("QD1 4K random read: p50 %v, p99 %v, p99.9 %v, max %v: p99.9/p50 %.2f; %g retry steps",
		p50, lat[len(lat)*99/100], p999, lat[len(lat)-1], r, counterOf(d, "read_retries"))
	if r < 1.5 || r > 2.5 {
		t.Errorf("p99.9/p50 = %.2f, want 1.5..2.5", r)
	}
}
