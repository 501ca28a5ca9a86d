package catalog

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/cache"
	"github.com/nasemu/nasemu/models/devicetest"
	"github.com/nasemu/nasemu/models/fixed"
	"github.com/nasemu/nasemu/models/nas"
)

const gib = int64(1) << 30

// Every catalog system has a unique name, a product and a source, a valid
// configuration, and builds a controller over a fixed device.
func TestSystemsBuild(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Systems() {
		if seen[s.Name] {
			t.Errorf("duplicate system %q", s.Name)
		}
		seen[s.Name] = true
		if s.Product == "" || s.Source == "" {
			t.Errorf("%s: no product or source", s.Name)
		}
		if err := s.NAS.Validate(); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
		d, _ := fixed.New(fixed.Config{Capacity: 64 * gib})
		c, err := s.New(d)
		if err != nil {
			t.Errorf("%s: %v", s.Name, err)
			continue
		}
		if c.Capacity() != 64*gib {
			t.Errorf("%s: capacity %d", s.Name, c.Capacity())
		}
		if _, err := c.Submit(0, models.Request{Op: models.Read, Length: 4096}); err != nil {
			t.Errorf("%s: %v", s.Name, err)
		}
		if got, err := LookupSystem(s.Name); err != nil || got.Name != s.Name {
			t.Errorf("lookup %s: %v", s.Name, err)
		}
		t.Logf("%s: %s", s.Name, s.Summary())
	}
	for _, name := range []string{"synology-ds1817", "rst-server-001", "xeon-server-002"} {
		if !seen[name] {
			t.Errorf("missing %s", name)
		}
	}
	if _, err := LookupSystem("no-such-nas"); !errors.Is(err, models.ErrConfig) || !strings.Contains(err.Error(), "synology-ds1817") {
		t.Errorf("unknown system: %v", err)
	}
	// Fresh values: changing one does not change the catalog.
	a := Systems()[0]
	a.NAS.PCIeSlots = append(a.NAS.PCIeSlots[:0], nas.PCIeSlot{Gen: 1, Lanes: 1})
	if b, _ := LookupSystem(a.Name); len(b.NAS.PCIeSlots) > 0 && b.NAS.PCIeSlots[0].Gen == 1 {
		t.Error("Systems shares slices between calls")
	}
}

// The datasheet figures the brief names.
func TestSystemFigures(t *testing.T) {
	ds, _ := LookupSystem("synology-ds1817")
	if c := ds.NAS.CPU; c.Cores != 4 || c.GHz != 1.7 || !c.HasCryptoOffload || !c.CryptoEngine {
		t.Errorf("DS1817 CPU %+v", c)
	}
	if ds.NAS.RAM != 2<<30 || ds.Bays != 8 || len(ds.NICs) != 2 || ds.NICs[0].Count != 4 || ds.NICs[1].Count != 2 {
		t.Errorf("DS1817 %v RAM, %d bays, NICs %+v", ds.NAS.RAM, ds.Bays, ds.NICs)
	}
	rst, _ := LookupSystem("rst-server-001")
	if rst.NAS.RAM != 2<<30 || rst.NAS.CPU.Cores != 4 || !rst.NAS.CPU.HasCryptoOffload || rst.NAS.DriveBus.PortRate != models.Bytes(nas.SATA2) {
		t.Errorf("rst-server-001 %+v", rst.NAS)
	}
	x, _ := LookupSystem("xeon-server-002")
	if x.NAS.RAM != 64<<30 || x.NAS.CPU.Cores != 20 || x.ControllerWritePolicy != "write-through" || len(x.NAS.PCIeSlots) != 4 {
		t.Errorf("xeon-server-002 %+v", x)
	}
}

// closedLoop keeps qd requests in flight, on one client thread, and
// returns the last completion.
func closedLoop(t *testing.T, d models.Device, start time.Duration, qd, n int, next func(i int) models.Request) time.Duration {
	t.Helper()
	return start + devicetest.Closed{Start: start, QD: qd, N: n, OwnThreads: true}.Run(t, d, next).Elapsed
}

