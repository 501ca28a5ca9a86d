package hdd

import (
	"errors"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
)

const (
	kib = int64(1) << 10
	mib = int64(1) << 20
)

// Sequential 1 MiB reads at QD1 run at the datasheet's sustained rate at
// the outer edge and at about half of it at the inner edge: read-ahead
// keeps the head streaming between requests.
func TestSequentialReadZones(t *testing.T) {
	c := wdRed1TB()
	for _, tc := range []struct {
		name string
		base int64
		want float64
	}{
		{"outer", 0, 150},
		{"inner", int64(c.Capacity) - 512*mib, 75},
	} {
		d := newDrive(t, c)
		res := closedLoop(t, d, 1, 256, 0, sequential(models.Read, tc.base, mib))
		t.Logf("%s: %.1f MB/s (want %.0f ±10%%)", tc.name, res.mbps(), tc.want)
		if !within(res.mbps(), tc.want, 0.10) {
			t.Errorf("%s: %.1f MB/s, want %.0f ±10%%", tc.name, res.mbps(), tc.want)
		}
		if hits := counter(d, "cache_read_hits"); hits < 200 {
			t.Errorf("%s: %v read-ahead hits of 256 reads", tc.name, hits)
		}
	}
}

// Without read-ahead (no cache), every sequential read arrives just after
// its first sector passed and waits a revolution: the physics read-ahead
// exists to hide.
func TestSequentialWithoutCacheLosesRevolutions(t *testing.T) {
	c := wdRed1TB()
	d := newDrive(t, c)
	d.segs, d.ranges = nil, nil // no read segments, so no read-ahead
	const bs = 64 * kib
	res := closedLoop(t, d, 1, 200, 0, sequential(models.Read, 0, bs))
	rev := 60 / c.RPM
	per := rev + float64(bs)/150e6 // the overhead, then the rest of the revolution, then the transfer
	want := float64(bs) / per / 1e6
	t.Logf("no cache, 64 KiB sequential: %.1f MB/s (one revolution per request: %.1f)", res.mbps(), want)
	if !within(res.mbps(), want, 0.10) {
		t.Errorf("%.1f MB/s, want ≈ %.1f (a lost revolution per request)", res.mbps(), want)
	}
}

// 4 KiB random reads over the whole drive at QD1 run at 1/(average seek +
// half a revolution + overhead).
func TestRandomReadQD1(t *testing.T) {
	for name, c := range map[string]Config{"wd-red-1tb": wdRed1TB(), "exos-x18": exosX18()} {
		d := newDrive(t, c)
		res := closedLoop(t, d, 1, 20000, 0, randomReads(3, 4*kib, int64(c.Capacity)))
		want := qd1Expect(c)
		t.Logf("%s: QD1 %.1f IOPS, analytic %.1f", name, res.iops(), want)
		if !within(res.iops(), want, 0.10) {
			t.Errorf("%s: QD1 %.1f IOPS, want %.1f ±10%%", name, res.iops(), want)
		}
		seekMean := counter(d, "seek_time_ms_total") / counter(d, "seeks")
		if !within(seekMean, c.AvgSeek.Seconds()*1e3, 0.03) {
			t.Errorf("%s: mean seek %.2f ms, want %v", name, seekMean, c.AvgSeek)
		}
	}
}

// NCQ at QD32 over the full span gains what SPTF gains.
func TestRandomReadNCQGain(t *testing.T) {
	c := wdRed1TB()
	q1 := closedLoop(t, newDrive(t, c), 1, 10000, 0, randomReads(5, 4*kib, int64(c.Capacity)))
	for _, qd := range []int{4, 32} {
		d := newDrive(t, c)
		res := closedLoop(t, d, qd, 20000, 0, randomReads(5, 4*kib, int64(c.Capacity)))
		t.Logf("QD%d: %.1f IOPS = %.2f × QD1 (%.1f)", qd, res.iops(), res.iops()/q1.iops(), q1.iops())
		if qd == 32 && res.iops() < 1.5*q1.iops() {
			t.Errorf("QD32 %.1f IOPS, want ≥ 1.5 × QD1 %.1f", res.iops(), q1.iops())
		}
		if got := counter(d, "queue_depth_max"); got != float64(qd) {
			t.Errorf("QD%d: queue_depth_max %v", qd, got)
		}
	}
	// queue_depth 1 turns reordering off: QD32 runs at the QD1 rate.
	c.QueueDepth = 1
	res := closedLoop(t, newDrive(t, c), 32, 10000, 0, randomReads(5, 4*kib, int64(c.Capacity)))
	if !within(res.iops(), q1.iops(), 0.05) {
		t.Errorf("NCQ off: QD32 %.1f IOPS, want the QD1 %.1f", res.iops(), q1.iops())
	}
}

