package ssd

import (
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
)

// suspendTrial writes 32 KiB (one page group on each of the two dies),
// reads 4 KiB of older data 50 µs later while both dies program, and
// writes another 32 KiB and flushes: it returns the read's latency and when
// the flush completes.
func suspendTrial(t *testing.T, suspend time.Duration) (readLat, flushDone time.Duration) {
	t.Helper()
	c := testConfig(64<<20, 1.2)
	c.ProgramSuspend = suspend
	d, err := New(c, 1)
	if err != nil {
		t.Fatal(err)
	}
	must := func(at time.Duration, r models.Request) time.Duration {
		t.Helper()
		done, err := d.Submit(at, r)
		if err != nil {
			t.Fatal(err)
		}
		return done
	}
	must(0, models.Request{Op: models.Write, Offset: 0, Length: 32 << 10})
	must(0, models.Request{Op: models.Flush})
	const t0 = 100 * time.Millisecond // long idle: every die is free
	must(t0, models.Request{Op: models.Write, Offset: 1 << 20, Length: 32 << 10})
	at := t0 + 50*time.Microsecond
	readLat = must(at, models.Request{Op: models.Read, Offset: 0, Length: 4 << 10}) - at
	must(at, models.Request{Op: models.Write, Offset: 2 << 20, Length: 32 << 10})
	flushDone = must(at, models.Request{Op: models.Flush}) - t0
	return readLat, flushDone
}

// TestProgramSuspend: a read that lands on a die busy programming waits
// the whole program (~700 µs, and the rest of its word line) without
// suspend, and with it completes in
// the command overhead + suspend latency + tR (of a lower page) + the channel and link
// transfers. The die still does the read's work: the programs that follow
// end as late as when the read waited (later by at most the suspend
// overhead), so suspend moves reads ahead without creating die time.
func TestProgramSuspend(t *testing.T) {
	const us = time.Microsecond
	const suspend = 20 * us
	waitLat, waitFlush := suspendTrial(t, 0)
	lat, flush := suspendTrial(t, suspend)
	x := transfer(4<<10, 800)                                   // one slot over the 800 MB/s channel
	link := transfer(4<<10, nvmeReadMBps)                       // and over the host link
	lower := time.Duration(float64(60*us) * pageTypeTime[3][0]) // offset 0: a lower page
	want := 10*us + suspend + lower + x + link
	if lat < want-2*us || lat > want+2*us {
		t.Errorf("read on a programming die with suspend: %v, want %v (overhead + suspend + tR + transfers)", lat, want)
	}
	if waitLat < 700*us {
		t.Errorf("read on a programming die without suspend: %v, want at least the 700 µs program", waitLat)
	}
	if waitFlush < 2*700*us+60*us {
		t.Errorf("without suspend the die programs, reads and programs again: flush at %v, want at least %v", waitFlush, 2*700*us+60*us)
	}
	if d := flush - waitFlush; d < 0 || d > suspend+2*us {
		t.Errorf("programs after a suspending read end %v later than after a waiting read, want 0..%v (the suspend overhead)", d, suspend)
	}
}

// TestEraseOnlySuspend: a die that suspends erases but not programs (as
// MQSim's default die does) serves a read that lands in an erase after the
// erase suspend latency, and a read that lands in a program after the
// program; one that suspends both serves either after its latency.
func TestEraseOnlySuspend(t *testing.T) {
	const us = time.Microsecond
	const tR, x = 60 * us, 5 * us
	read := func(programSuspend, eraseSuspend time.Duration, erase bool) time.Duration {
		t.Helper()
		c := testConfig(64<<20, 1.2)
		c.ProgramSuspend, c.EraseSuspend = programSuspend, eraseSuspend
		d, err := New(c, 1)
		if err != nil {
			t.Fatal(err)
		}
		dd := &d.dies[0]
		const t0 = time.Millisecond
		length := c.ProgramTLC
		if erase {
			length = c.Erase
		}
		s, e := dd.busy.Reserve(t0, length)
		dd.ops.add(dieOp{start: s, end: e, erase: erase})
		return d.hostRead(0, t0+100*us, tR, x) - (t0 + 100*us)
	}
	for _, tc := range []struct {
		name               string
		program, erase     time.Duration
		onErase, onProgram time.Duration
	}{
		{"erase only", 0, 400 * us, 400*us + tR + x, 600*us + tR + x},
		{"program and erase", 20 * us, 400 * us, 400*us + tR + x, 20*us + tR + x},
	} {
		if got := read(tc.program, tc.erase, true); got != tc.onErase {
			t.Errorf("%s: read in an erase takes %v, want %v", tc.name, got, tc.onErase)
		}
		if got := read(tc.program, tc.erase, false); got != tc.onProgram {
			t.Errorf("%s: read in a program takes %v, want %v", tc.name, got, tc.onProgram)
		}
	}
}

// TestReadsGoFirst: a host read on a die with a program in progress and
// more work queued behind it waits for the program in progress only (read
// priority scheduling), and for the rest of the program's word line when
// the program is one of its page groups; the die still does the read's
// work, in its next idle time.
func TestReadsGoFirst(t *testing.T) {
	const us = time.Microsecond
	const tR, x = 60 * us, 5 * us
	const t0, p = time.Millisecond, 700 * us
	for _, tc := range []struct {
		name string
		rest time.Duration // the word line's later page groups
	}{
		{"single page group", 0},
		{"first of three page groups", 2 * p},
	} {
		c := testConfig(64<<20, 1.2)
		d, err := New(c, 1)
		if err != nil {
			t.Fatal(err)
		}
		dd := &d.dies[0]
		for i := range 4 { // four programs queued back to back
			s, e := dd.busy.Reserve(t0+time.Duration(i)*p, p)
			dd.ops.add(dieOp{start: s, end: e, rest: max(tc.rest-time.Duration(i)*p, 0)})
		}
		at := t0 + 100*us
		got := d.hostRead(0, at, tR, x) - at
		if want := p - 100*us + tc.rest + tR + x; got != want {
			t.Errorf("%s: read takes %v, want %v (the program in progress, its word line, tR and the transfer)", tc.name, got, want)
		}
		if busy := dd.busy.Busy(0, time.Hour); busy != 4*p+tR+x {
			t.Errorf("%s: die busy %v, want %v (the programs and the read)", tc.name, busy, 4*p+tR+x)
		}
	}
}