// An encrypted share on a low-power NAS CPU without crypto offload is
// CPU-bound below the 1GbE line rate (~118 MB/s) for small I/O; with the
// DS1817's engine, or AES-NI on a desktop CPU, it is not. Reads of a file
// far larger than the page cache, over storage that costs nothing, so the
// CPU is all that limits.
func TestEncryptedSmallIO(t *testing.T) {
	const line = 117.7 // MB/s, SMB payload on 1GbE
	rate := func(cfg nas.Config, bs int64) float64 {
		cfg.Encrypted = true
		cfg.SparseFiles = false // the file holds data: every read decrypts
		free, _ := fixed.New(fixed.Config{Capacity: 256 * gib, Units: 64})
		c, err := nas.New(cfg, free)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 1))
		const n = 20000
		end := closedLoop(t, c, 0, 8, n, func(int) models.Request {
			return models.Request{Op: models.Read, Offset: rng.Int64N(256*gib/bs) * bs, Length: bs}
		})
		return float64(n*bs) / end.Seconds() / 1e6
	}
	ds, _ := LookupSystem("synology-ds1817")
	off := ds.NAS
	off.CPU.HasCryptoOffload = false
	arm, _ := LookupSystem("generic-arm-lowpower")
	desk, _ := LookupSystem("rst-server-001")
	for _, bs := range []int64{4 << 10, 64 << 10} {
		dsOn, dsOff, a, d := rate(ds.NAS, bs), rate(off, bs), rate(arm.NAS, bs), rate(desk.NAS, bs)
		t.Logf("%3d KiB encrypted reads, MB/s: DS1817 engine %.0f, DS1817 no offload %.0f, generic ARM %.0f, i5-2500K AES-NI %.0f",
			bs>>10, dsOn, dsOff, a, d)
		if bs == 4<<10 && dsOff >= line {
			t.Errorf("DS1817 without offload, 4 KiB: %.0f MB/s, want CPU-bound below %.0f", dsOff, line)
		}
		if a >= line/2 {
			t.Errorf("generic ARM, %d KiB: %.0f MB/s, want well below the line rate", bs>>10, a)
		}
		if dsOn < 1.5*line || d < 5*line {
			t.Errorf("with offload: DS1817 %.0f, i5 %.0f MB/s; want far above the line rate", dsOn, d)
		}
	}
}

// The DS1817's page cache: review 003's diskspd run (4 KiB random reads,
// 8 threads, 4 GB file) over an HDD-like array. With the stock 2 GB only
// about a third of the file is cached and the disks set the pace; with
// 8 GB the whole file is in RAM after one pass and the CPU does.
func TestDS1817PageCache(t *testing.T) {
	ds, _ := LookupSystem("synology-ds1817")
	array := 4 / (8e-3 + 4096/150e6) // IOPS of the fake array below
	for _, ram := range []int64{2 << 30, 8 << 30} {
		cfg := ds.NAS
		cfg.RAM = models.Bytes(ram)
		cfg.SparseFiles = false // the file was written (diskspd over SMB writes it)
		arr, _ := fixed.New(fixed.Config{Capacity: 64 * gib, Units: 4, Read: 8 * time.Millisecond, Write: 4 * time.Millisecond, BytesPerSecond: 150e6})
		c, err := nas.New(cfg, arr)
		if err != nil {
			t.Fatal(err)
		}
		const file = 4 << 30
		warm := closedLoop(t, c, 0, 1, file>>20, func(i int) models.Request {
			return models.Request{Op: models.Read, Offset: int64(i) << 20, Length: 1 << 20}
		})
		rng := rand.New(rand.NewPCG(2, 2))
		const n = 60000
		slots := make([]time.Duration, 8)
		for i := range slots {
			slots[i] = warm
		}
		var end time.Duration
		for i := 0; i < n; i++ {
			j := 0
			for k := range slots {
				if slots[k] < slots[j] {
					j = k
				}
			}
			done, err := c.Submit(slots[j], models.Request{Op: models.Read, Offset: rng.Int64N(file/4096) * 4096, Length: 4096})
			if err != nil {
				t.Fatal(err)
			}
			slots[j], end = done, max(end, done)
		}
		iops := n / (end - warm).Seconds()
		cached := float64(cfg.PageCacheBytes()) / float64(file)
		t.Logf("DS1817 with %d GiB RAM: %.0f random 4 KiB read IOPS (page cache %.2f GiB = %.0f%% of the file; array alone %.0f)",
			ram>>30, iops, float64(cfg.PageCacheBytes())/float64(gib), min(cached, 1)*100, array)
		if ram == 2<<30 && (iops < array || iops > array/(1-cached)*1.1) {
			t.Errorf("2 GiB: %.0f IOPS, want the array's %.0f raised by the %.0f%% hit ratio at most", iops, array, cached*100)
		}
		if ram == 8<<30 && iops < 20000 {
			t.Errorf("8 GiB: %.0f IOPS, want RAM/CPU speed", iops)
		}
	}
}

