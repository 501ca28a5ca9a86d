package bench

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/catalog"
	"github.com/nasemu/nasemu/models/fixed"
	"github.com/nasemu/nasemu/models/ssd"
)

// sn700Variant resolves the catalog's 500 GB SN700, scaled to capacity,
// with the variant's OP, as the program's resolver does for sim:DRIVE;
// without slc its dynamic SLC cache is switched off.
func sn700Variant(t testing.TB, capacity int64, slc bool) (VariantResolver, ssd.Config) {
	d, err := catalog.LookupDrive("wd-red-sn700-500g")
	if err != nil {
		t.Fatal(err)
	}
	scaled, err := d.SSD.ScaleTo(capacity)
	if err != nil {
		t.Fatal(err)
	}
	if !slc {
		scaled.SLCCacheMax, scaled.SLCCacheMin = 0, 0
	}
	return func(setup string, seed uint64, v SSDVariant) (SimSetup, error) {
		if v.Capacity != capacity {
			return SimSetup{}, fmt.Errorf("capacity %d, want the scaled %d", v.Capacity, capacity)
		}
		c := scaled
		c.Overprovision = v.Overprovision
		dev, err := ssd.New(c, seed)
		return SimSetup{Device: dev, Description: d.Product}, err
	}, scaled
}

// rawBytes is the NAND of a drive configuration.
func rawBytes(c ssd.Config) float64 {
	return float64(c.Channels*c.DiesPerChannel*c.Planes*c.PagesPerBlock*c.BlocksPerDie) * float64(c.PageSize)
}

