package hdd

import (
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
)

// The fitted seek curve passes through the datasheet's track-to-track and
// full-stroke times, and its mean over pairs of uniformly random LBAs (by
// Monte Carlo, independent of the quadrature used to fit it) is the
// datasheet's average seek.
func TestSeekCurve(t *testing.T) {
	for name, c := range map[string]Config{"wd-red-1tb": wdRed1TB(), "exos-x18": exosX18()} {
		d := newDrive(t, c)
		s := d.seek
		if got := s.time(1); !within(got, float64(c.FullStroke), 1e-9) {
			t.Errorf("%s: full stroke %.3f ms, want %v", name, got/1e6, c.FullStroke)
		}
		oneCyl := 1 / d.g.cylinders
		if got := s.time(oneCyl); !within(got, float64(c.TrackToTrack), 0.05) {
			t.Errorf("%s: one-cylinder seek %.3f ms, want %v", name, got/1e6, c.TrackToTrack)
		}
		if got := s.time(oneCyl / 2); got != 0 {
			t.Errorf("%s: seek within a cylinder %.3f ms, want 0", name, got/1e6)
		}
		// Monotone and continuous.
		prev := 0.0
		for i := 1; i <= 10000; i++ {
			x := float64(i) / 10000
			v := s.time(x)
			if v < prev || (i > 1 && v-prev > 0.01*float64(c.FullStroke)) {
				t.Fatalf("%s: seek curve not smooth and increasing at %g: %v after %v", name, x, v, prev)
			}
			prev = v
		}
		rng := rand.New(rand.NewPCG(1, 2))
		const n = 1_000_000
		var sum float64
		for range n {
			_, x1 := d.g.locate(rng.Int64N(d.g.capacity))
			_, x2 := d.g.locate(rng.Int64N(d.g.capacity))
			sum += s.time(abs(x1 - x2))
		}
		mean := sum / n / 1e6
		t.Logf("%s: mean seek over random LBA pairs %.3f ms (datasheet %v); split at %.3f of the stroke", name, mean, c.AvgSeek, s.d0)
		if !within(mean, c.AvgSeek.Seconds()*1e3, 0.01) {
			t.Errorf("%s: mean seek %.3f ms, want %v ±1%%", name, mean, c.AvgSeek)
		}
	}
}

// Zones: the rate falls linearly from outer to inner, outer zones hold more
// bytes, LBA 0 is at the outer edge and the last byte at the inner edge.
func TestGeometry(t *testing.T) {
	c := wdRed1TB()
	d := newDrive(t, c)
	g := d.g
	if len(g.zones) != 16 || g.zones[0].start != 0 || g.zones[15].end != g.capacity {
		t.Fatalf("zones %+v", g.zones)
	}
	rate := func(z zone) float64 { return 1e3 / z.nsPerByte }
	if !within(rate(g.zones[0]), 150, 1e-9) || !within(rate(g.zones[15]), 75, 1e-9) {
		t.Errorf("zone rates %.2f … %.2f MB/s, want 150 … 75", rate(g.zones[0]), rate(g.zones[15]))
	}
	for i := 1; i < len(g.zones); i++ {
		if g.zones[i].start != g.zones[i-1].end || rate(g.zones[i]) >= rate(g.zones[i-1]) ||
			g.zones[i].end-g.zones[i].start >= g.zones[i-1].end-g.zones[i-1].start {
			t.Errorf("zone %d does not follow zone %d", i, i-1)
		}
	}
	if _, x := g.locate(0); x != 0 {
		t.Errorf("x(0) = %g", x)
	}
	if _, x := g.locate(g.capacity); !within(x, 1, 1e-12) {
		t.Errorf("x(capacity) = %g", x)
	}
	// T and x agree with xAtTime.
	for _, b := range []int64{0, 12345, g.capacity / 3, g.capacity - 1} {
		tb, xb := g.locate(b)
		if got := g.xAtTime(tb, 0); !within(got+1e-9, xb+1e-9, 1e-9) {
			t.Errorf("xAtTime(T(%d)) = %g, want %g", b, got, xb)
		}
	}
}

