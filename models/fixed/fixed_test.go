package fixed

import (
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
)

// With k requests kept outstanding on p units of service time s, a closed
// loop completes min(k, p)/s requests per second (Little's law), and at QD1
// each request takes exactly s.
func TestLittlesLaw(t *testing.T) {
	const s = 100 * time.Microsecond
	for _, p := range []int{1, 4} {
		for _, k := range []int{1, 2, 4, 8} {
			d, err := New(Config{Capacity: 1 << 30, Units: p, Read: s})
			if err != nil {
				t.Fatal(err)
			}
			// Closed loop: k slots, each resubmits at its completion.
			slots := make([]time.Duration, k)
			const n = 10000
			var last time.Duration
			for i := 0; i < n; i++ {
				j := i % k
				done, err := d.Submit(slots[j], models.Request{Op: models.Read, Length: 4096})
				if err != nil {
					t.Fatal(err)
				}
				if k == 1 && done-slots[j] != s {
					t.Fatalf("QD1 latency %v, want %v", done-slots[j], s)
				}
				slots[j] = done
				last = max(last, done)
			}
			iops := float64(n) / last.Seconds()
			want := float64(min(k, p)) / s.Seconds()
			if diff := iops/want - 1; diff > 1e-3 || diff < -1e-3 {
				t.Errorf("p=%d k=%d: %.0f IOPS, want %.0f", p, k, iops, want)
			}
		}
	}
}

func TestRangeErrors(t *testing.T) {
	d, _ := New(Config{Capacity: 4096})
	if _, err := d.Submit(0, models.Request{Op: models.Read, Offset: 4096, Length: 1}); err == nil {
		t.Fatal("read beyond capacity succeeded")
	}
	if _, err := New(Config{}); err == nil {
		t.Fatal("zero capacity accepted")
	}
}

// A request submitted for the future (a RAID write phase) does not keep
// earlier arrivals from using the idle time before it.
func TestFutureSubmissionLeavesGap(t *testing.T) {
	d, _ := New(Config{Capacity: 1 << 20, Write: time.Millisecond, Read: time.Millisecond})
	d.Submit(10*time.Millisecond, models.Request{Op: models.Write, Length: 4096})
	done, _ := d.Submit(0, models.Request{Op: models.Read, Length: 4096})
	if done != time.Millisecond {
		t.Errorf("read at 0 done at %v, want 1ms (before the future write)", done)
	}
}
