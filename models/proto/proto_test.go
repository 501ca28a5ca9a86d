package proto

import (
	"errors"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fixed"
	"github.com/nasemu/nasemu/models/link"
)

const gib = 1 << 30

// fastNAS is a NAS much faster than 1GbE: 1 GB/s, four requests at a time,
// 20 µs per I/O, file operations free.
func fastNAS(t testing.TB) *fixed.Device {
	t.Helper()
	d, err := fixed.New(fixed.Config{Capacity: 64 * gib, Units: 4, Read: 20 * time.Microsecond, Write: 20 * time.Microsecond, BytesPerSecond: 1e9})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func newStack(t testing.TB, pc Config, lc link.Config, nas models.Device) *Device {
	t.Helper()
	l, err := link.New(lc)
	if err != nil {
		t.Fatal(err)
	}
	d, err := New(pc, l, nas)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// closedLoop runs flows clients, each keeping qd requests outstanding, for
// n requests in all; next returns the i-th request of a flow. Requests are
// submitted in time order, as the benchmark engine does. It returns the
// time the last one completes.
func closedLoop(t testing.TB, d models.Device, flows, qd, n int, next func(flow, i int) models.Request) time.Duration {
	t.Helper()
	free := make([]time.Duration, flows*qd)
	count := make([]int, flows)
	var last time.Duration
	for k := 0; k < n; k++ {
		s := 0
		for j := range free {
			if free[j] < free[s] {
				s = j
			}
		}
		f := s / qd
		r := next(f, count[f])
		r.Flow = f
		count[f]++
		done, err := d.Submit(free[s], r)
		if err != nil {
			t.Fatal(err)
		}
		if done < free[s] {
			t.Fatalf("request %v done at %v before it was issued at %v", r, done, free[s])
		}
		free[s] = done
		last = max(last, done)
	}
	return last
}

func seqRead(size int64) func(flow, i int) models.Request {
	return func(flow, i int) models.Request {
		return models.Request{Op: models.Read, Offset: int64(flow)*8*gib + int64(i)*size%(8*gib), Length: size}
	}
}

func seqWrite(size int64) func(flow, i int) models.Request {
	return func(flow, i int) models.Request {
		return models.Request{Op: models.Write, Offset: int64(flow)*8*gib + int64(i)*size%(8*gib), Length: size}
	}
}

func mbps(bytes int64, d time.Duration) float64 { return float64(bytes) / d.Seconds() / 1e6 }

// A large sequential SMB3 read or write over 1GbE from a NAS faster than
// the link runs at the link's payload rate less the SMB headers:
// 117.69 MB/s × 1 MiB / (1 MiB + 84) ≈ 117.7 MB/s once QD 4 × 1 MiB covers
// the bandwidth-delay product (~9 ms per 1 MiB on the wire ≫ 0.1 ms RTT).
// The review's diskspd over SMB measured 112-113 MB/s read, 108-112 write.
func TestSMB3SequentialOver1GbE(t *testing.T) {
	for _, c := range []struct {
		name string
		gen  func(int64) func(int, int) models.Request
		qd   int
	}{{"read QD4", seqRead, 4}, {"read QD1", seqRead, 1}, {"write QD4", seqWrite, 4}} {
		d := newStack(t, Config{Protocol: SMB3}, link.Config{Kind: "1gbe"}, fastNAS(t))
		const n = 400
		end := closedLoop(t, d, 1, c.qd, n, c.gen(1<<20))
		got := mbps(n<<20, end)
		t.Logf("%s: %.1f MB/s", c.name, got)
		lo := 105.0
		if c.qd == 1 {
			// One request at a time: 1 MiB of wire time (8.91 ms) plus
			// the NAS's 1.07 ms and a round trip per request.
			lo = 95
		}
		if got < lo || got > 118 {
			t.Errorf("%s: %.1f MB/s, want %g..118", c.name, got, lo)
		}
	}
}

// SMB 2.0.2 splits a 1 MiB read into 16 requests of 64 KiB; with credits
// to spare they still fill the link.
func TestSMB2Splits(t *testing.T) {
	d := newStack(t, Config{Protocol: SMB2}, link.Config{Kind: "1gbe"}, fastNAS(t))
	end := closedLoop(t, d, 1, 2, 100, seqRead(1<<20))
	if got := counter(d, "smb_requests"); got != 1600 {
		t.Errorf("%v SMB requests, want 1600", got)
	}
	if got := mbps(100<<20, end); got < 105 || got > 118 {
		t.Errorf("%.1f MB/s", got)
	}
}

// Credits bound the data in flight: with a window of 16 credits a session
// has one 1 MiB request out at a time, whatever the application's queue
// depth.
func TestCreditsLimit(t *testing.T) {
	qd1 := newStack(t, Config{Protocol: SMB3}, link.Config{Kind: "1gbe"}, fastNAS(t))
	tight := newStack(t, Config{Protocol: SMB3, Credits: 16}, link.Config{Kind: "1gbe"}, fastNAS(t))
	a := closedLoop(t, qd1, 1, 1, 100, seqRead(1<<20))
	b := closedLoop(t, tight, 1, 8, 100, seqRead(1<<20))
	if r := float64(b) / float64(a); r < 0.98 || r > 1.02 {
		t.Errorf("16 credits at QD8 take %v, QD1 %v: want the same", b, a)
	}
}

// Two 1GbE links with SMB Multichannel nearly double one client; LACP
// gives one client one link, and four clients four.
func TestMultiLink(t *testing.T) {
	run := func(lc link.Config, flows int) float64 {
		d := newStack(t, Config{Protocol: SMB3}, lc, fastNAS(t))
		const n = 800
		return mbps(n<<20, closedLoop(t, d, flows, 8, n, seqRead(1<<20)))
	}
	single := run(link.Config{Kind: "1gbe"}, 1)
	mc := run(link.Config{Kind: "1gbe", Count: 2, Mode: link.SMBMultichannel}, 1)
	lacp1 := run(link.Config{Kind: "1gbe", Count: 2, Mode: link.LACP}, 1)
	lacp4 := run(link.Config{Kind: "1gbe", Count: 4, Mode: link.LACP}, 4)
	t.Logf("single %.1f, multichannel ×2 %.1f (%.2f×), lacp ×2 one client %.1f (%.2f×), lacp ×4 four clients %.1f (%.2f×)",
		single, mc, mc/single, lacp1, lacp1/single, lacp4, lacp4/single)
	if mc/single < 1.8 {
		t.Errorf("multichannel %.2f× single, want ≥ 1.8", mc/single)
	}
	if lacp1/single > 1.05 {
		t.Errorf("lacp one client %.2f× single, want ≤ 1.05", lacp1/single)
	}
	if r := lacp4 / single; r < 3.8 || r > 4.05 {
		t.Errorf("lacp four clients %.2f× single, want ≈ 4", r)
	}
}

func counter(d models.Device, name string) float64 {
	v, _ := models.Sum(d, name)
	return v
}

// Requests beyond the capacity and malformed ones fail; the same workload
// gives the same times; out-of-order submissions are accepted.
func TestContract(t *testing.T) {
	for _, p := range []string{Local, SMB3, ISCSI} {
		lc := link.Config{Kind: "1gbe"}
		if p == Local {
			lc = link.Config{Kind: "local"}
		}
		d := newStack(t, Config{Protocol: p}, lc, fastNAS(t))
		if _, err := d.Submit(0, models.Request{Op: models.Read, Offset: 64 * gib, Length: 4096}); !errors.Is(err, models.ErrOutOfRange) {
			t.Errorf("%s: read beyond capacity: %v", p, err)
		}
		if _, err := d.Submit(0, models.Request{Op: models.Read, Length: -1}); !errors.Is(err, models.ErrInvalid) {
			t.Errorf("%s: negative length: %v", p, err)
		}
		if _, err := d.Submit(0, models.Request{Op: models.Read, Length: 1, Flow: -1}); !errors.Is(err, models.ErrInvalid) {
			t.Errorf("%s: negative flow: %v", p, err)
		}
		late, err := d.Submit(time.Second, models.Request{Op: models.Read, Length: 4096})
		if err != nil {
			t.Fatal(err)
		}
		early, err := d.Submit(0, models.Request{Op: models.Read, Offset: 1 << 20, Length: 4096, Flow: 1})
		if err != nil {
			t.Fatal(err)
		}
		if early >= time.Second || late < time.Second {
			t.Errorf("%s: early request done at %v, late at %v", p, early, late)
		}
		if d.Capacity() != 64*gib {
			t.Errorf("%s: capacity %d", p, d.Capacity())
		}
	}
	// Determinism: the same mixed workload twice.
	var ends [2]time.Duration
	for k := range ends {
		d := newStack(t, Config{Protocol: SMB3}, link.Config{Kind: "1gbe", Count: 2, Mode: link.SMBMultichannel}, fastNAS(t))
		ends[k] = closedLoop(t, d, 3, 4, 3000, func(f, i int) models.Request {
			op := models.Read
			if (i+f)%3 == 0 {
				op = models.Write
			}
			return models.Request{Op: op, Offset: int64(i*7919%10000) * 4096, Length: int64(4096 << (i % 6))}
		})
	}
	if ends[0] != ends[1] {
		t.Errorf("two runs end at %v and %v", ends[0], ends[1])
	}
}

// Protocol local passes requests straight to the NAS.
func TestLocalPassThrough(t *testing.T) {
	nas := fastNAS(t)
	ref := fastNAS(t)
	d, err := New(Config{Protocol: Local}, nil, nas)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		r := models.Request{Op: models.Write, Offset: int64(i) << 20, Length: 1 << 20}
		a, _ := d.Submit(time.Duration(i)*time.Millisecond, r)
		b, _ := ref.Submit(time.Duration(i)*time.Millisecond, r)
		if a != b {
			t.Fatalf("request %d: %v through local, %v direct", i, a, b)
		}
	}
	l, _ := link.New(link.Config{Kind: "1gbe"})
	if _, err := New(Config{Protocol: Local}, l, nas); !errors.Is(err, models.ErrConfig) {
		t.Errorf("local protocol over 1gbe: %v", err)
	}
	if _, err := New(Config{Protocol: SMB3}, nil, nas); !errors.Is(err, models.ErrConfig) {
		t.Errorf("smb3 without a link: %v", err)
	}
}

// Full duplex under a protocol: one client reading and another writing at
// the same time over one 1GbE link each get nearly the link's rate (reads'
// requests share the write direction with the written data), and four
// readers share one link's rate.
func TestConcurrentFlows(t *testing.T) {
	d := newStack(t, Config{Protocol: SMB3}, link.Config{Kind: "1gbe"}, fastNAS(t))
	var rd, wr int64
	end := closedLoop(t, d, 2, 4, 800, func(f, i int) models.Request {
		if f == 0 {
			rd += 1 << 20
			return seqRead(1<<20)(f, i)
		}
		wr += 1 << 20
		return seqWrite(1<<20)(f, i)
	})
	r, w := mbps(rd, end), mbps(wr, end)
	t.Logf("read and write together: %.1f + %.1f MB/s", r, w)
	if r < 110 || w < 110 {
		t.Errorf("full duplex: read %.1f, write %.1f MB/s", r, w)
	}
	d = newStack(t, Config{Protocol: SMB3}, link.Config{Kind: "1gbe"}, fastNAS(t))
	all := mbps(800<<20, closedLoop(t, d, 4, 4, 800, seqRead(1<<20)))
	t.Logf("four readers on one link: %.1f MB/s in all", all)
	if all < 110 || all > 118 {
		t.Errorf("four readers: %.1f MB/s in all", all)
	}
}

// 4 KiB random reads at 8 outstanding over 1GbE from a NAS serving each in
// 50 µs on 4 units: the link (4180-byte responses, 3 frames: 35.6 µs each)
// bounds both protocols near 28k IOPS. The review's SSD arrays reached
// 15-16k over SMB and 20-23k over iSCSI: the rest is the NAS's per-request
// CPU, which the NAS model charges.
func TestRandomReadIOPS(t *testing.T) {
	for _, p := range []string{SMB3, ISCSI} {
		nas, _ := fixed.New(fixed.Config{Capacity: 64 * gib, Units: 4, Read: 50 * time.Microsecond})
		d := newStack(t, Config{Protocol: p}, link.Config{Kind: "1gbe"}, nas)
		const n = 20000
		end := closedLoop(t, d, 1, 8, n, func(_, i int) models.Request {
			return models.Request{Op: models.Read, Offset: int64(i*7919%100000) * 4096, Length: 4096}
		})
		iops := n / end.Seconds()
		t.Logf("%s 4K random read QD8: %.0f IOPS", p, iops)
		if iops < 26000 || iops > 28500 {
			t.Errorf("%s: %.0f IOPS, want the link's ≈ 28k", p, iops)
		}
	}
}
