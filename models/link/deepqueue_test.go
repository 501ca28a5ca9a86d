package link

import (
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/devicetest"
)

// roundTrip is a client's request over a link to a NAS and its response
// back: a 100-byte request, the NAS's time (which completes requests out
// of the order they arrived in) and the read data.
type roundTrip struct {
	l   *Link
	nas devicetest.Scattered
}

func (r *roundTrip) Capacity() int64 { return r.nas.Capacity() }

func (r *roundTrip) Submit(at time.Duration, q models.Request) (time.Duration, error) {
	done, err := r.nas.Submit(r.l.Send(at, 0, ToNAS, 100), q)
	if err != nil {
		return done, err
	}
	return r.l.Send(done, 0, ToClient, q.Length), nil
}

// A link direction holds the response of every request in flight: 4 KiB
// reads at QD64 and QD256 from a NAS that takes 2 to 14 ms and completes
// them out of order arrive at min(QD / latency, 1 / wire time)
// (devicetest.DeepQueue), on 10GbE (the NAS's limit) and 1GbE (the
// wire's at QD256).
//
// Each response is booked for when the NAS completes its request. When a
// direction's calendar kept 32 intervals it forgot future ones past some
// 32 requests in flight and placed nothing before them: on 10GbE QD256
// gave 25,802 reads a second of 31,782, and 1GbE, whose wire allows
// 28,630, 25,784.
func TestLinkHoldsDeepQueues(t *testing.T) {
	for _, tc := range []struct {
		kind string
		qd   int
	}{{"10gbe", 64}, {"10gbe", 256}, {"1gbe", 256}} {
		l := mustNew(t, Config{Kind: tc.kind})
		rt := &roundTrip{l: l, nas: devicetest.Scattered{Lo: 2 * time.Millisecond, Hi: 14 * time.Millisecond}}
		devicetest.DeepQueue(t, tc.kind+" reads", rt, 0, tc.qd, 1/l.WireTime(4096).Seconds(), devicetest.RandomReads(1, 4096, models.GiB))
	}
}