// Sequential writes with the write cache on run at the sustained rate once
// the buffer is full; a Flush waits until the buffer is on the media.
func TestWriteCache(t *testing.T) {
	c := wdRed1TB()
	d := newDrive(t, c)
	res := closedLoop(t, d, 1, 512, 0, sequential(models.Write, 0, mib))
	drained, err := d.Submit(res.elapsed, models.Request{Op: models.Flush})
	if err != nil {
		t.Fatal(err)
	}
	mediaRate := 512 * float64(mib) / 1e6 / drained.Seconds()
	t.Logf("sequential 1 MiB writes, cache on: %.1f MB/s acknowledged, %.1f MB/s to the media", res.mbps(), mediaRate)
	// Acknowledged: the media rate plus what the 64 MiB buffer holds back
	// at the end; to the media (counting the Flush): the sustained rate.
	ack := 150 + float64(64*mib)/1e6/res.elapsed.Seconds()
	if res.mbps() > ack*1.01 || res.mbps() < 150*0.9 {
		t.Errorf("%.1f MB/s acknowledged, want between 135 and %.1f", res.mbps(), ack)
	}
	if !within(mediaRate, 150, 0.10) {
		t.Errorf("%.1f MB/s to the media, want the sustained 150 ±10%%", mediaRate)
	}
	if got := counter(d, "cache_write_absorbed"); got != 512 {
		t.Errorf("cache_write_absorbed %v, want 512", got)
	}

	// A burst smaller than the buffer is acknowledged at link speed; the
	// Flush after it waits for the media.
	d = newDrive(t, c)
	burst := int64(32)
	res = closedLoop(t, d, 1, int(burst), 0, sequential(models.Write, 0, mib))
	media := time.Duration(float64(burst*mib) / 150e6 * float64(time.Second))
	flushed, err := d.Submit(res.elapsed, models.Request{Op: models.Flush})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("32 MiB burst acknowledged in %v, flushed at %v (media time %v)", res.elapsed, flushed, media)
	if res.elapsed > media/2 {
		t.Errorf("burst took %v: not absorbed by the cache (media would take %v)", res.elapsed, media)
	}
	if flushed < media || flushed > media*12/10 {
		t.Errorf("flush done at %v, want ≈ the media time %v", flushed, media)
	}
	if got := counter(d, "write_cache_dirty_bytes"); got != 0 {
		t.Errorf("%v dirty bytes after flush", got)
	}
	if got := counter(d, "media_bytes_written"); got != float64(burst*mib) {
		t.Errorf("media_bytes_written %v, want %d", got, burst*mib)
	}
	// A second Flush has nothing to wait for.
	again, _ := d.Submit(flushed, models.Request{Op: models.Flush})
	if again != flushed+c.withDefaults().Overhead {
		t.Errorf("second flush done at %v, want %v", again, flushed+c.withDefaults().Overhead)
	}

	// With the cache off, sequential QD1 writes lose a revolution each.
	c.WriteCacheDisabled = true
	d = newDrive(t, c)
	res = closedLoop(t, d, 1, 64, 0, sequential(models.Write, 0, mib))
	t.Logf("write cache off: %.1f MB/s", res.mbps())
	if res.mbps() > 0.7*150 {
		t.Errorf("write cache off: %.1f MB/s, want revolutions lost between writes", res.mbps())
	}
}

// Cached random writes are destaged cheapest-first, so the drive sustains
// more random writes than random reads at QD1.
func TestWriteCacheReordersRandomWrites(t *testing.T) {
	c := wdRed1TB()
	reads := closedLoop(t, newDrive(t, c), 1, 4000, 0, randomReads(9, 4*kib, int64(c.Capacity)))
	gen := randomReads(9, 4*kib, int64(c.Capacity))
	d := newDrive(t, c)
	writes := closedLoop(t, d, 1, 4000, 0, func(i int) models.Request {
		r := gen(i)
		r.Op = models.Write
		return r
	})
	t.Logf("random 4 KiB QD1: reads %.1f IOPS, cached writes %.1f IOPS", reads.iops(), writes.iops())
	if writes.iops() < 1.5*reads.iops() {
		t.Errorf("cached random writes %.1f IOPS, want well above reads %.1f", writes.iops(), reads.iops())
	}
}

// A SATA 3 Gb/s port caps a fast drive's cache hits and media rate.
func TestInterfaceCap(t *testing.T) {
	c := exosX18()
	c.Interface = "sata-3g"
	d := newDrive(t, c)
	res := closedLoop(t, d, 1, 256, 0, sequential(models.Read, 0, mib))
	t.Logf("Exos X18 on SATA 3 Gb/s: %.1f MB/s", res.mbps())
	if res.mbps() > 275*1.01 || res.mbps() < 250 {
		t.Errorf("%.1f MB/s, want the 275 MB/s link cap", res.mbps())
	}
	// Re-reading the same 1 MiB is a cache hit at link speed.
	hit := closedLoop(t, d, 1, 100, time.Hour, func(int) models.Request {
		return models.Request{Op: models.Read, Offset: 0, Length: mib}
	})
	if !within(hit.mbps(), 275*float64(mib)/(float64(mib)+275e6*c.withDefaults().Overhead.Seconds()), 0.02) {
		t.Errorf("cache hits at %.1f MB/s, want the link rate less overhead", hit.mbps())
	}
}