// With the real drive models: review 003's diskspd write run (4 KiB random
// writes, 8 threads, 4 GB file) on a DS1817 over one WD Red (the JBOD row),
// without and with a read-write SSD cache of two Kingston SUV500 mirrors.
// The page cache absorbs the first ~280 MB either way; after that the
// writes run at what is below: the disk's random writes (sorted by the
// writeback) or the SSD mirror, which is many times faster.
func TestDS1817WithRealDrives(t *testing.T) {
	build := func(name string) models.Device {
		d, err := LookupDrive(name)
		if err != nil {
			t.Fatal(err)
		}
		dev, err := d.New(16*gib, 1)
		if err != nil {
			t.Fatal(err)
		}
		return dev
	}
	ds, _ := LookupSystem("synology-ds1817")
	run := func(withCache bool) float64 {
		var storage models.Device = build("wd-red-1tb")
		if withCache {
			tier, err := cache.New(cache.Config{Mode: cache.ReadWrite}, []models.Device{build("kingston-suv500-240g"), build("kingston-suv500-240g")}, storage)
			if err != nil {
				t.Fatal(err)
			}
			storage = tier
		}
		c, err := ds.New(storage)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(3, 3))
		next := func(int) models.Request {
			return models.Request{Op: models.Write, Offset: rng.Int64N(4*gib/4096) * 4096, Length: 4096}
		}
		// 80k writes (320 MB) fill the page cache's dirty limit; measure
		// the next 40k.
		mid := closedLoop(t, c, 0, 8, 80000, next)
		end := closedLoop(t, c, mid, 8, 40000, next)
		return 40000 / (end - mid).Seconds()
	}
	hdd, ssd := run(false), run(true)
	t.Logf("DS1817, 4 KiB random writes over 4 GiB past the dirty limit: 1× WD Red %.0f IOPS; with a read-write SSD cache %.0f IOPS", hdd, ssd)
	if ssd < 3*hdd {
		t.Errorf("SSD cache %.0f IOPS vs HDD %.0f: want several times faster", ssd, hdd)
	}
}

// The NAS products take their CPU costs from their CPU's family, not from
// figures of their own, and each has a dated price and its ports.
func TestProducts(t *testing.T) {
	ps := products()
	if len(ps) < 12 {
		t.Errorf("%d products, want at least 12", len(ps))
	}
	families := map[string]bool{}
	for _, p := range ps {
		c := p.NAS.CPU
		if _, err := nas.LookupFamily(c.Family); err != nil || c.Cores == 0 || c.GHz == 0 {
			t.Errorf("%s: CPU %+v: %v", p.Name, c, err)
		}
		if c.PerRequest != 0 || c.PerIO != 0 || c.NetRate != 0 || c.AESRate != 0 {
			t.Errorf("%s: CPU costs stated instead of derived from the family: %+v", p.Name, c)
		}
		if p.PriceUSD <= 0 || p.PriceDate == "" || p.Bays == 0 || len(p.NICs) == 0 || !strings.Contains(p.Source, "datasheet") && !strings.Contains(p.Source, "Class profile") {
			t.Errorf("%s: price %v (%q), %d bays, NICs %v, source %q", p.Name, p.PriceUSD, p.PriceDate, p.Bays, p.NICs, p.Source)
		}
		families[c.Family] = true
	}
	if len(families) < 6 {
		t.Errorf("products span %d CPU families, want several classes", len(families))
	}
}
