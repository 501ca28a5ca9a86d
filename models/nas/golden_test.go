package nas

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nasemu/nasemu/internal/golden"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fixed"
	"github.com/nasemu/nasemu/models/hdd"
)

// TestGolden pins every completion time, error and counter of the
// controller (and its storage) over seeded traces
// (testdata/controllers.golden). Speed work on the controller (a shortcut
// in the core choice, a different page-cache layout) must not move a
// single nanosecond. Rewrite it (-rewrite) only for a deliberate change
// of the model's behaviour, and say so.
func TestGolden(t *testing.T) {
	golden.Check(t, "controllers", goldenTables(t, 30_000))
}

// goldenNames name goldenConfigs and the storage below them.
var (
	goldenNames   = []string{"tiny", "one-core", "crypt", "engine", "write-through", "crypt-write-through", "direct", "local"}
	goldenStorage = []string{"fixed", "hdd", "fast-fixed-slow-cpu"}
)

// goldenConfigs span the controller's branches: a page cache small enough
// that the trace evicts and writes back (all-dirty evictions included),
// one core and many, encryption on the cores, on an engine and double
// cached, write-through, direct I/O, sparse files, local clients.
func goldenConfigs() []Config {
	tiny := Config{RAM: models.Bytes(136 * models.MiB), OSReserved: models.Bytes(128 * models.MiB), CPU: CPU{Cores: 4}}
	oneCore := tiny
	oneCore.CPU.Cores = 1
	oneCore.DirtyRatio, oneCore.DirtyBackgroundRatio = 0.9, 0.5
	crypt := tiny
	crypt.Encrypted, crypt.CryptoDoubleCache = true, true
	crypt.CPU.Cores = 2
	engine := tiny
	engine.Encrypted = true
	engine.CPU.HasCryptoOffload, engine.CPU.CryptoEngine = true, true
	wt := tiny
	wt.WriteThrough, wt.SparseFiles = true, true
	cwt := crypt
	cwt.CryptoWriteThrough, cwt.CPU.HasCryptoOffload = true, true
	direct := tiny
	direct.DirectIO, direct.SparseFiles = true, true
	local := small()
	local.Local, local.CPU.Cores = true, 8
	return []Config{tiny, oneCore, crypt, engine, wt, cwt, direct, local}
}

