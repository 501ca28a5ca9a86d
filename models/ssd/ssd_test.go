package ssd

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
)

func newTest(t testing.TB, cfg Config) *Drive {
	t.Helper()
	d, err := New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func submit(t testing.TB, d *Drive, at time.Duration, op models.Op, off, n int64) time.Duration {
	t.Helper()
	done, err := d.Submit(at, models.Request{Op: op, Offset: off, Length: n})
	if err != nil {
		t.Fatalf("%v [%d,+%d): %v", op, off, n, err)
	}
	if done < at {
		t.Fatalf("%v completes at %v, before it was issued at %v", op, done, at)
	}
	return done
}

func TestValidate(t *testing.T) {
	good := testConfig(64<<20, 1.2)
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for name, mutate := range map[string]func(*Config){
		"capacity":      func(c *Config) { c.Capacity = 0 },
		"overprovision": func(c *Config) { c.Overprovision = 0.7 },
		"interface":     func(c *Config) { c.Interface = "scsi" },
		"page_size":     func(c *Config) { c.PageSize = 3000 },
		"pages_per_block": func(c *Config) {
			c.PagesPerBlock = 2
		},
		"blocks_per_die": func(c *Config) { c.BlocksPerDie = 10 }, // raw < user
		"erase":          func(c *Config) { c.Erase = 0 },
		"slc_cache_min":  func(c *Config) { c.SLCCacheMin = 1 << 20 },
	} {
		c := good
		mutate(&c)
		err := c.Validate()
		if !errors.Is(err, models.ErrConfig) {
			t.Errorf("%s: got %v, want ErrConfig", name, err)
		} else if !contains(err.Error(), name) {
			t.Errorf("%s: error %q does not name the field", name, err)
		}
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

func TestScaleTo(t *testing.T) {
	c := testConfig(8<<30, 1.1)
	c.SLCCacheMax, c.SLCCacheMin = 800<<20, 200<<20
	s, err := c.ScaleTo(1 << 30)
	if err != nil {
		t.Fatal(err)
	}
	if s.Channels != c.Channels || s.DiesPerChannel != c.DiesPerChannel || s.Planes != c.Planes || s.PageSize != c.PageSize {
		t.Error("scaling changed the per-die geometry")
	}
	if s.SLCCacheMax != 100<<20 || s.SLCCacheMin != 25<<20 {
		t.Errorf("SLC cache scaled to %d/%d, want 100MiB/25MiB", s.SLCCacheMax, s.SLCCacheMin)
	}
	ga, gb := newGeometry(c), newGeometry(s)
	ra, rb := float64(ga.totalSlots)/float64(ga.userSlots), float64(gb.totalSlots)/float64(gb.userSlots)
	if rb < ra*0.995 || rb > ra*1.01 {
		t.Errorf("raw/user %.4f after scaling, %.4f before", rb, ra)
	}
	if _, err := c.ScaleTo(0); err == nil {
		t.Error("ScaleTo(0) succeeded")
	}
}

func TestRequests(t *testing.T) {
	cfg := testConfig(64<<20, 1.2)
	d := newTest(t, cfg)
	capacity := d.Capacity()
	for _, r := range []models.Request{
		{Op: models.Read, Offset: capacity - 4096, Length: 8192},
		{Op: models.Write, Offset: -1, Length: 4096},
		{Op: models.Trim, Offset: capacity, Length: 1},
	} {
		if _, err := d.Submit(0, r); !errors.Is(err, models.ErrOutOfRange) && !errors.Is(err, models.ErrInvalid) {
			t.Errorf("%v: got %v, want a range error", r, err)
		}
	}
	if done := submit(t, d, time.Second, models.Stat, 0, 0); done != time.Second {
		t.Errorf("file op completes at %v, want at once", done)
	}

	// A never-written page reads without touching NAND.
	at := time.Second
	fresh := submit(t, d, at, models.Read, 0, 4096) - at
	if fresh >= cfg.ReadSLC {
		t.Errorf("read of unwritten data took %v, no NAND read expected", fresh)
	}
	// Written and flushed, it costs a TLC read of a lower page (the
	// block's first word line).
	at = submit(t, d, at, models.Write, 0, 64<<10)
	at = submit(t, d, at, models.Flush, 0, 0)
	lat := submit(t, d, at, models.Read, 0, 4096) - at
	lower := d.tR[0]
	if lat < lower || lat > lower+cfg.CommandOverhead+50*time.Microsecond {
		t.Errorf("read of written data took %v, want tR %v + overheads", lat, lower)
	}
	// A partial write of a unit on NAND reads it first (read-modify-write).
	at += time.Second
	aligned := submit(t, d, at, models.Write, 1<<20, 4096) - at
	at += time.Second
	partial := submit(t, d, at, models.Write, 512, 512) - at
	if partial < aligned+lower {
		t.Errorf("partial write took %v, aligned %v: no read-modify-write", partial, aligned)
	}
	// Flush waits for buffered data to be programmed.
	at += time.Second
	at = submit(t, d, at, models.Write, 2<<20, 8192)
	if f := submit(t, d, at, models.Flush, 0, 0) - at; f < cfg.ProgramTLC {
		t.Errorf("flush took %v, less than a program %v", f, cfg.ProgramTLC)
	}
	// Trimmed data reads fast again; partial units are not trimmed.
	at += time.Second
	submit(t, d, at, models.Trim, 0, 64<<10+100)
	if l := submit(t, d, at+time.Second, models.Read, 0, 4096) - at - time.Second; l >= cfg.ReadSLC {
		t.Errorf("read after trim took %v", l)
	}
	if got := counter(t, d, "trims"); got != 1 {
		t.Errorf("trims = %g", got)
	}
	// Out-of-order submission times are accepted, and work booked for the
	// future (a RAID write phase) does not hold up earlier requests, on
	// NVMe or on SATA's shared link.
	for _, iface := range []string{NVMe, SATA} {
		c := cfg
		c.Interface = iface
		d := newTest(t, c)
		at := submit(t, d, 0, models.Write, 0, 1<<20)
		at = submit(t, d, at, models.Flush, 0, 0)
		early := submit(t, d, at+time.Millisecond, models.Read, 0, 64<<10) - at - time.Millisecond
		d = newTest(t, c)
		at = submit(t, d, 0, models.Write, 0, 1<<20)
		at = submit(t, d, at, models.Flush, 0, 0)
		submit(t, d, at+10*time.Millisecond, models.Write, 2<<20, 256<<10) // booked ahead
		late := submit(t, d, at+time.Millisecond, models.Read, 0, 64<<10) - at - time.Millisecond
		if late != early {
			t.Errorf("%s: read takes %v after a future-dated write was booked, %v without", iface, late, early)
		}
	}
}

// Extra over-provisioning shrinks the user capacity and lowers steady-state
// write amplification.
func TestOverprovision(t *testing.T) {
	base := testConfig(256<<20, 1.07)
	op := base
	op.Overprovision = 0.2
	var was [2]float64
	for i, c := range []Config{base, op} {
		d := newTest(t, c)
		if i == 1 && d.Capacity() > int64(float64(c.Capacity)*0.8) {
			t.Errorf("capacity %d with 20%% over-provisioning", d.Capacity())
		}
		at, _ := NewLoad(Stimulus{Op: models.Write, BlockSize: 128 << 10, QueueDepth: 32}).Run(d, 0, d.Capacity()/(128<<10))
		rnd := NewLoad(Stimulus{Op: models.Write, BlockSize: 4096, Random: true, QueueDepth: 32, Seed: 9})
		at, _ = rnd.Run(d, at, 3*d.Capacity()/4096)
		h, n := counter(t, d, "host_bytes_written"), counter(t, d, "nand_bytes_written")
		rnd.Run(d, at, d.Capacity()/4096)
		was[i] = (counter(t, d, "nand_bytes_written") - n) / (counter(t, d, "host_bytes_written") - h)
	}
	// alpha 1.07 -> 1.07/0.8 = 1.34.
	if want := AnalyticWA(1.07 / 0.8); was[1] > 1.05*want || was[1] >= was[0]/2 {
		t.Errorf("WA %.2f without, %.2f with 20%% over-provisioning (analytic %.2f)", was[0], was[1], want)
	}
}

// Same parameters and seed: identical completion times and counters.
func TestDeterministic(t *testing.T) {
	run := func() ([]time.Duration, []models.Counter) {
		c := testConfig(128<<20, 1.1)
		c.SLCCacheMax, c.SLCCacheMin = 16<<20, 4<<20
		d := newTest(t, c)
		rng := rand.New(rand.NewPCG(42, 1))
		var out []time.Duration
		at := time.Duration(0)
		for i := 0; i < 200000; i++ {
			op := []models.Op{models.Write, models.Write, models.Read, models.Trim, models.Flush}[rng.IntN(5)]
			off := rng.Int64N(d.Capacity()/512-16) * 512
			n := int64(1+rng.IntN(16)) * 512
			at += time.Duration(rng.IntN(20000)) - 5000 // sometimes earlier than before
			at = max(at, 0)
			if rng.IntN(1000) == 0 {
				at += 50 * time.Millisecond // idle: folding
			}
			done, err := d.Submit(at, models.Request{Op: op, Offset: off, Length: n})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, done)
		}
		return out, d.Counters()
	}
	a, ca := run()
	b, cb := run()
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("request %d completes at %v, then at %v", i, a[i], b[i])
		}
	}
	for i := range ca {
		if ca[i] != cb[i] {
			t.Fatalf("counter %v, then %v", ca[i], cb[i])
		}
	}
	if ca[3].Name != "write_amplification" || ca[3].Value <= 1 {
		t.Errorf("mixed workload did no GC: %v", ca[3])
	}
}

