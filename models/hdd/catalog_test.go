package hdd_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/catalog"
)

// datasheet holds the figures each catalog HDD's vendor publishes, typed
// in again from the datasheets so that a slip in the catalog shows.
var datasheet = map[string]struct {
	capacityTB float64
	rpm        float64
	outerMBps  float64
	cacheMiB   int64
	// qd16IOPS is a published random 4K read rate at QD16 (0 if none).
	qd16IOPS float64
}{
	"wd-red-1tb":            {1, 5400, 150, 64, 0},
	"wd-red-4tb":            {4, 5400, 150, 64, 0},
	"wd-se-4tb":             {4, 7200, 171, 64, 0},
	"seagate-ironwolf-8tb":  {8, 7200, 210, 256, 0},
	"seagate-exos-x18-18tb": {18, 7200, 270, 256, 170},

	"seagate-ironwolf-pro-12tb": {12, 7200, 250, 256, 0},
	"seagate-ironwolf-pro-16tb": {16, 7200, 255, 256, 0},
	"seagate-ironwolf-pro-20tb": {20, 7200, 285, 256, 0},
	"seagate-ironwolf-pro-24tb": {24, 7200, 285, 512, 0},
	"seagate-exos-x20-20tb":     {20, 7200, 272, 256, 168},
	"seagate-exos-x24-24tb":     {24, 7200, 285, 512, 168},
	"wd-red-plus-4tb":           {4, 5400, 175, 128, 0},
	"wd-red-plus-8tb":           {8, 5640, 185, 128, 0},
	"wd-red-plus-12tb":          {12, 7200, 196, 256, 0},
	"wd-red-pro-16tb":           {16, 7200, 259, 512, 0},
	"wd-red-pro-20tb":           {20, 7200, 268, 512, 0},
	"wd-ultrastar-hc550-16tb":   {16, 7200, 262, 512, 0},
	"wd-ultrastar-hc550-18tb":   {18, 7200, 269, 512, 0},
	"toshiba-n300-8tb":          {8, 7200, 252, 256, 0},
	"toshiba-mg09-18tb":         {18, 7200, 281, 512, 0},
}

// Every catalog HDD builds, matches its datasheet, and its model streams
// at the datasheet's sustained rate at the outer zone and gives the
// classic random access rate at QD1.
func TestCatalogDatasheets(t *testing.T) {
	seen := 0
	for _, d := range catalog.Drives() {
		if d.HDD == nil {
			continue
		}
		seen++
		t.Run(d.Name, func(t *testing.T) {
			ds, ok := datasheet[d.Name]
			if !ok {
				t.Fatalf("no datasheet figures for %s in this test", d.Name)
			}
			c := *d.HDD
			if !within(float64(c.Capacity)/1e12, ds.capacityTB, 0.01) || c.RPM != ds.rpm ||
				c.OuterMBps != ds.outerMBps || int64(c.CacheSize) != ds.cacheMiB<<20 {
				t.Errorf("config %+v does not match the datasheet %+v", c, ds)
			}
			if c.Summary() == "" {
				t.Error("empty summary")
			}
			dev, err := d.New(0, 1)
			if err != nil {
				t.Fatal(err)
			}
			const bs = 1 << 20
			var at time.Duration
			for i := range 128 {
				if at, err = dev.Submit(at, models.Request{Op: models.Read, Offset: int64(i) * bs, Length: bs}); err != nil {
					t.Fatal(err)
				}
			}
			mbps := 128 * bs / at.Seconds() / 1e6
			if !within(mbps, ds.outerMBps, 0.10) {
				t.Errorf("outer zone %.1f MB/s, datasheet %g", mbps, ds.outerMBps)
			}
			qd1 := randomIOPS(t, dev, 1, 3000)
			per := c.AvgSeek.Seconds() + 30/ds.rpm + 200e-6
			t.Logf("outer %.1f MB/s; random 4K QD1 %.1f IOPS (analytic %.1f)", mbps, qd1, 1/per)
			if !within(qd1, 1/per, 0.10) {
				t.Errorf("random 4K QD1 %.1f IOPS, want %.1f", qd1, 1/per)
			}
			if ds.qd16IOPS != 0 {
				dev, _ := d.New(0, 1)
				qd16 := randomIOPS(t, dev, 16, 8000)
				t.Logf("random 4K QD16 %.1f IOPS, datasheet %g", qd16, ds.qd16IOPS)
				if !within(qd16, ds.qd16IOPS, 0.15) {
					t.Errorf("random 4K QD16 %.1f IOPS, datasheet %g", qd16, ds.qd16IOPS)
				}
			}
		})
	}
	if seen < len(datasheet) {
		t.Errorf("%d catalog HDDs, want the %d of this test", seen, len(datasheet))
	}
}

// randomIOPS runs 4 KiB random reads over the whole drive in a closed loop.
func randomIOPS(t *testing.T, dev models.Device, qd, n int) float64 {
	rng := rand.New(rand.NewPCG(3, 4))
	start := time.Hour // after anything earlier in the test
	slots := make([]time.Duration, qd)
	for i := range slots {
		slots[i] = start
	}
	var last time.Duration
	for range n {
		j := 0
		for k := range slots {
			if slots[k] < slots[j] {
				j = k
			}
		}
		done, err := dev.Submit(slots[j], models.Request{Op: models.Read, Offset: rng.Int64N(dev.Capacity()>>12) << 12, Length: 4096})
		if err != nil {
			t.Fatal(err)
		}
		slots[j] = done
		last = max(last, done)
	}
	return float64(n) / (last - start).Seconds()
}

func within(got, want, tol float64) bool { return got >= want*(1-tol) && got <= want*(1+tol) }

// The idle period before a burst of writes is not spent on them: on every
// catalog HDD, sequential 1 MiB writes issued after 5 s of idling, counted
// to the completion of a final Flush, are no faster than the outer zone
// takes them (the burst starts at LBA 0), and no faster than without the
// idle period.
func TestCatalogWritesAfterIdle(t *testing.T) {
	for _, d := range catalog.Drives() {
		if d.HDD == nil {
			continue
		}
		t.Run(d.Name, func(t *testing.T) {
			for _, qd := range []int{1, 8} {
				var rate [2]float64
				for k, idle := range []time.Duration{0, 5 * time.Second} {
					dev, err := d.New(0, 1)
					if err != nil {
						t.Fatal(err)
					}
					dev.Submit(0, models.Request{Op: models.Read, Offset: 1 << 30, Length: 4096})
					slots := make([]time.Duration, qd)
					for j := range slots {
						slots[j] = idle
					}
					const n, bs = 3000, 1 << 20
					var last time.Duration
					for i := range n {
						j := i % qd
						if slots[j], err = dev.Submit(slots[j], models.Request{Op: models.Write, Offset: int64(i) * bs, Length: bs}); err != nil {
							t.Fatal(err)
						}
						last = max(last, slots[j])
					}
					fl, _ := dev.Submit(last, models.Request{Op: models.Flush})
					rate[k] = n * bs / (fl - idle).Seconds() / 1e6
				}
				t.Logf("qd %d: %.1f MB/s to the Flush from a busy start, %.1f after idling (outer zone %g)", qd, rate[0], rate[1], d.HDD.OuterMBps)
				if rate[1] > d.HDD.OuterMBps*1.001 || rate[1] > rate[0]*1.02 {
					t.Errorf("qd %d: %.1f MB/s after idling: faster than the media (%g MB/s) or than without idling (%.1f MB/s)",
						qd, rate[1], d.HDD.OuterMBps, rate[0])
				}
			}
		})
	}
}
