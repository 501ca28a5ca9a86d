package nas

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fixed"
)

// A core runs whatever work is runnable: with requests waiting it is never
// idle. One core, a device far faster than it, direct 4 KiB reads from a
// remote client, each C = 50 µs of the core in two pieces: 30 µs before
// the I/O (request, network stack, block layer) and 20 µs after it (the
// data through the network stack). With two or more requests outstanding
// the core saturates and they complete at 1/C.
//
// When each piece had to fit whole in a gap of the core's calendar, the
// second request's 30 µs did not fit in the device's 20 µs between the
// first request's pieces and went after them: the requests ran one at a
// time, at 1/(C + device) — 14,278 a second here at any queue depth
// instead of 20,000.
func TestCoreIsWorkConserving(t *testing.T) {
	const cost = 50 * time.Microsecond
	for _, tc := range []struct {
		qd     int
		device time.Duration
	}{{2, 20 * time.Microsecond}, {16, 20 * time.Microsecond}, {16, 200 * time.Microsecond}} {
		d, n := oneCoreReads(t, tc.device, tc.qd)
		iops, want := float64(n)/last(d).Seconds(), 1/cost.Seconds()
		t.Logf("QD%d, device %v: %.0f IOPS, want %.0f", tc.qd, tc.device, iops, want)
		if iops < want*0.97 {
			t.Errorf("QD%d, device %v: %.0f IOPS, want %.0f (1/C): the core idles while requests wait", tc.qd, tc.device, iops, want)
		}
	}
}

// A core holds as many requests as are in flight: a kernel has no limit on
// the work that waits for I/O to complete. One core, C = 50 µs per request
// as above (30 µs before the I/O, 20 µs after), a device of 8 ms with as
// many units as requests in flight, a closed loop at QD64 to QD512: the
// requests complete at min(QD / (device + C), 1/C), within 3 %.
//
// Each request in flight holds its post-I/O work booked on the core 8 ms
// ahead. When the core's calendar kept 32 intervals, a full calendar
// forgot the earliest of them, which lay in the future, and nothing could
// be placed before its end: the core held some 32 requests at a time,
// 3,971 reads a second at QD64 instead of 7,950.
func TestCoreHoldsDeepQueues(t *testing.T) {
	const cost = 50 * time.Microsecond
	const device = 8 * time.Millisecond
	for _, qd := range []int{64, 128, 512} {
		d, n := oneCoreReads(t, device, qd)
		lat := device + cost + 4096*time.Second/100e9
		iops := float64(n) / last(d).Seconds()
		want := min(float64(qd)/lat.Seconds(), 1/cost.Seconds())
		t.Logf("QD%d: %.0f IOPS, want %.0f", qd, iops, want)
		if iops < want*0.97 || iops > want*1.01 {
			t.Errorf("QD%d: %.0f IOPS, want %.0f (min(QD/latency, 1/C))", qd, iops, want)
		}
	}
}

// oneCoreReads runs 40,000 direct 4 KiB random reads in a closed loop at
// queue depth qd through a NAS of one core that spends 50 µs on each (30
// before the I/O, 20 after), over a fixed device of the given latency with
// more units than any queue here, and returns the completion times and
// the count.
func oneCoreReads(t *testing.T, device time.Duration, qd int) ([]time.Duration, int) {
	t.Helper()
	storage, err := fixed.New(fixed.Config{Capacity: 8 * models.GiB, Units: 1024, Read: device, BytesPerSecond: 100e9})
	if err != nil {
		t.Fatal(err)
	}
	cfg := small()
	cfg.DirectIO = true
	cfg.CPU.Cores = 1
	cfg.CPU.PerRequest, cfg.CPU.NetPerRequest, cfg.CPU.PerIO = 10*time.Microsecond, 10*time.Microsecond, 10*time.Microsecond
	cfg.CPU.NetRate = models.Bytes(4096 * 1e6 / 20) // 20 µs per 4 KiB
	c, err := New(cfg, storage)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 40_000
	d := closedLoop(t, c, 0, qd, n, func(int) models.Request {
		return models.Request{Op: models.Read, Offset: rng.Int64N(8*models.GiB/4096) * 4096, Length: 4096}
	})
	return d, n
}