// The mapping state of a full drive costs at most 8 bytes per 4 KiB user
// page; allocation follows the entries written: every user page is
// mapped, so the forward map is whole, and the reverse map holds the
// physical pages written (not all of them: some are never programmed).
func TestMappingMemory(t *testing.T) {
	c := testConfig(256<<20, 1.1)
	d := newTest(t, c)
	NewLoad(Stimulus{Op: models.Write, BlockSize: 128 << 10, QueueDepth: 32}).Run(d, 0, d.Capacity()/(128<<10))
	alloc := int64(0)
	for _, a := range []*packedArray{&d.fwd, &d.rev} {
		for _, ch := range a.chunks {
			alloc += int64(len(ch)) * 8
		}
	}
	want := c.MappingBytes()
	fwd := c.UserPages() * int64(d.fwd.width) / 8
	if alloc < fwd+fwd/2 || float64(alloc) > float64(want)*1.1+2*8<<10*8 {
		t.Errorf("allocated %d bytes of mapping for a full drive, computed %d", alloc, want)
	}
}

func TestPackedArray(t *testing.T) {
	for _, w := range []uint{1, 7, 29, 31, 33} {
		a := newPackedArray(1<<17+5, w)
		rng := rand.New(rand.NewPCG(uint64(w), 2))
		ref := map[int64]uint64{}
		for range 20000 {
			i := rng.Int64N(1<<17 + 5)
			v := rng.Uint64() & (1<<w - 1)
			a.set(i, v)
			ref[i] = v
		}
		for i, v := range ref {
			if got := a.get(i); got != v {
				t.Fatalf("width %d: a[%d] = %d, want %d", w, i, got, v)
			}
		}
	}
}

