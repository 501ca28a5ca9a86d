package nas

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/devicetest"
	"github.com/nasemu/nasemu/models/fixed"
)

// hddArray is an HDD-like array: 4 spindles, 8 ms per random read, 4 ms per
// write, plus 150 MB/s of transfer; 498 random 4 KiB reads per second.
func hddArray(t testing.TB) *fixed.Device {
	d, err := fixed.New(fixed.Config{Capacity: 64 * models.GiB, Units: 4, Read: 8 * time.Millisecond, Write: 4 * time.Millisecond, BytesPerSecond: 150e6})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func get(c *Controller, name string) float64 {
	for _, k := range c.Counters() {
		if k.Name == name {
			return k.Value
		}
	}
	panic(name)
}

// closedLoop keeps qd requests outstanding and returns each completion,
// in issue order. The requests keep the thread next gives them: one
// client thread unless next says otherwise.
func closedLoop(t testing.TB, d models.Device, start time.Duration, qd, n int, next func(i int) models.Request) []time.Duration {
	t.Helper()
	return devicetest.Closed{Start: start, QD: qd, N: n, OwnThreads: true}.Run(t, d, next).Done
}

func last(d []time.Duration) time.Duration {
	m := d[0]
	for _, v := range d {
		m = max(m, v)
	}
	return m
}

// small is a NAS with 512 MiB of RAM, 128 MiB of it for the OS: a 384 MiB
// page cache.
func small() Config {
	return Config{RAM: models.Bytes(512 * models.MiB), OSReserved: models.Bytes(128 * models.MiB)}
}

// 4 KiB random reads over a file that fits in the page cache run at CPU
// speed once it is warm; over a file 4× the RAM they run at the array's.
func TestPageCacheRandomReads(t *testing.T) {
	c, err := New(small(), hddArray(t))
	if err != nil {
		t.Fatal(err)
	}
	const bs = 4 * models.KiB
	file := 256 * models.MiB
	// Warm-up: read the file once sequentially (read-ahead makes it quick).
	warm := closedLoop(t, c, 0, 1, int(file/models.MiB), func(i int) models.Request {
		return models.Request{Op: models.Read, Offset: int64(i) * models.MiB, Length: models.MiB}
	})
	start := last(warm)
	rng := rand.New(rand.NewPCG(1, 1))
	const n = 200000
	hits0 := get(c, "page_cache_hits")
	dones := closedLoop(t, c, start, 8, n, func(int) models.Request {
		return models.Request{Op: models.Read, Offset: rng.Int64N(file/bs) * bs, Length: bs}
	})
	iops := n / (last(dones) - start).Seconds()
	// Default CPU: 3 µs request + 8 µs network + 4 KiB at 4 GB/s (copy) and
	// 2 GB/s (network) = 14.1 µs of one core; 4 cores.
	want := 4 / (3e-6 + 8e-6 + 4096/4e9 + 4096/2e9)
	t.Logf("cached file: %.0f IOPS (CPU bound: %.0f), hits %v", iops, want, get(c, "page_cache_hits")-hits0)
	if iops < want*0.97 || iops > want*1.01 {
		t.Errorf("cached random reads at %.0f IOPS, want the CPU's %.0f", iops, want)
	}
	if h := get(c, "page_cache_hits") - hits0; h != n {
		t.Errorf("%v hits of %d reads", h, n)
	}

	// A 2 GiB file on the same NAS: 4× the RAM.
	c, err = New(small(), hddArray(t))
	if err != nil {
		t.Fatal(err)
	}
	big := 2 * models.GiB
	dones = closedLoop(t, c, 0, 8, 300000, func(int) models.Request {
		return models.Request{Op: models.Read, Offset: rng.Int64N(big/bs) * bs, Length: bs}
	})
	// Measure the last 100000, when the cache is full.
	t0 := dones[199999]
	iops = 100000 / (last(dones) - t0).Seconds()
	array := 4 / (8e-3 + 4096/150e6)
	hit := float64(384*models.MiB) / float64(big) // a random page is cached with this chance
	t.Logf("file 4x RAM: %.0f IOPS; array %.0f, with a %.0f%% hit ratio %.0f", iops, array, hit*100, array/(1-hit))
	if iops < array || iops > array/(1-hit)*1.05 {
		t.Errorf("random reads over a file 4x the RAM at %.0f IOPS, want about the array's %.0f–%.0f", iops, array, array/(1-hit))
	}
}

// Writes are absorbed in RAM up to the throttle's freerun point, then run
// at the storage's speed.
func TestWriteAbsorbedThenThrottled(t *testing.T) {
	slow, err := fixed.New(fixed.Config{Capacity: 64 * models.GiB, Units: 1, Write: time.Millisecond, BytesPerSecond: 100e6})
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(small(), slow)
	if err != nil {
		t.Fatal(err)
	}
	const bs = models.MiB
	const n = 1024 // 1 GiB
	dones := closedLoop(t, c, 0, 4, n, func(i int) models.Request {
		return models.Request{Op: models.Write, Offset: int64(i) * bs, Length: bs}
	})
	w := 50 * time.Millisecond
	var s []float64
	for _, d := range dones {
		i := int(d / w)
		for len(s) <= i {
			s = append(s, 0)
		}
		s[i] += float64(bs) / w.Seconds() / 1e6
	}
	t.Logf("MB/s per 50 ms: %.0f", s)
	if s[0] < 1000 {
		t.Errorf("first 50 ms at %.0f MB/s, want RAM speed", s[0])
	}
	// 1 MiB writeback I/Os: 1 ms + 10.5 ms each on one unit.
	want := float64(bs) / (1e-3 + float64(bs)/100e6) / 1e6
	tail := s[len(s)-41 : len(s)-1]
	var sum float64
	for _, v := range tail {
		sum += v
	}
	got := sum / float64(len(tail))
	t.Logf("steady %.1f MB/s, storage %.1f MB/s; dirty %.0f MiB", got, want, get(c, "page_cache_dirty_bytes")/float64(models.MiB))
	if got < want*0.93 || got > want*1.05 {
		t.Errorf("throttled writes at %.1f MB/s, want the storage's %.1f", got, want)
	}
	// The throttle holds the dirty pages (those under writeback too)
	// between its freerun point and the limit.
	limit, freerun := 0.2*float64(384*models.MiB), 0.15*float64(384*models.MiB)
	dirty := get(c, "page_cache_dirty_bytes")
	if inflight := float64(c.th.inflightPages * c.ps); dirty+inflight > limit || dirty+inflight < freerun {
		t.Errorf("dirty %.0f MiB + %.0f MiB under writeback, want between the freerun point %.0f MiB and the limit %.0f MiB",
			dirty/float64(models.MiB), inflight/float64(models.MiB), freerun/float64(models.MiB), limit/float64(models.MiB))
	}
	// Flush writes everything back.
	end := last(dones)
	f, err := c.Submit(end, models.Request{Op: models.Flush})
	if err != nil {
		t.Fatal(err)
	}
	if d := get(c, "page_cache_dirty_bytes"); d != 0 {
		t.Errorf("after flush %v bytes dirty", d)
	}
	if wb := get(c, "writeback_bytes"); wb != float64(n*bs) {
		t.Errorf("written back %v bytes, want %d", wb, n*bs)
	}
	if min := time.Duration(dirty / 100e6 * 1e9); f-end < min {
		t.Errorf("flush took %v, want at least %v to write the dirty pages", f-end, min)
	}
}

// Random 4 KiB writes that outrun the storage are throttled smoothly, as
// Linux's balance_dirty_pages does it: in the steady state every write
// sleeps about as long as the others (the median near the mean, which
// Little's law sets at queue depth / the storage's write rate), rather
// than most passing at RAM speed while a few wait out a whole writeback,
// and the bandwidth estimate finds the storage's rate.
func TestThrottleSmooth(t *testing.T) {
	c, err := New(Config{RAM: models.Bytes(136 * models.MiB), OSReserved: models.Bytes(128 * models.MiB)}, hddArray(t))
	if err != nil {
		t.Fatal(err)
	}
	const qd, n = 32, 40000
	slots := make([]time.Duration, qd)
	rng := rand.New(rand.NewPCG(3, 4))
	var lat []time.Duration
	var from, to time.Duration
	for i := range n {
		j := 0
		for k := range slots {
			if slots[k] < slots[j] {
				j = k
			}
		}
		at := slots[j]
		done, err := c.Submit(at, models.Request{Op: models.Write, Offset: rng.Int64N(models.GiB/4096) * 4096, Length: 4096})
		if err != nil {
			t.Fatal(err)
		}
		slots[j] = done
		if i == n/2 {
			from = at
		}
		if i > n/2 {
			lat = append(lat, done-at)
			to = max(to, done)
		}
	}
	slices.Sort(lat)
	var sum time.Duration
	for _, l := range lat {
		sum += l
	}
	mean := sum / time.Duration(len(lat))
	p10, p50, p90 := lat[len(lat)/10], lat[len(lat)/2], lat[len(lat)*9/10]
	iops := float64(len(lat)) / (to - from).Seconds()
	storage := 4 / (4e-3 + 4096/150e6) // 4 units, one 4 KiB write each
	t.Logf("steady: %.0f IOPS (storage %.0f); latency mean %v, p10 %v, p50 %v, p90 %v; bandwidth estimate %.0f pages/s",
		iops, storage, mean, p10, p50, p90, c.th.bw)
	if iops < storage*0.9 || iops > storage*1.1 {
		t.Errorf("throttled at %.0f IOPS, want the storage's %.0f", iops, storage)
	}
	if little := time.Duration(qd / iops * 1e9); mean < little*9/10 || mean > little*11/10 {
		t.Errorf("mean latency %v, want qd/IOPS = %v", mean, little)
	}
	if p50 < mean*8/10 || p50 > mean*12/10 || p10 < mean/2 {
		t.Errorf("latency p10 %v, p50 %v against a mean of %v: the throttle is not smooth", p10, p50, mean)
	}
	if c.th.bw < storage*0.8 || c.th.bw > storage*1.2 {
		t.Errorf("bandwidth estimate %.0f pages/s, want about the storage's %.0f", c.th.bw, storage)
	}
}

// A lone writer (QD1) that outruns the storage is paced to the storage's
// rate too, but it sleeps no less than minPause at a time: most of its
// writes go at RAM speed and one in so many sleeps, as under Linux, so
// its median latency is the page cache's, not a point on the edge between
// the two.
func TestThrottleLoneWriter(t *testing.T) {
	c, err := New(Config{RAM: models.Bytes(136 * models.MiB), OSReserved: models.Bytes(128 * models.MiB)}, hddArray(t))
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 40000
	var at, from time.Duration
	var lat []time.Duration
	for i := range n {
		done, err := c.Submit(at, models.Request{Op: models.Write, Offset: rng.Int64N(models.GiB/4096) * 4096, Length: 4096})
		if err != nil {
			t.Fatal(err)
		}
		if i == n/2 {
			from = at
		}
		if i > n/2 {
			lat = append(lat, done-at)
		}
		at = done + 100*time.Microsecond // the client's own time
	}
	slices.Sort(lat)
	iops := float64(len(lat)) / (at - from).Seconds()
	storage := 4 / (4e-3 + 4096/150e6)
	p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
	t.Logf("steady: %.0f IOPS (storage %.0f); latency p50 %v, p99 %v", iops, storage, p50, p99)
	if iops < storage*0.9 || iops > storage*1.1 {
		t.Errorf("lone writer at %.0f IOPS, want the storage's %.0f", iops, storage)
	}
	if p50 > 100*time.Microsecond || p99 < minPause {
		t.Errorf("latency p50 %v, p99 %v: want the page cache's at the median and sleeps of at least %v", p50, p99, minPause)
	}
}

// Data arriving in bursts below the background ratio stays in RAM until it
// expires, then goes out in the idle time.
func TestIdleWritebackAfterExpire(t *testing.T) {
	c, err := New(small(), hddArray(t))
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < 16; i++ {
		c.Submit(time.Duration(i)*time.Millisecond, models.Request{Op: models.Write, Offset: i * models.MiB, Length: models.MiB})
	}
	c.Submit(20*time.Second, models.Request{Op: models.Read, Offset: 0, Length: 4096})
	if wb := get(c, "writeback_bytes"); wb != 0 {
		t.Errorf("wrote back %v bytes before the data expired", wb)
	}
	c.Submit(40*time.Second, models.Request{Op: models.Read, Offset: 0, Length: 4096})
	if wb := get(c, "writeback_bytes"); wb != 16*float64(models.MiB) {
		t.Errorf("after expiry wrote back %v bytes, want 16 MiB", wb)
	}
}

// File operations cost CPU and touch the inode's page: the first stat of
// a file reads it from the storage, the next is a cache hit; creates are
// journalled and committed after the commit interval.
func TestFileOps(t *testing.T) {
	arr := hddArray(t)
	c, err := New(Config{}, arr)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := c.Submit(0, models.Request{Op: models.Stat, Offset: 12345})
	if d1 < 8*time.Millisecond {
		t.Errorf("first stat took %v, want a metadata read from the array", d1)
	}
	d2, _ := c.Submit(d1, models.Request{Op: models.Stat, Offset: 12345})
	if cpu := c.cfg.CPU.PerFileOp + c.cfg.CPU.NetPerRequest; d2-d1 != cpu {
		t.Errorf("cached stat took %v, want the CPU's %v", d2-d1, cpu)
	}
	for i := 0; i < 100; i++ {
		c.Submit(d2, models.Request{Op: models.Create, Offset: int64(i) << 20})
	}
	if get(c, "metadata_ops") != 102 {
		t.Errorf("metadata_ops %v, want 102", get(c, "metadata_ops"))
	}
	if j := get(c, "journal_bytes"); j != 0 {
		t.Errorf("journal written before the commit interval: %v", j)
	}
	c.Submit(d2+6*time.Second, models.Request{Op: models.Stat, Offset: 12345})
	if j := get(c, "journal_bytes"); j != 100*4096 {
		t.Errorf("journal %v bytes after the commit interval, want %d", j, 100*4096)
	}
	if d, _ := c.Submit(d2+7*time.Second, models.Request{Op: models.Close}); d != d2+7*time.Second+c.cfg.CPU.PerFileOp+c.cfg.CPU.NetPerRequest {
		t.Errorf("close took %v", d-d2-7*time.Second)
	}
}

// Encryption costs CPU on the data path: software AES on a slow core
// limits direct reads; with AES-NI the same work hardly shows.
func TestEncryptionCost(t *testing.T) {
	free := func() models.Device {
		d, _ := fixed.New(fixed.Config{Capacity: 64 * models.GiB, Units: 64})
		return d
	}
	cfg := Config{DirectIO: true, Encrypted: true, CPU: CPU{Cores: 1, AESRate: 50e6, OffloadAESRate: 2e9, CryptoPerOp: time.Microsecond}}
	soft, _ := New(cfg, free())
	cfg.CPU.HasCryptoOffload = true
	ni, _ := New(cfg, free())
	rate := func(c *Controller) float64 {
		d := closedLoop(t, c, 0, 8, 2000, func(i int) models.Request {
			return models.Request{Op: models.Read, Offset: int64(i) * 64 * models.KiB, Length: 64 * models.KiB}
		})
		return 2000 * 64 * float64(models.KiB) / last(d).Seconds() / 1e6
	}
	s, n := rate(soft), rate(ni)
	// Per 64 KiB read on one core: 3+8+5 µs + 16 extents × 1 µs + network
	// 32.8 µs + AES (1311 µs software, 32.8 µs AES-NI).
	wantSoft := 65536 / (32e-6 + 65536/2e9 + 65536/50e6) / 1e6
	wantNI := 65536 / (32e-6 + 65536/2e9 + 65536/2e9) / 1e6
	t.Logf("software AES %.1f MB/s (want %.1f), AES-NI %.0f MB/s (want %.0f)", s, wantSoft, n, wantNI)
	if s < wantSoft*0.98 || s > wantSoft*1.02 || n < wantNI*0.98 || n > wantNI*1.02 {
		t.Error("encrypted read rates off the CPU model")
	}
	// A crypto engine is one shared timeline: 4 cores do not help.
	cfg.CPU.Cores, cfg.CPU.CryptoEngine, cfg.CPU.OffloadAESRate = 4, true, 300e6
	eng, _ := New(cfg, free())
	if e := rate(eng); e > 300*1.001 || e < 290 {
		t.Errorf("4 cores over a 300 MB/s engine: %.0f MB/s", e)
	}
}

// With CryptoWriteThrough an encrypted write waits for the storage and
// its flush; without it, the page cache absorbs it.
func TestCryptoWriteThrough(t *testing.T) {
	for _, wt := range []bool{false, true} {
		st, _ := fixed.New(fixed.Config{Capacity: 64 * models.GiB, Units: 4, Write: 2 * time.Millisecond, Other: 10 * time.Millisecond})
		c, err := New(Config{Encrypted: true, CryptoWriteThrough: wt}, st)
		if err != nil {
			t.Fatal(err)
		}
		d, _ := c.Submit(0, models.Request{Op: models.Write, Offset: 8192, Length: 4096})
		if wt && d < 12*time.Millisecond {
			t.Errorf("write-through took %v, want write + flush (12ms)", d)
		}
		if !wt && d > 100*time.Microsecond {
			t.Errorf("buffered write took %v", d)
		}
		// The written page reads back from the cache either way.
		r, _ := c.Submit(d, models.Request{Op: models.Read, Offset: 8192, Length: 4096})
		if r-d > 100*time.Microsecond || get(c, "page_cache_hits") != 1 {
			t.Errorf("read after write took %v", r-d)
		}
	}
}

// 8 fast SATA SSDs behind a PCIe 2.0 x4 HBA never move more than the
// uplink carries.
func TestBusCap(t *testing.T) {
	capRate := PCIeRate(2, 4)
	for _, withBus := range []bool{false, true} {
		cfg := BusConfig{Name: "hba", PortRate: models.Bytes(SATA3)}
		if withBus {
			cfg.Rate = models.Bytes(capRate)
		}
		bus, err := NewBus(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var ports []*Port
		for i := 0; i < 8; i++ {
			d, _ := fixed.New(fixed.Config{Capacity: models.GiB, Units: 8, Read: 100 * time.Microsecond, BytesPerSecond: 550e6})
			ports = append(ports, bus.Attach(d))
		}
		const bs = 128 * models.KiB
		const n = 20000
		k := 0
		dones := closedLoop(t, &spread{ports: ports, k: &k}, 0, 64, n, func(i int) models.Request {
			return models.Request{Op: models.Read, Offset: int64(i%8192) * bs, Length: bs}
		})
		end := last(dones)
		got := float64(n*bs) / end.Seconds()
		if moved, _ := models.Sum(&spread{ports: ports, k: &k}, "bus_bytes"); moved != float64(n*bs) || bus.Bytes() != n*bs {
			t.Errorf("bus_bytes %v, bus %d, want %d", moved, bus.Bytes(), n*bs)
		}
		if withBus {
			// Never above the cap, in any 10 ms window either.
			const w = 10 * time.Millisecond
			bins := make([]float64, end/w+1)
			for _, d := range dones {
				bins[d/w] += float64(bs)
			}
			for i, b := range bins {
				if b > capRate*w.Seconds()+float64(bs) {
					t.Errorf("window %d: %.0f MB/s over the cap", i, b/w.Seconds()/1e6)
				}
			}
		}
		t.Logf("bus=%v: %.0f MB/s (cap %.0f MB/s, 8 ports × %.0f MB/s)", withBus, got/1e6, capRate/1e6, SATA3/1e6)
		if withBus && (got > capRate*1.0001 || got < capRate*0.95) {
			t.Errorf("behind the HBA: %.0f MB/s, want the %.0f MB/s cap", got/1e6, capRate/1e6)
		}
		if !withBus && got < 3.5e9 {
			t.Errorf("without a shared cap: %.0f MB/s, want the drives' ~4 GB/s", got/1e6)
		}
	}
}

// spread sends each request to the next port in turn.
type spread struct {
	ports []*Port
	k     *int
}

func (s *spread) Capacity() int64 { return s.ports[0].Capacity() }
func (s *spread) Children() []models.Device {
	var out []models.Device
	for _, p := range s.ports {
		out = append(out, p)
	}
	return out
}
func (s *spread) Submit(at time.Duration, r models.Request) (time.Duration, error) {
	*s.k++
	return s.ports[*s.k%len(s.ports)].Submit(at, r)
}

// Runs are deterministic, accept submissions out of time order, and never
// complete a request before it was issued.
func TestDeterministicOutOfOrder(t *testing.T) {
	run := func() []time.Duration {
		c, err := New(Config{RAM: models.Bytes(128 * models.MiB), OSReserved: models.Bytes(64 * models.MiB), Encrypted: true}, hddArray(t))
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(5, 5))
		var out []time.Duration
		ops := []models.Op{models.Read, models.Write, models.Read, models.Write, models.Stat, models.Create, models.Trim, models.Flush}
		for i := 0; i < 30000; i++ {
			at := time.Duration(rng.IntN(int(10 * time.Second)))
			r := models.Request{Op: ops[rng.IntN(len(ops))], Offset: rng.Int64N(32768) * 8 * models.KiB, Length: 8 * models.KiB}
			done, err := c.Submit(at, r)
			if err != nil {
				t.Fatal(err)
			}
			if done < at {
				t.Fatalf("%v at %v done at %v", r, at, done)
			}
			out = append(out, done)
		}
		if d := get(c, "page_cache_dirty_bytes"); d < 0 || d > 0.2*float64(64*models.MiB) {
			t.Errorf("dirty %v outside [0, limit]", d)
		}
		return out
	}
	a, b := run(), run()
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("runs differ at %d", i)
		}
	}
}

