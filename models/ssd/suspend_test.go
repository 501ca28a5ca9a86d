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
// the whole program (~700 µs) without suspend, and with it completes in
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