func TestSteadyState(t *testing.T) {
	for _, c := range []struct {
		y    []float64
		want bool
	}{
		{[]float64{100, 101, 99, 100}, false},          // too few rounds
		{[]float64{500, 100, 101, 99, 100, 100}, true}, // flat window
		{[]float64{100, 104, 108, 112, 116}, false},    // slope excursion 16 %
		{[]float64{100, 80, 115, 90, 110}, false},      // range 35 % of mean
		{[]float64{100, 102, 104, 106, 108}, true},     // excursion 8 %
		{[]float64{30000, 40000, 41000, 40500, 40800, 40600}, true},
	} {
		if got := SteadyState(c.y); got != c.want {
			t.Errorf("SteadyState(%v) = %v, want %v", c.y, got, c.want)
		}
	}
}

// BenchmarkRandomWrite measures simulated 4 KiB random writes per wall
// second on a steady-state drive (garbage collection running).
func BenchmarkRandomWrite(b *testing.B) {
	for _, alpha := range []float64{1.1, 1.145, 1.28} {
		b.Run(fmt.Sprintf("alpha=%g", alpha), func(b *testing.B) {
			d := newTest(b, testConfig(1<<30, alpha))
			at, _ := NewLoad(Stimulus{Op: models.Write, BlockSize: 128 << 10, QueueDepth: 32}).Run(d, 0, d.Capacity()/(128<<10))
			load := NewLoad(Stimulus{Op: models.Write, BlockSize: 4096, Random: true, QueueDepth: 32, Seed: 1})
			at, _ = load.Run(d, at, d.Capacity()/4096)
			rng := rand.New(rand.NewPCG(3, 4))
			units := d.Capacity() / 4096
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				done, err := d.Submit(at, models.Request{Op: models.Write, Offset: rng.Int64N(units) * 4096, Length: 4096})
				if err != nil {
					b.Fatal(err)
				}
				at = done
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ios/s")
			if wa := counter(b, d, "write_amplification"); wa < 1.5 {
				b.Fatalf("not in steady state: WA %.2f", wa)
			}
		})
	}
}