func TestConfig(t *testing.T) {
	bad := []Config{
		{CPU: CPU{Cores: -1}},
		{RAM: models.Bytes(models.MiB)},
		{RAM: models.Bytes(models.GiB), OSReserved: models.Bytes(2 * models.GiB)},
		{PageSize: 3000},
		{DirtyRatio: 1.2},
		{DirtyRatio: 0.1, DirtyBackgroundRatio: 0.2},
		{WritebackDepth: -3},
		{PCIeSlots: []PCIeSlot{{Gen: 7, Lanes: 4}}},
		{DriveBus: BusConfig{Rate: -1}},
		{CryptoExtent: 1000},
	}
	for _, c := range bad {
		if err := c.Validate(); !errors.Is(err, models.ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", c, err)
		}
	}
	d := Config{}.WithDefaults()
	if err := d.Validate(); err != nil {
		t.Fatal(err)
	}
	// Golden defaults: a change here changes every setup that relies on them.
	got := fmt.Sprintf("%d %v %v %v %v %g %g %v %d %v %v %v %v %v", d.CPU.Cores, d.CPU.PerRequest, d.RAM, d.OSReserved, d.PageSize,
		d.DirtyRatio, d.DirtyBackgroundRatio, d.DirtyExpire, d.WritebackDepth, d.WritebackMax, d.ReadAhead, d.CryptoExtent, d.JournalInterval, d.JournalPerOp)
	const want = "4 3µs 4GiB 768MiB 4KiB 0.2 0.1 30s 8 1MiB 128KiB 4KiB 5s 4KiB"
	if got != want {
		t.Errorf("defaults\n got %s\nwant %s", got, want)
	}
	if _, err := New(Config{}, nil); !errors.Is(err, models.ErrConfig) {
		t.Errorf("nil storage: %v", err)
	}
	if r := PCIeRate(2, 4); r < 1.6e9 || r > 2e9 {
		t.Errorf("PCIe 2.0 x4 = %.2f GB/s, want 1.6–2", r/1e9)
	}
	if r := PCIeRate(3, 4); r < 3.2e9 || r > 3.94e9 {
		t.Errorf("PCIe 3.0 x4 = %.2f GB/s", r/1e9)
	}
}