// Same configuration and seed: identical completions and counters.
// Different seeds: different spindle phase, so different completions.
func TestDeterministic(t *testing.T) {
	trace := func(seed uint64) ([]time.Duration, []models.Counter) {
		d, err := New(wdRed1TB(), seed)
		if err != nil {
			t.Fatal(err)
		}
		gen := randomReads(11, 4*kib, 1<<34)
		var out []time.Duration
		at := time.Duration(0)
		for i := range 3000 {
			r := gen(i)
			switch i % 5 {
			case 1:
				r.Op = models.Write
			case 2:
				r.Length = 300 * kib
			case 4:
				if i%50 == 4 {
					r = models.Request{Op: models.Flush}
				}
			}
			done, err := d.Submit(at, r)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, done)
			at += time.Duration(i%7) * time.Millisecond
		}
		return out, d.Counters()
	}
	a, ca := trace(42)
	b, cb := trace(42)
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("request %d: %v vs %v with the same seed", i, a[i], b[i])
		}
	}
	for i := range ca {
		if ca[i] != cb[i] {
			t.Fatalf("counter %v vs %v", ca[i], cb[i])
		}
	}
	c, _ := trace(43)
	same := 0
	for i := range a {
		if a[i] == c[i] {
			same++
		}
	}
	if same == len(a) {
		t.Error("a different seed gave the same completions")
	}
}

// Arbitrary offsets and lengths are served; out-of-range and malformed
// requests are refused; submissions out of time order are accepted.
func TestRequests(t *testing.T) {
	c := wdRed1TB()
	c.Capacity = 1 << 30
	d := newDrive(t, c)
	capacity := d.Capacity()
	for _, r := range []models.Request{
		{Op: models.Read, Offset: 1, Length: 1},
		{Op: models.Read, Offset: 12345, Length: 777777},
		{Op: models.Write, Offset: capacity - 3, Length: 3},
		{Op: models.Read, Offset: capacity - 1, Length: 1},
		{Op: models.Read, Offset: 0, Length: 0},
		{Op: models.Write, Offset: 100, Length: capacity - 100}, // larger than the cache
		{Op: models.Trim, Offset: 0, Length: 4096},
		{Op: models.Open},
		{Op: models.Flush},
	} {
		if _, err := d.Submit(time.Second, r); err != nil {
			t.Errorf("%v: %v", r, err)
		}
	}
	for _, tc := range []struct {
		r    models.Request
		want error
	}{
		{models.Request{Op: models.Read, Offset: capacity, Length: 1}, models.ErrOutOfRange},
		{models.Request{Op: models.Write, Offset: capacity - 1, Length: 2}, models.ErrOutOfRange},
		{models.Request{Op: models.Read, Offset: 0, Length: -1}, models.ErrInvalid},
		{models.Request{Op: models.Op(99), Offset: 0, Length: 1}, models.ErrInvalid},
	} {
		if _, err := d.Submit(0, tc.r); !errors.Is(err, tc.want) {
			t.Errorf("%v: error %v, want %v", tc.r, err, tc.want)
		}
	}
	// File ops and Trim complete at once, at no cost.
	for _, op := range []models.Op{models.Open, models.Create, models.Close, models.Remove, models.Stat, models.Trim} {
		if done, _ := d.Submit(7*time.Second, models.Request{Op: op}); done != 7*time.Second {
			t.Errorf("%v done at %v, want at once", op, done)
		}
	}
	// Out of order: a request submitted "in the past" queues behind the
	// head's busy time instead of failing.
	d = newDrive(t, c)
	late, _ := d.Submit(10*time.Second, models.Request{Op: models.Read, Offset: 500 * mib, Length: 4 * kib})
	early, err := d.Submit(time.Second, models.Request{Op: models.Read, Offset: 100 * mib, Length: 4 * kib})
	if err != nil || early < late {
		t.Errorf("earlier submission: done %v, %v; want it queued behind the head's work until %v", early, err, late)
	}
	if late < 10*time.Second {
		t.Errorf("done %v before submission", late)
	}
}

// Submit allocates nothing on the hot path.
func TestSubmitAllocs(t *testing.T) {
	d := newDrive(t, wdRed1TB())
	gen := randomReads(1, 4*kib, 1<<40)
	var at time.Duration
	i := 0
	allocs := testing.AllocsPerRun(2000, func() {
		r := gen(i)
		if i%3 == 0 {
			r.Op = models.Write
		}
		i++
		at, _ = d.Submit(at, r)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per Submit", allocs)
	}
}

func counter(d *Drive, name string) float64 {
	for _, c := range d.Counters() {
		if c.Name == name {
			return c.Value
		}
	}
	panic("no counter " + name)
}