// profileSN700 sweeps a 1 GiB SN700 (at 256 MiB the scaled drive keeps
// under a hundred blocks per die and the blocks each die holds back for
// garbage collection eat a noticeable part of its spare area) and checks
// what holds with or without an SLC cache: IOPS rise and WA falls with
// OP. It returns each level's WA over the analytic WA at alpha = raw NAND
// over the user capacity left at that level.
func profileSN700(t *testing.T, slc bool) []float64 {
	const capacity = 1 << 30
	resolve, cfg := sn700Variant(t, capacity, slc)
	start := time.Now()
	p, err := RunSSDProfile("sim:wd-red-sn700-500g", "wd-red-sn700-500g", resolve, ProfileOptions{Capacity: capacity, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("sweep took %v", time.Since(start).Round(time.Millisecond))
	if len(p.Levels) != len(DefaultOPLevels) {
		t.Fatalf("%d levels, want %d", len(p.Levels), len(DefaultOPLevels))
	}
	var ratios []float64
	for i, lv := range p.Levels {
		alpha := rawBytes(cfg) / (float64(cfg.Capacity) * (1 - lv.Overprovision))
		want := ssd.AnalyticWA(alpha)
		ratios = append(ratios, lv.WA/want)
		t.Logf("OP %2.0f%%: user %4d MiB, %2d rounds, steady %v, IOPS %7.0f, WA %.3f, analytic %.3f (alpha %.3f), ratio %.3f",
			lv.Overprovision*100, lv.UserBytes>>20, len(lv.Rounds), lv.Steady, lv.SteadyIOPS, lv.WA, want, alpha, lv.WA/want)
		if !lv.Steady {
			t.Errorf("OP %.0f%%: no steady state in %d rounds", lv.Overprovision*100, len(lv.Rounds))
		}
		if want := int64(float64(capacity) * (1 - lv.Overprovision)); lv.UserBytes > want || lv.UserBytes < want-(1<<20) {
			t.Errorf("OP %.0f%%: user capacity %d, want %d", lv.Overprovision*100, lv.UserBytes, want)
		}
		if i > 0 {
			prev := p.Levels[i-1]
			if lv.SteadyIOPS <= prev.SteadyIOPS {
				t.Errorf("OP %.0f%%: IOPS %.0f not above %.0f at OP %.0f%%", lv.Overprovision*100, lv.SteadyIOPS, prev.SteadyIOPS, prev.Overprovision*100)
			}
			if lv.WA >= prev.WA {
				t.Errorf("OP %.0f%%: WA %.3f not below %.3f", lv.Overprovision*100, lv.WA, prev.WA)
			}
		}
	}
	t.Logf("recommended OP %.0f%%", p.Recommended*100)
	if want := Knee(p.Levels); p.Recommended != want {
		t.Errorf("recommended %g, knee %g", p.Recommended, want)
	}
	return ratios
}

// Without an SLC cache the SN700's NAND is what the analytic cleaning
// model describes: steady-state WA is within 75–105 % of it at every OP
// level (greedy cleaning does a little better than the model's FIFO).
func TestSSDProfileSN700Analytic(t *testing.T) {
	for i, r := range profileSN700(t, false) {
		if r < 0.75 || r > 1.05 {
			t.Errorf("OP %.0f%%: WA is %.3f x analytic, want 0.75–1.05", DefaultOPLevels[i]*100, r)
		}
	}
}

// With its dynamic SLC cache, as catalogued, the SN700 writes more: under
// sustained random writes the cache keeps taking host data whenever garbage
// collection has freed SLC blocks, and collecting those blocks moves the
// still valid data to TLC, a second NAND write. WA is then above the
// analytic model's but never below 75 % of it.
func TestSSDProfileSN700SLC(t *testing.T) {
	for i, r := range profileSN700(t, true) {
		if r < 0.75 {
			t.Errorf("OP %.0f%%: WA is %.3f x analytic, want at least 0.75", DefaultOPLevels[i]*100, r)
		}
	}
}

func TestKnee(t *testing.T) {
	lv := func(iops ...float64) []ProfileLevel {
		var out []ProfileLevel
		for i, x := range iops {
			op := float64(i) / 10
			out = append(out, ProfileLevel{Overprovision: op, SteadyIOPS: x, UserBytes: int64(1000 * (1 - op))})
		}
		return out
	}
	for _, c := range []struct {
		iops []float64
		want float64
	}{
		// 0→10 % gives up 10 % of the capacity, 10→20 % 11.1 %, 20→30 % 12.5 %.
		{[]float64{100, 150, 200, 215, 230}, 0.2}, // 200 → 215 is +7.5 %
		{[]float64{100, 109}, 0},                  // the first step gains 9 %, gives up 10 %
		{[]float64{100, 120, 150}, 0.2},           // every step gains more: the last level
		{[]float64{100, 111, 123}, 0.1},           // 111 → 123 is +10.8 %, gives up 11.1 %
		{[]float64{100, 80, 200}, 0},              // the first local peak of IOPS × capacity
		{[]float64{100}, 0},
	} {
		if got := Knee(lv(c.iops...)); got != c.want {
			t.Errorf("Knee(%v) = %g, want %g", c.iops, got, c.want)
		}
	}
}

func TestSSDProfileErrors(t *testing.T) {
	resolve := func(string, uint64, SSDVariant) (SimSetup, error) {
		dev, err := fixed.New(fixed.Config{Capacity: 1 << 30, Write: time.Microsecond})
		return SimSetup{Device: dev}, err
	}
	for _, opt := range []ProfileOptions{
		{Levels: []float64{0.2, 0.1}},
		{Levels: []float64{0.7}},
		{MaxRounds: 3},
		{RoundShare: -1},
	} {
		if _, err := RunSSDProfile("sim:x", "x", resolve, opt); !errors.Is(err, ErrJob) {
			t.Errorf("%+v: err %v, want ErrJob", opt, err)
		}
	}
	noSSD := func(string, uint64, SSDVariant) (SimSetup, error) {
		return SimSetup{}, fmt.Errorf("%w: no SSD", models.ErrConfig)
	}
	if _, err := RunSSDProfile("sim:x", "x", noSSD, ProfileOptions{}); !errors.Is(err, ErrTarget) || !errors.Is(err, models.ErrConfig) {
		t.Errorf("setup without SSDs: err %v", err)
	}
}
