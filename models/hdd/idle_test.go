package hdd

import (
	"sort"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
)

// Idle time is only worth something to data that is already in the buffer.
// These tests let the drive sit idle, then load it, and check the model's
// work against the mechanism: counted up to the completion of a final
// Flush, no workload moves bytes faster than the media can, the head's work
// never overlaps, and no destage step starts before the host write whose
// data it writes had crossed the link (a drive cannot write data it does
// not have yet, however long it was idle before).

// span is one stretch of head work reported by traceHead.
type span struct {
	start, end float64
	a, b       int64
	kind       headWork
}

// hostCmd is when the host issued a read or write and when it completed.
type hostCmd struct{ at, done float64 }

// tracer records a drive's head work and the commands given to it.
type tracer struct {
	d     *Drive
	bs    int64             // block size of the workload: commands are keyed by offset/bs
	cmds  map[int64]hostCmd // first command at each block, by op
	spans []span
}

func newTracer(d *Drive, bs int64) *tracer {
	tr := &tracer{d: d, bs: bs, cmds: map[int64]hostCmd{}}
	d.traceHead = func(start, end float64, a, b int64, kind headWork) {
		tr.spans = append(tr.spans, span{start, end, a, b, kind})
	}
	return tr
}

// key identifies the block at offset off for op (reads and writes apart).
func (tr *tracer) key(op models.Op, off int64) int64 {
	k := off / tr.bs * 2
	if op == models.Write {
		k++
	}
	return k
}

// submit submits r at at and records it, keeping the first read and the
// only write of each block.
func (tr *tracer) submit(t testing.TB, at time.Duration, r models.Request) time.Duration {
	t.Helper()
	done, err := tr.d.Submit(at, r)
	if err != nil {
		t.Fatal(err)
	}
	if done < at {
		t.Fatalf("%v at %v done at %v, before it was issued", r, at, done)
	}
	if r.Op == models.Read || r.Op == models.Write {
		if r.Offset%tr.bs != 0 || r.Length != tr.bs {
			t.Fatalf("%v: not one block of %d bytes", r, tr.bs)
		}
		k := tr.key(r.Op, r.Offset)
		if _, ok := tr.cmds[k]; ok && r.Op == models.Write {
			t.Fatalf("%v: block written twice, the check needs one write per block", r)
		}
		if _, ok := tr.cmds[k]; !ok {
			tr.cmds[k] = hostCmd{float64(at), float64(done)}
		}
	}
	return done
}

// check verifies the head's work: spans in time order never overlap; a
// destage step starts only once every host write whose data it carries was
// acknowledged (its data was in the buffer); a media read starts only after
// a host read of its range had arrived and been decoded.
func (tr *tracer) check(t *testing.T) {
	t.Helper()
	spans := append([]span(nil), tr.spans...)
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	const tol = 1 // ns: completions are rounded to whole ns
	ovh := float64(tr.d.cfg.Overhead)
	bad := 0
	fail := func(format string, args ...any) {
		if bad++; bad <= 5 {
			t.Errorf(format, args...)
		}
	}
	for i, s := range spans {
		if s.end < s.start {
			fail("head work %+v ends before it starts", s)
		}
		if i > 0 && s.start < spans[i-1].end-tol {
			fail("head work %+v overlaps %+v", s, spans[i-1])
		}
		switch s.kind {
		case workDestage:
			for blk := s.a / tr.bs * tr.bs; blk < s.b; blk += tr.bs {
				w, ok := tr.cmds[tr.key(models.Write, blk)]
				if !ok {
					fail("destage of [%d, %d) at %.0f: no host write to block %d", s.a, s.b, s.start, blk)
				} else if s.start < w.done-tol {
					fail("destage of [%d, %d) starts at %.3f ms, before the write carrying block %d (issued %.3f ms) had its data in the buffer at %.3f ms",
						s.a, s.b, s.start/1e6, blk, w.at/1e6, w.done/1e6)
				}
			}
		case workRead:
			if r, ok := tr.cmds[tr.key(models.Read, s.a)]; ok && s.start < r.at+ovh-tol {
				fail("media read of [%d, %d) at %.3f ms, before the read issued at %.3f ms was decoded", s.a, s.b, s.start/1e6, r.at/1e6)
			}
		}
	}
	if bad > 5 {
		t.Errorf("… %d violations in all", bad)
	}
}

// headTime is a lower bound of the time the head has spent on media
// commands and destaging: positioning plus transfer at the outer zone's
// (fastest) rate.
func headTime(d *Drive) float64 {
	nsPerByte := 1e3 / d.cfg.OuterMBps
	return d.seekNs + d.rotNs + float64(d.mediaBytesRead+d.mediaBytesWritten)*nsPerByte
}

