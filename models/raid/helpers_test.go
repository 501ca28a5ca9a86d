package raid

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/devicetest"
	"github.com/nasemu/nasemu/models/fixed"
)

// fixedMembers returns n fixed-cost devices of the given configuration.
func fixedMembers(t testing.TB, n int, cfg fixed.Config) []models.Device {
	t.Helper()
	ms := make([]models.Device, n)
	for i := range ms {
		d, err := fixed.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ms[i] = d
	}
	return ms
}

func mustNew(t testing.TB, cfg Config, ms []models.Device) *Array {
	t.Helper()
	a, err := New(cfg, ms)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// ioRec is one submission a fake member saw.
type ioRec struct {
	at     time.Duration
	op     models.Op
	off, n int64
}

// fakeDev is a hand-written member double: it records every submission
// and answers with submit (instant completion when nil).
type fakeDev struct {
	capacity int64
	submit   func(at time.Duration, r models.Request) (time.Duration, error)
	log      []ioRec
}

func (f *fakeDev) Capacity() int64 { return f.capacity }

func (f *fakeDev) Submit(at time.Duration, r models.Request) (time.Duration, error) {
	if err := models.CheckRange(r, f.capacity); err != nil {
		return at, err
	}
	f.log = append(f.log, ioRec{at, r.Op, r.Offset, r.Length})
	if f.submit != nil {
		return f.submit(at, r)
	}
	return at, nil
}

// closedLoop keeps qd requests outstanding against d, issuing each new
// request when the earliest outstanding one completes, for n requests.
// It returns the completed requests per second and bytes per second of
// simulated time, measured from start to the last completion.
func closedLoop(t testing.TB, d models.Device, start time.Duration, qd, n int, next func(i int) models.Request) (iops, bps float64) {
	t.Helper()
	l := devicetest.ClosedLoop(t, d, start, qd, n, next)
	return l.IOPS(), l.MBps() * 1e6
}

// randomOps returns a generator of bs-aligned requests of op at uniformly
// random offsets below limit.
func randomOps(seed uint64, op models.Op, bs, limit int64) func(int) models.Request {
	rng := rand.New(rand.NewPCG(seed, 7))
	return func(int) models.Request {
		return models.Request{Op: op, Offset: rng.Int64N(limit/bs) * bs, Length: bs}
	}
}

// seqOps returns a generator of sequential requests of op and size bs
// from offset 0, wrapping at limit.
func seqOps(op models.Op, bs, limit int64) func(int) models.Request {
	return func(i int) models.Request {
		return models.Request{Op: op, Offset: int64(i) * bs % (limit / bs * bs), Length: bs}
	}
}

func counter(a *Array, name string) float64 {
	for _, c := range a.Counters() {
		if c.Name == name {
			return c.Value
		}
	}
	panic("no counter " + name)
}

func within(got, want, tol float64) bool {
	return got >= want*(1-tol) && got <= want*(1+tol)
}

// queueDev is a one-server device with a fixed service time per op that
// serves requests in order of arrival time, as a drive's command queue
// does: a request takes the earliest idle gap at or after its arrival
// that fits it, so a write reserved for a future time (the write phase of
// a read-modify-write) does not hold up requests that arrive before it.
// It is a one-unit models/fixed device that also counts the I/Os it
// served.
type queueDev struct {
	capacity    int64
	read, write time.Duration
	busy        []span // reserved intervals, sorted, disjoint
	latest      time.Duration
	ios         int // reads and writes served
}

type span struct{ from, to time.Duration }

func (q *queueDev) Capacity() int64 { return q.capacity }

func (q *queueDev) Submit(at time.Duration, r models.Request) (time.Duration, error) {
	if err := models.CheckRange(r, q.capacity); err != nil {
		return at, err
	}
	svc := q.read
	switch r.Op {
	case models.Write:
		svc = q.write
	case models.Read:
	default:
		return at, nil
	}
	q.ios++
	q.latest = max(q.latest, at)
	// Forget intervals long past (requests arrive at most a little out of
	// order).
	k := 0
	for k < len(q.busy) && q.busy[k].to < q.latest-time.Second {
		k++
	}
	q.busy = q.busy[k:]
	start := at
	i := 0
	for ; i < len(q.busy); i++ {
		if q.busy[i].to <= start {
			continue
		}
		if q.busy[i].from >= start+svc {
			break
		}
		start = q.busy[i].to
	}
	q.busy = slices.Insert(q.busy, i, span{start, start + svc})
	return start + svc, nil
}

func queueMembers(n int, capacity int64, read, write time.Duration) []models.Device {
	ms := make([]models.Device, n)
	for i := range ms {
		ms[i] = &queueDev{capacity: capacity, read: read, write: write}
	}
	return ms
}
