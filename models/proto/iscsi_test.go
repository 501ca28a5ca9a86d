package proto

import (
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/link"
)

// A write beyond FirstBurstLength is solicited burst by burst: with
// InitialR2T=No, FirstBurst 64 KiB and MaxBurst 256 KiB a 1 MiB write
// sends 64 KiB unsolicited and needs ceil(960/256) = 4 R2Ts. Each costs a
// round trip the data would not otherwise wait for: the R2T to the client
// and the burst's latency back (≈ 106 µs each on 1GbE).
func TestISCSIR2TRoundTrips(t *testing.T) {
	no, yes := false, true
	r2t := func(initialR2T *bool, firstBurst, maxBurst models.Bytes) (time.Duration, float64) {
		d := newStack(t, Config{Protocol: ISCSI, MaxIO: 1 << 20, InitialR2T: initialR2T, FirstBurst: firstBurst, MaxBurst: maxBurst},
			link.Config{Kind: "1gbe"}, &fakeNAS{capacity: 64 * gib})
		done, err := d.Submit(0, models.Request{Op: models.Write, Length: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		return done, counter(d, "iscsi_r2ts")
	}
	withR2T, n := r2t(&no, 64<<10, 256<<10)
	if n != 4 {
		t.Fatalf("%v R2Ts, want 4", n)
	}
	if _, n := r2t(&yes, 64<<10, 256<<10); n != 4 {
		t.Errorf("InitialR2T=Yes, ImmediateData=Yes: %v R2Ts, want 4 (64 KiB immediate)", n)
	}
	// The same write all unsolicited: a first burst as large as the write.
	free, n0 := r2t(&no, 1<<20, 1<<20)
	if n0 != 0 {
		t.Fatalf("unsolicited write: %v R2Ts", n0)
	}
	// Analytic times on an idle 1GbE link: each message is its wire time,
	// its last frame's store-and-forward and 50 µs (package link's doc).
	msg := func(n int64) time.Duration {
		frames := (n + 1447) / 1448
		last := n - (frames-1)*1448
		return time.Duration((n+90*frames)*8+(last+70)*8) + 50*time.Microsecond
	}
	const bhs = 48
	wantFree := msg(1<<20+4*bhs) + msg(bhs) // command with 256 KiB + 3 Data-Out PDUs; response
	wantR2T := msg(bhs+64<<10) + msg(bhs)   // command with 64 KiB immediate; response
	for _, burst := range []int64{256 << 10, 256 << 10, 256 << 10, 192 << 10} {
		wantR2T += msg(bhs) + msg(bhs+burst) // R2T, then the burst in one Data-Out PDU
	}
	t.Logf("1 MiB write: %v with 4 R2Ts (analytic %v), %v unsolicited (analytic %v): %v per R2T",
		withR2T, wantR2T, free, wantFree, (withR2T-free)/4)
	for _, c := range []struct{ got, want time.Duration }{{withR2T, wantR2T}, {free, wantFree}} {
		if d := c.got - c.want; d < -10 || d > 10 {
			t.Errorf("write took %v, analytic %v", c.got, c.want)
		}
	}
	// Writes within the first burst need none.
	d := newStack(t, Config{Protocol: ISCSI}, link.Config{Kind: "1gbe"}, &fakeNAS{capacity: 64 * gib})
	for i := 0; i < 10; i++ {
		if _, err := d.Submit(0, models.Request{Op: models.Write, Offset: int64(i) << 16, Length: 64 << 10}); err != nil {
			t.Fatal(err)
		}
	}
	if n := counter(d, "iscsi_r2ts"); n != 0 {
		t.Errorf("64 KiB writes needed %v R2Ts", n)
	}
}

// Sequential iSCSI reads fill 1GbE: 256 KiB commands at QD 8 carry
// 117.69 MB/s × 256 KiB / (256 KiB + Data-In and response headers).
func TestISCSISequential(t *testing.T) {
	d := newStack(t, Config{Protocol: ISCSI}, link.Config{Kind: "1gbe"}, fastNAS(t))
	end := closedLoop(t, d, 1, 8, 400, seqRead(1<<20))
	got := mbps(400<<20, end)
	t.Logf("iSCSI 1 MiB reads QD8: %.1f MB/s", got)
	if got < 110 || got > 118 {
		t.Errorf("%.1f MB/s", got)
	}
	if c := counter(d, "iscsi_commands"); c != 1600 {
		t.Errorf("%v commands, want 4 per 1 MiB", c)
	}
}

// The initiator's queue depth bounds commands in flight: QD 1 makes a
// 32-deep workload wait for each command's round trip.
func TestISCSIQueueDepth(t *testing.T) {
	slow := func() models.Device { return &fakeNAS{capacity: 64 * gib, io: time.Millisecond} }
	one := newStack(t, Config{Protocol: ISCSI, QueueDepth: 1}, link.Config{Kind: "1gbe"}, slow())
	end := closedLoop(t, one, 1, 32, 100, func(_, i int) models.Request {
		return models.Request{Op: models.Read, Offset: int64(i) * 4096, Length: 4096}
	})
	per := end / 100
	if per < time.Millisecond+100*time.Microsecond {
		t.Errorf("queue depth 1: %v per 4 KiB read, want at least the NAS's 1 ms plus a round trip", per)
	}
}
