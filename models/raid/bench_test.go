package raid

import (
	"fmt"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fixed"
)

// BenchmarkRandomWrite measures Submit's cost for 4 KiB random writes kept
// at QD 16 through arrays of fixed devices (1 ms per I/O), and reports the
// simulated write rate as sim_ios/s (RAID 5 of 4: N × 1000 / 4 = 1000
// ideally; models/fixed's in-submission-order service gives about 545, see
// TestParitySmallRandomWrites).
func BenchmarkRandomWrite(b *testing.B) {
	for _, tc := range []struct {
		level Level
		n     int
	}{{RAID5, 4}, {RAID6, 6}, {RAID10, 4}, {RAID0, 4}} {
		b.Run(fmt.Sprintf("level=%s/members=%d", tc.level, tc.n), func(b *testing.B) {
			a := mustNew(b, Config{Level: tc.level}, fixedMembers(b, tc.n, fixed.Config{Capacity: 64 * GiB, Read: time.Millisecond, Write: time.Millisecond}))
			next := randomOps(1, models.Write, 4*KiB, a.Capacity())
			reqs := make([]models.Request, 4096)
			for i := range reqs {
				reqs[i] = next(i)
			}
			var slots [16]time.Duration
			var last time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				j := 0
				for k := range slots {
					if slots[k] < slots[j] {
						j = k
					}
				}
				done, err := a.Submit(slots[j], reqs[i%len(reqs)])
				if err != nil {
					b.Fatal(err)
				}
				slots[j] = done
				last = max(last, done)
			}
			b.ReportMetric(float64(b.N)/last.Seconds(), "sim_ios/s")
		})
	}
}