// Precondition reaches the SNIA steady state, at the IOPS the die time per
// write predicts: each host write costs WA/groupSlots page-group programs,
// (WA-1) relocated units' share of reads, and WA/slotsPerBlock erases.
func TestPrecondition(t *testing.T) {
	c := testConfig(256<<20, 1.28)
	d := newTest(t, c)
	res, err := Precondition(d, 0, Stimulus{Op: models.Write, BlockSize: 4096, Random: true, QueueDepth: 64, Seed: 2}, d.Capacity()/4096/4, 40)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Steady || len(res.Rounds) < 5 {
		t.Fatalf("no steady state: %v", res.Rounds)
	}
	if got := counter(t, d, "host_bytes_written"); got < float64(2*d.Capacity()) {
		t.Errorf("only %g bytes written: no 2x sequential fill", got)
	}
	wa := AnalyticWA(1.28)
	g := newGeometry(d.cfg)
	x := transfer(g.groupBytes(), c.ChannelMBps)
	perWrite := wa/float64(g.groupSlots)*float64(x+c.ProgramTLC) +
		(wa-1)*(float64(c.ReadTLC)/float64(g.groupSlots)/(1-1/wa)+float64(transfer(slotSize, c.ChannelMBps))) +
		wa/float64(g.slotsPerBlock)*float64(c.Erase)
	want := float64(g.dies) / (perWrite / 1e9)
	got := res.Rounds[len(res.Rounds)-1]
	t.Logf("rounds %.0f; predicted %.0f IOPS", res.Rounds, want)
	if got < 0.9*want || got > 1.1*want {
		t.Errorf("steady state %.0f IOPS, die-time estimate %.0f", got, want)
	}
}

// BenchmarkRandomRead measures simulated 4 KiB random reads per wall
// second at QD32 on a written drive whose dies retry reads (the page-type
// read times and retry draws of readtime.go on every NAND read).
func BenchmarkRandomRead(b *testing.B) {
	c := testConfig(1<<30, 1.2)
	c.ReadRetry = 0.002
	d := newTest(b, c)
	at, _ := NewLoad(Stimulus{Op: models.Write, BlockSize: 128 << 10, QueueDepth: 32}).Run(d, 0, d.Capacity()/(128<<10))
	rng := rand.New(rand.NewPCG(3, 4))
	units := d.Capacity() / 4096
	q := make([]time.Duration, 32)
	for i := range q {
		q[i] = at
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		j := i % len(q)
		done, err := d.Submit(q[j], models.Request{Op: models.Read, Offset: rng.Int64N(units) * 4096, Length: 4096})
		if err != nil {
			b.Fatal(err)
		}
		q[j] = done
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ios/s")
}