// writesAfterIdle runs n writes from next at depth qd from time idle on a
// drive that served one read at time 0, then a Flush. It returns
// the rate acknowledged, the rate counted to the Flush's completion, and
// the time from idle to that completion.
func writesAfterIdle(t *testing.T, tr *tracer, qd, n int, idle time.Duration, next func(int) models.Request) (acked, flushed float64, el time.Duration) {
	t.Helper()
	d := tr.d
	d.Submit(0, models.Request{Op: models.Read, Offset: 1 << 30, Length: 4096})
	busy0 := headTime(d)
	slots := make([]time.Duration, qd)
	for k := range slots {
		slots[k] = idle
	}
	var last time.Duration
	var bytes int64
	for i := range n {
		j := i % qd
		r := next(i)
		slots[j] = tr.submit(t, slots[j], r)
		last = max(last, slots[j])
		bytes += r.Length
	}
	fl := tr.submit(t, last, models.Request{Op: models.Flush})
	el = fl - idle
	// The head's work on this burst fits between the first write's arrival
	// and the Flush's completion.
	if busy := headTime(d) - busy0; busy > float64(el)+1 {
		t.Errorf("idle %v qd %d: the head worked %.3f s for writes that all arrived and were flushed within %.3f s",
			idle, qd, busy/1e9, el.Seconds())
	}
	return float64(bytes) / (last - idle).Seconds() / 1e6, float64(bytes) / el.Seconds() / 1e6, el
}

// Sequential writes after an idle period run at the media rate, not faster:
// everything must be on the media by the Flush, and the buffer is empty when
// the burst begins.
func TestSequentialWritesAfterIdle(t *testing.T) {
	c := wdRed1TB()
	cd := c.withDefaults()
	busyStart := map[int]float64{}
	for _, idle := range []time.Duration{0, 5 * time.Second} {
		for _, qd := range []int{1, 8} {
			tr := newTracer(newDrive(t, c), mib)
			acked, flushed, el := writesAfterIdle(t, tr, qd, 3000, idle, sequential(models.Write, 0, mib))
			t.Logf("idle %v qd %d: 3000 × 1 MiB sequential writes %.1f MB/s acknowledged, %.1f MB/s to the Flush",
				idle, qd, acked, flushed)
			// The burst starts in the outermost zone: 150 MB/s is all the
			// media can take, and the Flush leaves nothing in the buffer.
			if flushed > c.OuterMBps*1.001 {
				t.Errorf("idle %v qd %d: %.1f MB/s to the Flush, faster than the media's %.0f MB/s", idle, qd, flushed, c.OuterMBps)
			}
			if limit := c.OuterMBps + float64(cd.CacheSize)/el.Seconds()/1e6; acked > limit {
				t.Errorf("idle %v qd %d: %.1f MB/s acknowledged, over the media rate plus the buffer (%.1f MB/s)", idle, qd, acked, limit)
			}
			// Nor slower: the cache keeps the head streaming.
			if flushed < 0.95*c.OuterMBps {
				t.Errorf("idle %v qd %d: %.1f MB/s to the Flush, want the media's %.0f MB/s within 5%%", idle, qd, flushed, c.OuterMBps)
			}
			// Idling with an empty buffer gains nothing.
			if idle == 0 {
				busyStart[qd] = flushed
			} else if flushed > busyStart[qd]*1.02 {
				t.Errorf("qd %d: %.1f MB/s to the Flush after idling, %.1f without", qd, flushed, busyStart[qd])
			}
			tr.check(t)
		}
	}
}

// distinctRandom returns random-looking block-aligned requests over the
// whole drive, no block twice (a multiplicative walk of the blocks).
func distinctRandom(op models.Op, capacity, bs int64, seed uint64) func(int) models.Request {
	blocks := capacity / bs
	const stride = 2_654_435_761 // odd and prime: every block once per lap when gcd with blocks is 1
	return func(i int) models.Request {
		k := (int64(seed) + int64(i)*stride) % blocks
		return models.Request{Op: op, Offset: k * bs, Length: bs}
	}
}

// Random writes after an idle period gain nothing from it either: the
// reordering buffer is empty when they begin. The head's time spent on them
// fits between their arrival and the Flush, and they run no faster than
// without the idle period.
func TestRandomWritesAfterIdle(t *testing.T) {
	c := wdRed1TB()
	for _, qd := range []int{1, 8} {
		var iops [2]float64
		for k, idle := range []time.Duration{0, 5 * time.Second} {
			tr := newTracer(newDrive(t, c), 4*kib)
			_, _, el := writesAfterIdle(t, tr, qd, 3000, idle, distinctRandom(models.Write, int64(c.Capacity), 4*kib, 11))
			iops[k] = 3000 / el.Seconds()
			tr.check(t)
		}
		t.Logf("qd %d: random 4 KiB writes %.1f IOPS to the Flush from a busy start, %.1f after 5 s idle", qd, iops[0], iops[1])
		if iops[1] > iops[0]*1.03 {
			t.Errorf("qd %d: %.1f IOPS after idling, %.1f without: idle time before the writes was spent on them", qd, iops[1], iops[0])
		}
	}
}

