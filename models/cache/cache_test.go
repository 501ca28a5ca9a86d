package cache

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/devicetest"
	"github.com/nasemu/nasemu/models/fixed"
)

// ssd is a fast fixed device: 4 parallel units, 50 µs + 500 MB/s per
// request.
func ssd(t testing.TB) *fixed.Device {
	d, err := fixed.New(fixed.Config{Capacity: models.GiB, Units: 4, Read: 50 * time.Microsecond, Write: 50 * time.Microsecond, BytesPerSecond: 500e6})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// hddArray is an HDD-like array: 4 spindles, 8 ms per random access plus
// 150 MB/s of transfer.
func hddArray(t testing.TB) *fixed.Device {
	d, err := fixed.New(fixed.Config{Capacity: 16 * models.GiB, Units: 4, Read: 8 * time.Millisecond, Write: 4 * time.Millisecond, BytesPerSecond: 150e6})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func counter(d models.Device, name string) float64 {
	v, _ := models.Sum(d, name)
	return v
}

func own(tr *Tier, name string) float64 {
	for _, c := range tr.Counters() {
		if c.Name == name {
			return c.Value
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

// series bins completions into intervals of width w and returns MB/s per
// bin for requests of size bs.
func series(dones []time.Duration, start, w time.Duration, bs int64) []float64 {
	var out []float64
	for _, d := range dones {
		i := int((d - start) / w)
		for len(out) <= i {
			out = append(out, 0)
		}
		out[i] += float64(bs)
	}
	for i := range out {
		out[i] /= w.Seconds() * 1e6
	}
	return out
}

// A read-write cache absorbs a burst of random 64 KiB writes at SSD speed
// until its dirty limit is reached, then runs at the array's speed: the
// flushes' rate, 4 spindles / (4 ms + 64 KiB at 150 MB/s) = 59.1 MB/s.
func TestWriteBurstAbsorbedThenArraySpeed(t *testing.T) {
	a, b := ssd(t), ssd(t)
	arr := hddArray(t)
	tr, err := New(Config{Mode: ReadWrite, Capacity: models.Bytes(256 * models.MiB)}, []models.Device{a, b}, arr)
	if err != nil {
		t.Fatal(err)
	}
	const bs = 64 * models.KiB
	const n = 8192 // 512 MiB
	perm := rand.New(rand.NewPCG(1, 2)).Perm(int(8 * models.GiB / bs))
	dones := closedLoop(t, tr, 0, 8, n, func(i int) models.Request {
		return models.Request{Op: models.Write, Offset: int64(perm[i]) * bs, Length: bs}
	})
	s := series(dones, 0, 50*time.Millisecond, bs)
	t.Logf("MB/s per 50 ms: %.0f", s)
	// SSD phase: two mirrored SSDs each take every write and, since each
	// write dirties a clean block, its metadata update after it: at best
	// 4 units / (50 µs + 131 µs + 50 µs + 8 µs) = 1.10 GB/s, less the
	// flush reads and the unit time the calendars leave in gaps in front
	// of each metadata write (about 0.74 GB/s); an order of magnitude
	// above the array either way.
	if s[0] < 600 || s[0] > 1100 {
		t.Errorf("first 50 ms at %.0f MB/s, want SSD speed (600-1100)", s[0])
	}
	if md := own(tr, "cache_metadata_writes"); md < n {
		t.Errorf("%.0f metadata writes for %d writes that each dirtied a clean block", md, n)
	}
	// The limit (128 MiB dirty) is reached after about 128 MiB / 1.4 GB/s
	// ≈ 0.1 s. From then on, writes run at the flush rate: the array's
	// 59.1 MB/s, a little less because each of the 4 flush lanes reads its
	// block from an SSD (181 µs) before writing it to the array (4.44 ms),
	// 56.8 MB/s.
	want := 4 / (4e-3 + float64(bs)/150e6) * float64(bs) / 1e6
	tail := s[len(s)-20 : len(s)-1]
	var sum float64
	for _, v := range tail {
		sum += v
	}
	got := sum / float64(len(tail))
	t.Logf("steady %.1f MB/s, array %.1f MB/s", got, want)
	if got < want*0.9 || got > want*1.1 {
		t.Errorf("steady-state write rate %.1f MB/s, want the array's %.1f ±10%%", got, want)
	}
	dirty := own(tr, "cache_dirty_bytes")
	if dirty > 128*float64(models.MiB) || dirty < 120*float64(models.MiB) {
		t.Errorf("dirty %.0f MiB, want at the 128 MiB limit", dirty/float64(models.MiB))
	}
	if counter(a, "host_bytes_written") != counter(b, "host_bytes_written") {
		t.Error("mirrors received different writes")
	}
	if fl := own(tr, "cache_flushed_bytes"); fl < float64(n*bs)-dirty-float64(bs)*8 {
		t.Errorf("flushed %.0f MiB of %d MiB written with %.0f MiB dirty", fl/float64(models.MiB), n*bs/models.MiB, dirty/float64(models.MiB))
	}
	// Idle time drains the cache: a read far later finds nothing dirty.
	if _, err := tr.Submit(dones[n-1]+time.Minute, models.Request{Op: models.Read, Offset: 0, Length: 4096}); err != nil {
		t.Fatal(err)
	}
	if d := own(tr, "cache_dirty_bytes"); d != 0 {
		t.Errorf("after a minute idle %.0f bytes are still dirty", d)
	}
}

// A read-only cache serves a working set that fits at SSD speed after the
// first pass; a large sequential read bypasses it.
func TestReadOnlyWorkingSetAndBypass(t *testing.T) {
	drive, arr := ssd(t), hddArray(t)
	tr, err := New(Config{}, []models.Device{drive}, arr)
	if err != nil {
		t.Fatal(err)
	}
	const bs = 4 * models.KiB
	const pages = 4096 // 16 MiB working set
	perm := rand.New(rand.NewPCG(3, 4)).Perm(pages)
	req := func(i int) models.Request {
		return models.Request{Op: models.Read, Offset: int64(perm[i%pages]) * bs, Length: bs}
	}
	first := closedLoop(t, tr, 0, 4, pages, req)
	end1 := first[pages-1]
	iops1 := pages / end1.Seconds()
	if h := own(tr, "cache_hits"); h != 0 {
		t.Errorf("first pass: %v hits", h)
	}
	second := closedLoop(t, tr, end1, 4, pages, req)
	iops2 := pages / (second[pages-1] - end1).Seconds()
	t.Logf("first pass %.0f IOPS (array), second pass %.0f IOPS (SSD)", iops1, iops2)
	// Array: 4 units / 8.03 ms = 498 IOPS. SSD: 4 units / 58 µs = 68.6k.
	if iops1 < 450 || iops1 > 520 {
		t.Errorf("first pass %.0f IOPS, want the array's ~498", iops1)
	}
	if want := 4 / (50e-6 + 4096/500e6); iops2 < want*0.95 || iops2 > want*1.01 {
		t.Errorf("second pass %.0f IOPS, want the SSD's %.0f", iops2, want)
	}
	if h := own(tr, "cache_hits"); h != pages {
		t.Errorf("second pass: %v hits, want %d", h, pages)
	}

	// A 256 MiB sequential read in 128 KiB requests: the stream bypasses the
	// cache once it has run 1 MiB.
	hits, byp := own(tr, "cache_hits"), own(tr, "cache_bypassed_bytes")
	start := second[pages-1]
	const big = 128 * models.KiB
	closedLoop(t, tr, start, 1, 2048, func(i int) models.Request {
		return models.Request{Op: models.Read, Offset: models.GiB + int64(i)*big, Length: big}
	})
	if h := own(tr, "cache_hits") - hits; h != 0 {
		t.Errorf("sequential read: %v hits", h)
	}
	if b := own(tr, "cache_bypassed_bytes") - byp; b < float64(256*models.MiB-models.MiB) {
		t.Errorf("sequential read bypassed %.1f MiB of 256", b/float64(models.MiB))
	}
}

// Writes to a read-only cache go around it and invalidate the cached copy.
func TestReadOnlyWriteInvalidates(t *testing.T) {
	tr, err := New(Config{}, []models.Device{ssd(t)}, hddArray(t))
	if err != nil {
		t.Fatal(err)
	}
	r := models.Request{Op: models.Read, Offset: 8192, Length: 4096}
	d1, _ := tr.Submit(0, r)
	d2, _ := tr.Submit(d1+time.Millisecond, r)
	if own(tr, "cache_hits") != 1 || d2-d1-time.Millisecond > time.Millisecond {
		t.Fatalf("second read not a fast hit: %v", d2-d1)
	}
	w, _ := tr.Submit(d2, models.Request{Op: models.Write, Offset: 8192, Length: 4096})
	if w-d2 < 4*time.Millisecond {
		t.Errorf("write took %v: it should go to the array", w-d2)
	}
	tr.Submit(w, r)
	if own(tr, "cache_misses") != 2 {
		t.Errorf("read after write: %v misses, want 2", own(tr, "cache_misses"))
	}
}

// Runs are deterministic and accept submissions out of time order; results
// never complete before they are issued.
func TestDeterministicOutOfOrder(t *testing.T) {
	run := func() []time.Duration {
		tr, err := New(Config{Mode: ReadWrite, Capacity: models.Bytes(32 * models.MiB)}, []models.Device{ssd(t), ssd(t)}, hddArray(t))
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(7, 7))
		var out []time.Duration
		for i := 0; i < 20000; i++ {
			at := time.Duration(rng.IntN(int(time.Second)))
			op := models.Read
			if rng.IntN(2) == 0 {
				op = models.Write
			}
			r := models.Request{Op: op, Offset: int64(rng.IntN(4096)) * 16 * models.KiB, Length: 16 * models.KiB}
			done, err := tr.Submit(at, r)
			if err != nil {
				t.Fatal(err)
			}
			if done < at {
				t.Fatalf("%v at %v done at %v", r, at, done)
			}
			out = append(out, done)
		}
		if d := own(tr, "cache_dirty_bytes"); d < 0 || d > 16*float64(models.MiB) {
			t.Errorf("dirty bytes %v outside [0, limit]", d)
		}
		return out
	}
	a, b := run(), run()
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("run differs at %d: %v vs %v", i, a[i], b[i])
		}
	}
}

// A flush makes the cache drives durable (they hold the dirty data) and
// the array only when writes went to it directly since its last flush.
func TestFlushAndFileOps(t *testing.T) {
	arr, _ := fixed.New(fixed.Config{Capacity: 16 * models.GiB, Units: 1, Write: 4 * time.Millisecond, Other: 20 * time.Millisecond})
	drive := func() models.Device {
		d, _ := fixed.New(fixed.Config{Capacity: models.GiB, Units: 1, Write: 50 * time.Microsecond, Other: time.Millisecond})
		return d
	}
	tr, err := New(Config{Mode: ReadWrite}, []models.Device{drive(), drive()}, arr)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := tr.Submit(0, models.Request{Op: models.Write, Offset: 0, Length: 4096})
	if d, _ := tr.Submit(time.Millisecond, models.Request{Op: models.Create}); d != time.Millisecond {
		t.Errorf("create took %v on a block device", d-time.Millisecond)
	}
	f, err := tr.Submit(w, models.Request{Op: models.Flush})
	if err != nil {
		t.Fatal(err)
	}
	if f-w != time.Millisecond {
		t.Errorf("flush after a cached write took %v, want the SSDs' 1ms", f-w)
	}
	// A large write bypasses the cache: the next flush must reach the array.
	b, _ := tr.Submit(f, models.Request{Op: models.Write, Offset: models.GiB, Length: 4 << 20})
	f2, _ := tr.Submit(b, models.Request{Op: models.Flush})
	if f2-b < 20*time.Millisecond {
		t.Errorf("flush after a bypassed write took %v, want the array's 20ms", f2-b)
	}
	if _, err := tr.Submit(0, models.Request{Op: models.Read, Offset: 16 * models.GiB, Length: 1}); !errors.Is(err, models.ErrOutOfRange) {
		t.Errorf("read beyond capacity: %v", err)
	}
	if len(tr.Children()) != 3 {
		t.Errorf("children %d, want 3", len(tr.Children()))
	}
}

func TestConfigValidate(t *testing.T) {
	bad := []Config{
		{Mode: "write-around"},
		{Block: 3000},
		{Block: 8192 + 4096},
		{DirtyLimit: 1.5},
		{DirtyLimit: -0.1},
		{FlushDepth: -1},
		{Capacity: 100},
	}
	for _, c := range bad {
		if err := c.Validate(); !errors.Is(err, models.ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", c, err)
		}
	}
	if err := (Config{}).Validate(); err != nil {
		t.Error(err)
	}
	d := Config{}.WithDefaults()
	if d.Mode != ReadOnly || d.Block != 64<<10 || d.DirtyLimit != 0.5 || d.SequentialBypass != 1<<20 || d.FlushDepth != 4 || d.Streams != 8 {
		t.Errorf("defaults changed: %+v", d)
	}
	if _, err := New(Config{Capacity: models.Bytes(2 * models.GiB)}, []models.Device{ssd(t)}, hddArray(t)); !errors.Is(err, models.ErrConfig) {
		t.Errorf("capacity beyond the drive: %v", err)
	}
	if _, err := New(Config{}, nil, hddArray(t)); !errors.Is(err, models.ErrConfig) {
		t.Errorf("no drives: %v", err)
	}
}

func BenchmarkSubmit(b *testing.B) {
	for _, mode := range []string{ReadOnly, ReadWrite} {
		b.Run(fmt.Sprintf("mode=%s", mode), func(b *testing.B) {
			tr, err := New(Config{Mode: mode, Capacity: models.Bytes(64 * models.MiB)}, []models.Device{ssd(b), ssd(b)}, hddArray(b))
			if err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 1))
			// Warm up: fill the table so that it no longer grows.
			var at time.Duration
			for i := 0; i < 1<<16; i++ {
				at += 10 * time.Microsecond
				tr.Submit(at, models.Request{Op: models.Op(i & 1), Offset: int64(rng.IntN(1<<16)) * 4 * models.KiB, Length: 4 * models.KiB})
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				at += 10 * time.Microsecond
				if _, err := tr.Submit(at, models.Request{Op: models.Op(i & 1), Offset: int64(rng.IntN(1<<16)) * 4 * models.KiB, Length: 4 * models.KiB}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ios/s")
		})
	}
}
