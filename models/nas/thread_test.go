package nas

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fixed"
)

// A local client's thread makes one system call at a time: threads × QD16
// of direct 4 KiB reads from storage far faster than the CPU run at
// threads / (PerRequest + PerIO), however deep each thread's queue, until
// the cores run out; a remote client's requests are the server's and
// spread over every core.
func TestLocalThreadIssuesOneCallAtATime(t *testing.T) {
	const perCall = 30 * time.Microsecond // 3 µs dispatch + 27 µs submit path
	for _, tc := range []struct {
		name    string
		local   bool
		threads int
		want    float64 // IOPS
	}{
		{"local 1 thread", true, 1, 1 / perCall.Seconds()},
		{"local 4 threads", true, 4, 4 / perCall.Seconds()},
		{"local 16 threads on 8 cores", true, 16, 8 / perCall.Seconds()},
		// Remote: the cores' limit, not one thread's: 8 cores over the
		// call, the network stack's 8 µs and 4 KiB through it at 2 GB/s.
		{"remote 1 connection", false, 1, 8 / (perCall.Seconds() + 8e-6 + 4096/2e9)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			storage, err := fixed.New(fixed.Config{Capacity: 8 * models.GiB, Units: 64, Read: 20 * time.Microsecond, BytesPerSecond: 100e9})
			if err != nil {
				t.Fatal(err)
			}
			cfg := small()
			cfg.Local, cfg.DirectIO = tc.local, true
			cfg.CPU.Cores = 8
			cfg.CPU.PerRequest, cfg.CPU.PerIO = 3*time.Microsecond, perCall-3*time.Microsecond
			c, err := New(cfg, storage)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			const qd, n = 16, 40_000
			dones := closedLoop(t, c, 0, qd*tc.threads, n, func(i int) models.Request {
				return models.Request{Op: models.Read, Offset: rng.Int64N(8*models.GiB/4096) * 4096, Length: 4096, Thread: i % tc.threads}
			})
			iops := n / last(dones).Seconds()
			t.Logf("%.0f IOPS, want %.0f", iops, tc.want)
			if iops < tc.want*0.95 || iops > tc.want*1.02 {
				t.Errorf("%.0f IOPS, want %.0f", iops, tc.want)
			}
		})
	}
}
