package link

import (
	"math"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/devicetest"
)

// roundTrip is a client's request over a link to a NAS and its response
// back: a 100-byte request, the NAS's time, from lo to hi spread evenly
// (by the fractional parts of multiples of the golden ratio) so that
// requests complete out of the order they arrived in, and the read data.
type roundTrip struct {
	l      *Link
	lo, hi time.Duration
	n      int
}

func (r *roundTrip) Capacity() int64 { return 64 * models.GiB }

func (r *roundTrip) Submit(at time.Duration, q models.Request) (time.Duration, error) {
	r.n++
	_, f := math.Modf(float64(r.n) * math.Phi)
	done := r.l.Send(at, 0, ToNAS, 100) + r.lo + time.Duration(f*float64(r.hi-r.lo))
	return r.l.Send(done, 0, ToClient, q.Length), nil
}

// A link direction holds the response of every request in flight: 4 KiB
// reads at QD64 and QD256 from a NAS that takes 2 to 14 ms and completes
// them out of order arrive at min(QD / latency, 1 / wire time), within
// -3 %..+1 %, on 10GbE (the NAS's limit) and 1GbE (the wire's at QD256).
//
// Each response is booked for when the NAS completes its request. When a
// direction's calendar kept 32 intervals it forgot future ones past some
// 32 requests in flight and placed nothing before them: on 10GbE QD256
// gave 25,801 reads a second of 31,986, and 1GbE, whose wire allows
// 28,630, 25,805.
func TestLinkHoldsDeepQueues(t *testing.T) {
	for _, tc := range []struct {
		kind string
		qd   int
	}{{"10gbe", 64}, {"10gbe", 256}, {"1gbe", 256}} {
		l := mustNew(t, Config{Kind: tc.kind})
		rt := &roundTrip{l: l, lo: 2 * time.Millisecond, hi: 14 * time.Millisecond}
		const n1, n = 2000, 40_000
		one := devicetest.ClosedLoop(t, rt, 0, 1, n1, devicetest.RandomReads(1, 4096, models.GiB))
		lat := one.Elapsed / n1
		deep := devicetest.ClosedLoop(t, rt, one.Elapsed, tc.qd, n, devicetest.RandomReads(2, 4096, models.GiB))
		want := min(float64(tc.qd)/lat.Seconds(), 1/l.WireTime(4096).Seconds())
		t.Logf("%s QD%d: %.0f reads/s, want %.0f (latency %v)", tc.kind, tc.qd, deep.IOPS(), want, lat)
		if got := deep.IOPS(); got < want*0.97 || got > want*1.01 {
			t.Errorf("%s QD%d: %.0f reads/s, want %.0f (min(QD/latency, 1/wire time))", tc.kind, tc.qd, got, want)
		}
	}
}
