package cache

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/devicetest"
	"github.com/nasemu/nasemu/models/fixed"
)

// The worker thread holds the deferred work of every request in flight:
// 4 KiB random I/O, 90 % reads that miss, 10 % writes, at QD256 through a
// read-write tier of two SSDs (64 units of 50 µs each: never the limit)
// in front of an array that takes 2 to 14 ms and completes out of order,
// completes at QD / latency (devicetest.DeepQueue). The worker (10 µs a
// fill, a metadata write, an I/O of a cleaning) is about half busy.
//
// Each miss books its fill for when the array has the data, out of order.
// When the worker's calendar kept 32 intervals it forgot future fills
// past some 32 in flight and placed nothing before them, the metadata
// writes that end host writes included: 31,540 IOPS of 35,371.
func TestWorkerHoldsDeepQueues(t *testing.T) {
	var drives []models.Device
	for range 2 {
		d, err := fixed.New(fixed.Config{Capacity: models.GiB, Units: 64, Read: 50 * time.Microsecond, Write: 50 * time.Microsecond, BytesPerSecond: 2e9})
		if err != nil {
			t.Fatal(err)
		}
		drives = append(drives, d)
	}
	tr, err := New(Config{Mode: ReadWrite, Capacity: models.Bytes(512 * models.MiB), FlushDepth: 64}, drives, &devicetest.Scattered{Lo: 2 * time.Millisecond, Hi: 14 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	tr.SetCPU(&fakeCPU{perIO: 10 * time.Microsecond})
	rng := rand.New(rand.NewPCG(1, 2))
	next := func(int) models.Request {
		op := models.Read
		if rng.IntN(10) == 0 {
			op = models.Write
		}
		return models.Request{Op: op, Offset: rng.Int64N(16*models.GiB/4096) * 4096, Length: 4096}
	}
	devicetest.DeepQueue(t, "90 % read misses, 10 % writes", tr, 0, 256, math.Inf(1), next)
}