// Validate names the field that is wrong; defaults fill the zero values.
func TestValidate(t *testing.T) {
	if err := wdRed1TB().Validate(); err != nil {
		t.Fatal(err)
	}
	for field, mod := range map[string]func(*Config){
		"capacity":            func(c *Config) { c.Capacity = 0 },
		"rpm":                 func(c *Config) { c.RPM = 0 },
		"outer_mbps":          func(c *Config) { c.OuterMBps = -1 },
		"inner_mbps":          func(c *Config) { c.InnerMBps = 200 },
		"zones":               func(c *Config) { c.Zones = -1 },
		"heads":               func(c *Config) { c.Heads = 100 },
		"avg_seek":            func(c *Config) { c.AvgSeek = 0 },
		"track_to_track":      func(c *Config) { c.TrackToTrack = 20 * time.Millisecond },
		"full_stroke":         func(c *Config) { c.FullStroke = 5 * time.Millisecond },
		"overhead":            func(c *Config) { c.Overhead = -1 },
		"cache_size":          func(c *Config) { c.CacheSize = -1 },
		"cache_segments":      func(c *Config) { c.CacheSegments = 1000 },
		"read_ahead":          func(c *Config) { c.ReadAhead = -1 },
		"write_cache_entries": func(c *Config) { c.WriteCacheEntries = -3 },
		"queue_depth":         func(c *Config) { c.QueueDepth = 33 },
		"interface":           func(c *Config) { c.Interface = "usb" },
	} {
		c := wdRed1TB()
		mod(&c)
		err := c.Validate()
		if !errors.Is(err, models.ErrConfig) || !contains(err.Error(), field) {
			t.Errorf("%s: error %v", field, err)
		}
		if _, err := New(c, 1); err == nil {
			t.Errorf("%s: New accepted it", field)
		}
	}
	// An average seek no curve of the family reaches.
	for _, avg := range []time.Duration{7 * time.Millisecond, 15 * time.Millisecond} {
		c := wdRed1TB()
		c.AvgSeek = avg
		if err := c.Validate(); err == nil || !contains(err.Error(), "avg_seek") {
			t.Errorf("avg_seek %v with full stroke %v: error %v", avg, c.FullStroke, err)
		}
	}
	// Defaults.
	c := Config{Capacity: 1 << 30, RPM: 7200, OuterMBps: 200, AvgSeek: 8 * time.Millisecond}.withDefaults()
	want := Config{Capacity: 1 << 30, RPM: 7200, OuterMBps: 200, InnerMBps: 100, Zones: 16, Heads: 2,
		TrackToTrack: time.Millisecond, AvgSeek: 8 * time.Millisecond, FullStroke: 17600 * time.Microsecond,
		Overhead: 200 * time.Microsecond, CacheSize: 64 << 20, CacheSegments: 16, ReadAhead: 4 << 20,
		WriteCacheEntries: 64, QueueDepth: 32, Interface: "sata-6g"}
	if c != want {
		t.Errorf("defaults\n got %+v\nwant %+v", c, want)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
}

// A scaled-down drive keeps the rates, the seek curve over the whole stroke
// and the random access time.
func TestScaleTo(t *testing.T) {
	c := wdRed1TB()
	sc, err := c.ScaleTo(8 << 30)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Capacity != 8<<30 || sc.RPM != c.RPM || sc.OuterMBps != c.OuterMBps || sc.AvgSeek != c.AvgSeek {
		t.Errorf("scaled %+v", sc)
	}
	d := newDrive(t, sc)
	full := newDrive(t, c)
	if !within(d.seek.d0, full.seek.d0, 1e-6) || !within(d.seek.b, full.seek.b, 1e-6) {
		t.Errorf("seek curve changed: %+v vs %+v", d.seek, full.seek)
	}
	if _, x := d.g.locate(d.g.capacity); !within(x, 1, 1e-12) {
		t.Errorf("scaled drive's last byte at x = %g, want the inner edge", x)
	}
	if !within(d.g.cylinders, full.g.cylinders, 1e-6) {
		t.Errorf("scaled drive has %g cylinders, the full one %g", d.g.cylinders, full.g.cylinders)
	}
	// Even a tiny drive keeps the whole stroke and the seek distances.
	tiny, err := c.ScaleTo(64 << 20)
	if err != nil {
		t.Fatal(err)
	}
	td := newDrive(t, tiny)
	if res := closedLoop(t, td, 1, 3000, 0, randomReads(4, 4*kib, td.Capacity())); !within(res.iops(), qd1Expect(c), 0.10) {
		t.Errorf("64 MiB drive: QD1 %.1f IOPS, want %.1f", res.iops(), qd1Expect(c))
	}
	res := closedLoop(t, d, 1, 5000, 0, randomReads(2, 4*kib, d.Capacity()))
	if !within(res.iops(), qd1Expect(c), 0.10) {
		t.Errorf("scaled drive: QD1 %.1f IOPS, want %.1f", res.iops(), qd1Expect(c))
	}
	seq := closedLoop(t, newDrive(t, sc), 1, 64, 0, sequential(models.Read, 0, mib))
	if !within(seq.mbps(), 150, 0.10) {
		t.Errorf("scaled drive: sequential %.1f MB/s", seq.mbps())
	}
	for _, n := range []int64{0, -1, int64(c.Capacity) + 1} {
		if _, err := c.ScaleTo(n); !errors.Is(err, models.ErrConfig) {
			t.Errorf("ScaleTo(%d): %v", n, err)
		}
	}
}

func TestSummary(t *testing.T) {
	got := wdRed1TB().Summary()
	want := "1TB HDD, 5400 rpm, 150→75 MB/s, seek 11.0 ms, SATA 6Gb/s, 64MiB cache, write cache on, NCQ 32"
	if got != want {
		t.Errorf("Summary\n got %q\nwant %q", got, want)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
