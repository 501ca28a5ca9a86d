package proto

import (
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fixed"
	"github.com/nasemu/nasemu/models/link"
)

// randomReads drives d with 4 KiB random reads at queue depth qd, one
// request per iteration, with no allocation of its own.
func randomReads(b *testing.B, d models.Device, qd int) {
	slots := make([]time.Duration, qd)
	x := uint64(88172645463325252)
	blocks := uint64(d.Capacity() / 4096)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		s := i % qd
		done, err := d.Submit(slots[s], models.Request{Op: models.Read, Offset: int64(x%blocks) * 4096, Length: 4096})
		if err != nil {
			b.Fatal(err)
		}
		slots[s] = done
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ios/s")
}

// Simulated requests per second of CPU for 4 KiB random reads through a
// protocol, 1GbE and a fixed device.
func BenchmarkRandomRead4K(b *testing.B) {
	for _, p := range []string{SMB3, ISCSI, Local} {
		for _, qd := range []int{1, 32} {
			b.Run("proto="+p+"/qd="+itoa(qd), func(b *testing.B) {
				nas, err := fixed.New(fixed.Config{Capacity: 64 * gib, Units: 4, Read: 50 * time.Microsecond})
				if err != nil {
					b.Fatal(err)
				}
				lc := link.Config{Kind: "1gbe"}
				if p == Local {
					lc.Kind = "local"
				}
				randomReads(b, newStack(b, Config{Protocol: p}, lc, nas), qd)
			})
		}
	}
}

// The hot path allocates nothing once a session exists.
func TestNoAllocations(t *testing.T) {
	for _, p := range []string{SMB3, ISCSI} {
		d := newStack(t, Config{Protocol: p}, link.Config{Kind: "1gbe", Count: 2, Mode: link.SMBMultichannel}, fastNAS(t))
		var now time.Duration
		ops := []models.Request{
			{Op: models.Read, Length: 4096}, {Op: models.Write, Length: 1 << 20},
			{Op: models.Create}, {Op: models.Write, Length: 2048}, {Op: models.Close},
			{Op: models.Open}, {Op: models.Read, Length: 2048}, {Op: models.Close},
			{Op: models.Stat}, {Op: models.Remove}, {Op: models.Flush}, {Op: models.Trim, Length: 1 << 20},
		}
		for _, r := range ops { // create the session
			now, _ = d.Submit(now, r)
		}
		allocs := testing.AllocsPerRun(100, func() {
			for _, r := range ops {
				var err error
				if now, err = d.Submit(now, r); err != nil {
					t.Fatal(err)
				}
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per round of requests", p, allocs)
		}
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
