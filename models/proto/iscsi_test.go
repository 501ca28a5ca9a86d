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

// cachingNAS is a coresNAS with a page cache the protocol can probe: a
// page is cached once read.
type cachingNAS struct {
	coresNAS
	cached map[int64]bool
}

var _ Prober = (*cachingNAS)(nil)

func (c *cachingNAS) Uncached(r models.Request) int64 {
	var n int64
	for pg := r.Offset / 4096; pg <= (r.End()-1)/4096; pg++ {
		if !c.cached[pg] {
			n++
		}
	}
	return n
}

func (c *cachingNAS) Submit(at time.Duration, r models.Request) (time.Duration, error) {
	if r.Op == models.Read {
		for pg := r.Offset / 4096; pg <= (r.End()-1)/4096; pg++ {
			c.cached[pg] = true
		}
	}
	return c.coresNAS.Submit(at, r)
}

// An iSCSI read of a file-backed LUN fills the pages the NAS's page cache
// lacks in the connection's thread: with one connection and enough
// commands outstanding, 4 KiB reads of uncached pages top out at
// 1/(ServerRequest+ServerMiss) and reads of cached ones at
// 1/ServerRequest, when neither the link (10GbE) nor the NAS is the
// limit. SMB has no such cost (smbd reads in its aio threads).
func TestISCSIServerMiss(t *testing.T) {
	const (
		req  = 40 * time.Microsecond
		miss = 8 * time.Microsecond
		n    = 20000
	)
	nas := &cachingNAS{coresNAS: coresNAS{fakeNAS: fakeNAS{capacity: 64 * gib}, cores: make([]time.Duration, 4)}, cached: map[int64]bool{}}
	d := newStack(t, Config{Protocol: ISCSI, ServerRequest: req, ServerMiss: miss}, link.Config{Kind: "10gbe"}, nas)
	pass := func() float64 {
		end := closedLoop(t, d, 1, 16, n, func(_, i int) models.Request {
			return models.Request{Op: models.Read, Offset: int64(i*7919%n) * 4096, Length: 4096}
		})
		return n / end.Seconds()
	}
	cold := pass()
	wantCold := 1 / (req + miss).Seconds()
	if cold < 0.97*wantCold || cold > 1.01*wantCold {
		t.Errorf("uncached reads: %.0f IOPS, want ≈ 1/(ServerRequest+ServerMiss) = %.0f", cold, wantCold)
	}
	// The same pages again, now cached, on a fresh session.
	d = newStack(t, Config{Protocol: ISCSI, ServerRequest: req, ServerMiss: miss}, link.Config{Kind: "10gbe"}, nas)
	nas.cores, nas.busy = make([]time.Duration, 4), 0
	warm := pass()
	wantWarm := 1 / req.Seconds()
	if warm < 0.97*wantWarm || warm > 1.01*wantWarm {
		t.Errorf("cached reads: %.0f IOPS, want ≈ 1/ServerRequest = %.0f", warm, wantWarm)
	}
	t.Logf("4 KiB reads on one connection: %.0f IOPS uncached, %.0f cached", cold, warm)
	if c := (Config{Protocol: ISCSI}).Defaults(); c.ServerMiss != DefaultISCSIServerMiss {
		t.Errorf("default iSCSI server_miss %v, want %v", c.ServerMiss, DefaultISCSIServerMiss)
	}
	for _, p := range []string{Local, SMB3} {
		if err := (Config{Protocol: p, ServerMiss: time.Microsecond}).Validate(); err == nil {
			t.Errorf("protocol %s accepted a server_miss", p)
		}
	}
}

// A connection's target work is split between its receive and transmit
// threads as LIO splits it, on one core: a 256 KiB read costs the two
// threads one command (ServerRequest), a 256 KiB write beyond FirstBurst
// one command plus an R2T sent and a Data-Out PDU received (a quarter of
// ServerRequest each), so with the threads the limit, one connection's
// writes run at two thirds of its reads. A 4 KiB write carried whole as
// immediate data costs what a 4 KiB read does.
func TestISCSIReceiveTransmitSplit(t *testing.T) {
	const (
		req = 400 * time.Microsecond
		n   = 4000
	)
	rate := func(op models.Op, size int64) float64 {
		nas := &coresNAS{fakeNAS: fakeNAS{capacity: 64 * gib}, cores: make([]time.Duration, 4)}
		d := newStack(t, Config{Protocol: ISCSI, ServerRequest: req, ServerWrite: -1, ServerMiss: -1}, link.Config{Kind: "10gbe"}, nas)
		end := closedLoop(t, d, 1, 16, n, func(_, i int) models.Request {
			return models.Request{Op: op, Offset: int64(i%4096) * size, Length: size}
		})
		want := time.Duration(n) * req
		if op == models.Write && size > 64<<10 {
			want += time.Duration(n) * req / 2 // the R2T and the Data-Out PDU
		}
		if busy := d.threadBusy; busy != want {
			t.Errorf("%v %d B: target threads busy %v, want %v", op, size, busy, want)
		}
		return n / end.Seconds()
	}
	reads, writes := rate(models.Read, 256<<10), rate(models.Write, 256<<10)
	t.Logf("256 KiB commands on one connection: %.0f reads/s, %.0f writes/s", reads, writes)
	if want := 1 / req.Seconds(); reads < 0.97*want || reads > 1.01*want {
		t.Errorf("256 KiB reads: %.0f/s, want ≈ 1/ServerRequest = %.0f", reads, want)
	}
	if want := reads * 2 / 3; writes < 0.95*want || writes > 1.01*want {
		t.Errorf("256 KiB writes: %.0f/s, want ≈ two thirds of the reads' %.0f (an R2T and a Data-Out PDU more)", writes, reads)
	}
	small, smallW := rate(models.Read, 4096), rate(models.Write, 4096)
	if smallW < 0.99*small || smallW > 1.01*small {
		t.Errorf("4 KiB: %.0f writes/s against %.0f reads/s, want the same (immediate data, no R2T)", smallW, small)
	}
}