// goldenTables runs each config over a fixed-cost array and over one HDD
// with a trace of mixed reads, writes (partial pages too), sequential
// streams, flushes, trims, file ops and Compute calls, whose arrivals are
// out of order (booked ahead, submitted late), and hashes every
// completion, error and counter.
func goldenTables(t testing.TB, n int) string {
	runs := golden.NewTable(append([]string{"controller", "storage"}, golden.Header...)...)
	counters := golden.NewTable("controller/storage", "device", "counter", "value")
	// A WD Red 1 TB (datasheet figures) scaled down to 4 GiB.
	drive, err := hdd.Config{
		Capacity: 1_000_204_886_016, RPM: 5400, OuterMBps: 150, Heads: 2,
		TrackToTrack: time.Millisecond, AvgSeek: 11 * time.Millisecond, FullStroke: 24 * time.Millisecond,
		CacheSize: 64 << 20,
	}.ScaleTo(4 * models.GiB)
	if err != nil {
		t.Fatal(err)
	}
	for ci, cfg := range goldenConfigs() {
		for si := range 3 {
			var storage models.Device
			switch si {
			case 0:
				storage, err = fixed.New(fixed.Config{Capacity: 2 * models.GiB, Units: 4, Read: 2 * time.Millisecond, Write: time.Millisecond, BytesPerSecond: 300e6})
			case 1:
				storage, err = hdd.New(drive, uint64(ci+1))
			default: // storage faster than the CPU: the cores are the bottleneck
				storage, err = fixed.New(fixed.Config{Capacity: 2 * models.GiB, Units: 16, Read: 20 * time.Microsecond, Write: 10 * time.Microsecond, BytesPerSecond: 4e9})
			}
			if err != nil {
				t.Fatal(err)
			}
			if si == 2 { // and a slow CPU
				cfg.CPU.PerRequest, cfg.CPU.PerIO = 40*time.Microsecond, 20*time.Microsecond
			}
			c, err := New(cfg, storage)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(uint64(ci), uint64(si)))
			capa := c.Capacity()
			hot := capa / 64 // a region that fits the page cache only in part
			slots := make([]time.Duration, 32)
			var seq [3]int64
			for k := range seq {
				seq[k] = int64(k) * capa / 4
			}
			row := golden.NewSeries()
			for i := range n {
				j := rng.IntN(len(slots))
				at := slots[j]
				switch rng.IntN(10) {
				case 0: // booked ahead, as a protocol's later phase
					at += time.Duration(rng.IntN(5_000_000))
				case 1: // submitted late, before earlier arrivals
					at = max(at-time.Duration(rng.IntN(2_000_000)), 0)
				}
				var r models.Request
				switch k := rng.IntN(40); {
				case k < 12: // random 4 KiB over the whole storage
					r = models.Request{Op: models.Read, Offset: rng.Int64N(capa/4096) * 4096, Length: 4096}
				case k < 20: // a hot region: hits, evictions
					r = models.Request{Op: models.Read, Offset: rng.Int64N(hot/4096) * 4096, Length: 4096 << rng.IntN(3)}
				case k < 28: // writes, some of partial pages
					r = models.Request{Op: models.Write, Offset: rng.Int64N(hot/512) * 512, Length: 512 << rng.IntN(5)}
				case k < 34: // sequential streams: read-ahead, writeback merging
					s := rng.IntN(len(seq))
					r = models.Request{Op: models.Read, Offset: seq[s], Length: 64 << 10}
					if s == 2 {
						r.Op = models.Write
					}
					seq[s] = (seq[s] + r.Length) % (capa - 1<<20)
				case k < 35:
					r = models.Request{Op: models.Flush}
				case k < 36:
					r = models.Request{Op: models.Trim, Offset: rng.Int64N(hot/4096) * 4096, Length: 4096 << rng.IntN(6)}
				case k < 38:
					r = models.Request{Op: models.Open + models.Op(rng.IntN(int(models.Stat-models.Open)+1))}
				default: // a layer above charges its own work on the cores
					d := c.Compute(at, time.Duration(rng.IntN(20_000)), rng.Int64N(1<<16), float64(rng.IntN(3))*1e9)
					row.Hash(int64(d))
					slots[j] = max(slots[j], d)
					continue
				}
				if rng.IntN(400) == 0 {
					r.Offset = capa - 1024 // out of range: an error
				}
				// Four client threads, eight slots each: a local client's
				// calls queue behind its thread's earlier ones.
				r.Thread = j % 4
				done, err := c.Submit(at, r)
				row.Done(i, at, done, err)
				slots[j] = max(slots[j], done)
				if i%1000 == 0 {
					row.Hash(c.Uncached(models.Request{Op: models.Read, Offset: rng.Int64N(hot/4096) * 4096, Length: 64 << 10}))
				}
			}
			pct := get(c, "cpu_busy_pct")
			// Idle time at the end: the lazy background writeback runs.
			idle := slots[0] + time.Minute
			done, err := c.Submit(idle, models.Request{Op: models.Read, Length: 4096})
			row.Done(n, idle, done, err)
			if err != nil {
				t.Fatal(err)
			}
			// The trace must reach the branches it is meant to pin: a full
			// page cache that evicts, writeback, all cores busy.
			full := c.pc.len() == c.pc.max
			if !cfg.DirectIO && !cfg.Local && (!full || get(c, "page_cache_hits") == 0 || get(c, "writeback_bytes") == 0) {
				t.Errorf("config %d/%d: page cache full %v, hits %v, writeback %v bytes", ci, si, full, get(c, "page_cache_hits"), get(c, "writeback_bytes"))
			}
			if si == 2 && pct < 20 {
				t.Errorf("config %d/%d: cpu busy %.2f%%, want the cores loaded", ci, si, pct)
			}
			name := goldenNames[ci] + "/" + goldenStorage[si]
			runs.Row(append([]string{goldenNames[ci], goldenStorage[si]}, row.Cells()...)...)
			golden.StackCounters(counters, name, c)
		}
	}
	return "# nas: seeded traces over each controller and storage (golden_test.go); latencies in exact µs\n" +
		runs.String() + "\n" + counters.String()
}