// A burst submitted all at once queues on the link: the drive cannot start
// destaging a write whose data is still arriving, even with more writes in
// flight than it keeps track of.
func TestBurstOnTheLink(t *testing.T) {
	c := wdRed1TB()
	for _, n := range []int{32, 3 * arrivalRing} {
		tr := newTracer(newDrive(t, c), 64*kib)
		d := tr.d
		d.Submit(0, models.Request{Op: models.Read, Offset: 1 << 30, Length: 4096})
		idle := 5 * time.Second
		var last time.Duration
		for i := range n {
			last = max(last, tr.submit(t, idle, models.Request{Op: models.Write, Offset: int64(i) * 64 * kib, Length: 64 * kib}))
		}
		fl := tr.submit(t, last, models.Request{Op: models.Flush})
		bytes := float64(int64(n) * 64 * kib)
		link := bytes / (interfaceMBps[d.cfg.Interface] * 1e6)
		t.Logf("%d × 64 KiB at once after idling: acknowledged in %.2f ms (link %.2f ms), flushed in %.2f ms (media ≥ %.2f ms)",
			n, (last-idle).Seconds()*1e3, link*1e3, (fl-idle).Seconds()*1e3, bytes/(c.OuterMBps*1e6)*1e3)
		if got := (fl - idle).Seconds(); got < bytes/(c.OuterMBps*1e6) {
			t.Errorf("%d writes flushed in %.2f ms, faster than the media", n, got*1e3)
		}
		if got := (last - idle).Seconds(); got < link {
			t.Errorf("%d writes acknowledged in %.2f ms, faster than the link", n, got*1e3)
		}
		tr.check(t)
	}
}

// Reads after idle gaps, alone and interleaved with writes: read-ahead done
// in an idle gap is real (the data was on the platter), but the media never
// delivers faster than its rate, and the head's work stays causal.
func TestReadsAfterIdleGaps(t *testing.T) {
	c := wdRed1TB()
	cd := c.withDefaults()
	for _, qd := range []int{1, 8} {
		// Sequential reads continuing the read made before the idle period,
		// so its read-ahead is in the buffer.
		tr := newTracer(newDrive(t, c), mib)
		d := tr.d
		d.Submit(0, models.Request{Op: models.Read, Offset: 1 << 30, Length: mib})
		busy0 := headTime(d)
		idle := 5 * time.Second
		slots := make([]time.Duration, qd)
		for k := range slots {
			slots[k] = idle
		}
		var last time.Duration
		n := 1000
		for i := range n {
			j := i % qd
			slots[j] = tr.submit(t, slots[j], models.Request{Op: models.Read, Offset: 1<<30 + int64(i+1)*mib, Length: mib})
			last = max(last, slots[j])
		}
		el := (last - idle).Seconds()
		rate := float64(int64(n)*mib) / el / 1e6
		limit := c.OuterMBps + float64(cd.ReadAhead)/el/1e6
		t.Logf("qd %d: sequential 1 MiB reads after idling %.1f MB/s (limit %.1f)", qd, rate, limit)
		if rate > limit || rate < 0.9*c.OuterMBps {
			t.Errorf("qd %d: sequential reads after idling %.1f MB/s, want the media rate, at most plus the read-ahead, %.1f", qd, rate, limit)
		}
		if busy := headTime(d) - busy0; busy > float64(last-idle)+1 {
			t.Errorf("qd %d: the head worked %.3f s on reads answered within %.3f s", qd, busy/1e9, el)
		}
		tr.check(t)

		// Phases of mixed reads and writes separated by idle gaps, ending
		// with a Flush. Writes go to one region, reads to another.
		tr = newTracer(newDrive(t, c), mib)
		d = tr.d
		var wOff, rOff int64 = 0, 100 << 30
		at := time.Duration(0)
		var bytes int64
		var gaps time.Duration
		for phase := range 8 {
			gap := time.Duration(phase%3) * 400 * time.Millisecond
			gaps += gap
			at += gap
			for k := range slots {
				slots[k] = at
			}
			for i := range 200 {
				r := models.Request{Op: models.Read, Offset: rOff, Length: mib}
				if i%3 != 0 {
					r = models.Request{Op: models.Write, Offset: wOff, Length: mib}
					wOff += mib
				} else {
					rOff += mib
				}
				j := i % qd
				slots[j] = tr.submit(t, slots[j], r)
				at = max(at, slots[j])
				bytes += mib
			}
		}
		fl := tr.submit(t, at, models.Request{Op: models.Flush})
		// Every byte crossed the media in this run, none before it began;
		// the gaps' idle time may be spent only on data written before them.
		if busy := headTime(d); busy > float64(fl) {
			t.Errorf("qd %d: the head worked %.3f s in a run of %.3f s", qd, busy/1e9, fl.Seconds())
		}
		if busy := headTime(d); busy < float64(fl-gaps)*0.5 {
			t.Errorf("qd %d: the head worked only %.3f s of %.3f s busy", qd, busy/1e9, (fl - gaps).Seconds())
		}
		t.Logf("qd %d: mixed phases with idle gaps: %.1f MB/s outside the gaps, head busy ≥ %.2f s of %.2f s",
			qd, float64(bytes)/(fl-gaps).Seconds()/1e6, headTime(d)/1e9, fl.Seconds())
		tr.check(t)
	}
}
