package hdd

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/devicetest"
)

// wdRed1TB and exosX18 mirror the catalog entries (the catalog package
// imports this one, so its tests live in catalog_test.go).
func wdRed1TB() Config {
	return Config{
		Capacity: 1_000_204_886_016, RPM: 5400, OuterMBps: 150, Heads: 2,
		TrackToTrack: time.Millisecond, AvgSeek: 11 * time.Millisecond, FullStroke: 24 * time.Millisecond,
		CacheSize: 64 << 20,
	}
}

func exosX18() Config {
	return Config{
		Capacity: 18_000_207_937_536, RPM: 7200, OuterMBps: 270, Heads: 18,
		TrackToTrack: 800 * time.Microsecond, AvgSeek: 8500 * time.Microsecond, FullStroke: 18 * time.Millisecond,
		CacheSize: 256 << 20,
	}
}

func newDrive(t testing.TB, c Config) *Drive {
	t.Helper()
	d, err := New(c, 1)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// result of a closed-loop run.
type result struct {
	ios     int
	bytes   int64
	elapsed time.Duration
}

func (r result) iops() float64 { return float64(r.ios) / r.elapsed.Seconds() }
func (r result) mbps() float64 { return float64(r.bytes) / r.elapsed.Seconds() / 1e6 }

// closedLoop keeps qd requests outstanding, as fio's iodepth does: each
// slot issues its next request when its last one completes.
func closedLoop(t testing.TB, dev models.Device, qd, n int, start time.Duration, next func(i int) models.Request) result {
	t.Helper()
	l := devicetest.ClosedLoop(t, dev, start, qd, n, next)
	return result{ios: l.IOs, bytes: l.Bytes, elapsed: l.Elapsed}
}

// randomReads returns a generator of aligned random reads of size bs over
// [0, span).
func randomReads(seed uint64, bs, span int64) func(int) models.Request {
	rng := rand.New(rand.NewPCG(seed, 7))
	return func(int) models.Request {
		return models.Request{Op: models.Read, Offset: rng.Int64N(span/bs) * bs, Length: bs}
	}
}

// sequential returns a generator of back-to-back requests of size bs from
// offset base.
func sequential(op models.Op, base, bs int64) func(int) models.Request {
	return func(i int) models.Request {
		return models.Request{Op: op, Offset: base + int64(i)*bs, Length: bs}
	}
}

func within(got, want, tol float64) bool { return got >= want*(1-tol) && got <= want*(1+tol) }

// qd1Expect is the classic random-access rate: one average seek, half a
// revolution and the command overhead per request.
func qd1Expect(c Config) float64 {
	c = c.withDefaults()
	per := c.AvgSeek.Seconds() + 30/c.RPM + c.Overhead.Seconds()
	return 1 / per
}