func TestComputeAndErrors(t *testing.T) {
	c, _ := New(Config{CPU: CPU{Cores: 2}}, hddArray(t))
	var comp Computer = c
	a := comp.Compute(0, 10*time.Microsecond, 1e6, 1e9)
	b := comp.Compute(0, 10*time.Microsecond, 1e6, 1e9)
	x := comp.Compute(0, 10*time.Microsecond, 0, 0)
	if a != 1010*time.Microsecond || b != a || x != 2*a-a+10*time.Microsecond {
		t.Errorf("compute on 2 cores: %v %v %v", a, b, x)
	}
	if _, err := c.Submit(0, models.Request{Op: models.Read, Offset: 64 * models.GiB, Length: 1}); !errors.Is(err, models.ErrOutOfRange) {
		t.Errorf("read beyond capacity: %v", err)
	}
}

func BenchmarkSubmit(b *testing.B) {
	for _, op := range []string{"read-hit", "read-miss", "write"} {
		b.Run("op="+op, func(b *testing.B) {
			c, err := New(Config{RAM: models.Bytes(256 * models.MiB), OSReserved: models.Bytes(64 * models.MiB)}, hddArray(b))
			if err != nil {
				b.Fatal(err)
			}
			span := int64(64 * models.MiB) // fits
			if op == "read-miss" {
				span = 16 * models.GiB
			}
			kind := models.Read
			if op == "write" {
				kind = models.Write
			}
			rng := rand.New(rand.NewPCG(1, 2))
			var at time.Duration
			for i := 0; i < 1<<17; i++ { // warm up: the tables stop growing
				at += 20 * time.Microsecond
				c.Submit(at, models.Request{Op: kind, Offset: rng.Int64N(span/4096) * 4096, Length: 4096})
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				at += 20 * time.Microsecond
				if _, err := c.Submit(at, models.Request{Op: kind, Offset: rng.Int64N(span/4096) * 4096, Length: 4096}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ios/s")
		})
	}
}

// flushCounter counts the flushes a storage device gets.
type flushCounter struct {
	models.Device
	flushes int
}

func (f *flushCounter) Submit(at time.Duration, r models.Request) (time.Duration, error) {
	if r.Op == models.Flush {
		f.flushes++
	}
	return f.Device.Submit(at, r)
}

// WriteThrough (a remote client's write-through flag): each write reaches
// the storage before it is acknowledged, without a flush of the storage's
// own cache, and leaves its pages cached and clean; reads still go through
// the page cache (unlike DirectIO, which bypasses it).
func TestWriteThrough(t *testing.T) {
	st, _ := fixed.New(fixed.Config{Capacity: 64 * models.GiB, Units: 4, Read: time.Millisecond, Write: 2 * time.Millisecond, Other: 10 * time.Millisecond})
	fc := &flushCounter{Device: st}
	c, err := New(Config{WriteThrough: true}, fc)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := c.Submit(0, models.Request{Op: models.Write, Offset: 8192, Length: 4096})
	if d < 2*time.Millisecond || d > 2*time.Millisecond+200*time.Microsecond {
		t.Errorf("write-through took %v, want the storage's write (2ms) and no flush (10ms)", d)
	}
	if fc.flushes != 0 || get(c, "page_cache_dirty_bytes") != 0 {
		t.Errorf("%d flushes, %v dirty bytes: want none", fc.flushes, get(c, "page_cache_dirty_bytes"))
	}
	r, _ := c.Submit(d, models.Request{Op: models.Read, Offset: 8192, Length: 4096})
	if r-d > 100*time.Microsecond || get(c, "page_cache_hits") != 1 {
		t.Errorf("read after a write-through took %v (hits %v), want a page-cache hit", r-d, get(c, "page_cache_hits"))
	}
	// A page never written is read from the storage once, then cached.
	r1, _ := c.Submit(r, models.Request{Op: models.Read, Offset: 1 << 20, Length: 4096})
	r2, _ := c.Submit(r1, models.Request{Op: models.Read, Offset: 1 << 20, Length: 4096})
	if r1-r < time.Millisecond || r2-r1 > 100*time.Microsecond {
		t.Errorf("uncached read %v then cached %v, want ≥ 1ms then a hit", r1-r, r2-r1)
	}
	// DirectIO goes around the cache for both.
	dc, _ := New(Config{DirectIO: true, WriteThrough: true}, hddArray(t))
	w, _ := dc.Submit(0, models.Request{Op: models.Write, Offset: 8192, Length: 4096})
	r3, _ := dc.Submit(w, models.Request{Op: models.Read, Offset: 8192, Length: 4096})
	if r3-w < 8*time.Millisecond || get(dc, "page_cache_hits") != 0 {
		t.Errorf("direct read after write took %v, want the storage's 8ms", r3-w)
	}
}

// SparseFiles: data never written reads as zeros without the storage (a
// hole, an unwritten extent); once written, or after a trim makes it a
// hole again, it behaves accordingly. Metadata reads are not affected.
func TestSparseFiles(t *testing.T) {
	st, _ := fixed.New(fixed.Config{Capacity: 64 * models.GiB, Units: 4, Read: time.Millisecond, Write: 2 * time.Millisecond})
	c, err := New(Config{SparseFiles: true, DirectIO: true}, st)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Duration(0)
	read := func(off int64) time.Duration {
		d, err := c.Submit(at, models.Request{Op: models.Read, Offset: off, Length: 4096})
		if err != nil {
			t.Fatal(err)
		}
		took := d - at
		at = d
		return took
	}
	if took := read(10 * models.MiB); took >= time.Millisecond {
		t.Errorf("read of a never-written page took %v, want no storage read", took)
	}
	w, _ := c.Submit(at, models.Request{Op: models.Write, Offset: 10 * models.MiB, Length: 4096})
	at = w
	if took := read(10 * models.MiB); took < time.Millisecond {
		t.Errorf("read of a written page took %v, want the storage's 1ms", took)
	}
	tr, _ := c.Submit(at, models.Request{Op: models.Trim, Offset: 8 * models.MiB, Length: 8 * models.MiB})
	at = tr
	if took := read(10 * models.MiB); took >= time.Millisecond {
		t.Errorf("read of a trimmed page took %v, want a hole again", took)
	}
	// Without SparseFiles every read goes to the storage.
	plain, _ := New(Config{DirectIO: true}, st)
	d, _ := plain.Submit(at, models.Request{Op: models.Read, Offset: 20 * models.MiB, Length: 4096})
	if d-at < time.Millisecond {
		t.Errorf("read without sparse_files took %v", d-at)
	}
	// Buffered: a hole comes into the page cache without a storage read;
	// file metadata (the inode's page) is still read from the storage.
	b, _ := New(Config{SparseFiles: true}, st)
	r, _ := b.Submit(at, models.Request{Op: models.Read, Offset: 30 * models.MiB, Length: 64 * models.KiB})
	if r-at >= time.Millisecond || get(b, "page_cache_misses") != 16 {
		t.Errorf("buffered read of a hole took %v (misses %v)", r-at, get(b, "page_cache_misses"))
	}
	o, _ := b.Submit(r, models.Request{Op: models.Open, Offset: 30 * models.MiB, Length: 64 * models.KiB})
	if o-r < time.Millisecond {
		t.Errorf("open read its inode in %v, want the storage's 1ms", o-r)
	}
}

// Uncached counts the pages a read would fill: all of a never-read range,
// none once it has been read (it stays in the page cache), and none under
// DirectIO, which fills no page cache.
func TestUncached(t *testing.T) {
	st, _ := fixed.New(fixed.Config{Capacity: 64 * models.GiB, Units: 4, Read: time.Millisecond, Write: time.Millisecond})
	c, err := New(Config{}, st)
	if err != nil {
		t.Fatal(err)
	}
	r := models.Request{Op: models.Read, Offset: 10*models.MiB + 512, Length: 16 << 10}
	if n := c.Uncached(r); n != 5 {
		t.Errorf("a never-read 16 KiB at an odd offset: %d uncached pages, want 5", n)
	}
	if _, err := c.Submit(0, r); err != nil {
		t.Fatal(err)
	}
	if n := c.Uncached(r); n != 0 {
		t.Errorf("after reading it: %d uncached pages, want 0", n)
	}
	if n := c.Uncached(models.Request{Op: models.Read, Offset: 10*models.MiB - 4096, Length: 8192}); n != 1 {
		t.Errorf("one page before it and its first: %d uncached, want 1", n)
	}
	direct, _ := New(Config{DirectIO: true}, st)
	if n := direct.Uncached(r); n != 0 {
		t.Errorf("direct I/O: %d uncached pages, want 0", n)
	}
}
