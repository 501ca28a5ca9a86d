package devicetest

import (
	"math"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
)

// Scattered is storage of unbounded parallelism whose requests take from
// Lo to Hi, spread evenly over that range (by the fractional parts of
// multiples of the golden ratio, so that any run of them averages close
// to the middle): they complete out of the order they were issued in, as
// a drive's reordered queue or an array's members complete them, and the
// work a resource above books for their completions lands in its
// calendar out of order too. Its capacity is 64 GiB.
type Scattered struct {
	Lo, Hi time.Duration
	n      int
}

var _ models.Device = (*Scattered)(nil)

// Capacity implements models.Device.
func (s *Scattered) Capacity() int64 { return 64 * models.GiB }

// Submit implements models.Device: every request takes the next time of
// the spread.
func (s *Scattered) Submit(at time.Duration, r models.Request) (time.Duration, error) {
	if err := models.CheckRange(r, s.Capacity()); err != nil {
		return at, err
	}
	s.n++
	_, f := math.Modf(float64(s.n) * math.Phi)
	return at + s.Lo + time.Duration(f*float64(s.Hi-s.Lo)), nil
}

// DeepQueue checks that d loses no throughput at queue depth qd: it runs
// next in a closed loop from start, 2,000 requests one at a time and then
// 40,000 qd at a time, and fails the test unless the deep queue completes them at
// min(qd / latency, ceiling) within -3 %..+1 %, the latency being the
// mean of the run one at a time and ceiling the requests per second of
// the resource that limits them. A resource that holds work booked ahead
// for each request in flight and forgets some of it at depth falls short.
// The requests keep the Thread next gives them (Closed.OwnThreads). what
// names the case in messages; the deep run is returned.
func DeepQueue(t testing.TB, what string, d models.Device, start time.Duration, qd int, ceiling float64, next func(int) models.Request) Loop {
	t.Helper()
	const n1, n = 2000, 40_000
	one := Closed{Start: start, QD: 1, N: n1, OwnThreads: true}.Run(t, d, next)
	lat := one.Elapsed / n1
	deep := Closed{Start: start + one.Elapsed, QD: qd, N: n, OwnThreads: true}.Run(t, d, next)
	want := min(float64(qd)/lat.Seconds(), ceiling)
	t.Logf("%s, QD%d: %.0f IOPS, want %.0f (latency %v, ceiling %.0f)", what, qd, deep.IOPS(), want, lat, ceiling)
	if got := deep.IOPS(); got < want*0.97 || got > want*1.01 {
		t.Errorf("%s, QD%d: %.0f IOPS, want %.0f (min(QD/latency, %.0f))", what, qd, got, want, ceiling)
	}
	return deep
}
