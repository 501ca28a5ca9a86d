package nas

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/devicetest"
	"github.com/nasemu/nasemu/models/raid"
)

// A crypto engine holds the decryption of every read in flight: direct
// reads of an encrypted share, from storage that takes 2 to 14 ms and
// completes them out of order, on eight cores that are never the limit,
// complete at min(QD / latency, the engine's rate / block size).
//
// Each read books its decryption on the engine for when its data arrives,
// out of order. The engine's calendar of 32 intervals forgot future ones
// past some 32 reads in flight and placed nothing before them: at QD256
// 4 KiB reads on a 300 MB/s engine ran at 26,011 IOPS, 31,869 due. And
// the engine booked each decryption whole, so a gap too short for it
// stayed idle: 16 KiB reads at QD64 on a 100 MB/s engine ran at 5,470,
// 10 % below its 6,104.
func TestEngineHoldsDeepQueues(t *testing.T) {
	for _, tc := range []struct {
		bs   int64
		rate float64 // the engine's, bytes/s
		qd   int
	}{
		{4096, 300e6, 64},  // the queue's limit
		{4096, 300e6, 256}, // the queue's limit, the engine 43 % busy
		{4096, 100e6, 256}, // the engine's
		{16384, 100e6, 64}, // the engine's
		{65536, 100e6, 16}, // the engine's
	} {
		cfg := small()
		cfg.DirectIO, cfg.Encrypted = true, true
		cfg.CPU.Cores = 8
		cfg.CPU.HasCryptoOffload, cfg.CPU.CryptoEngine, cfg.CPU.OffloadAESRate = true, true, models.Bytes(tc.rate)
		c, err := New(cfg, &devicetest.Scattered{Lo: 2 * time.Millisecond, Hi: 14 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		devicetest.DeepQueue(t, fmt.Sprintf("%d KiB reads, %.0f MB/s engine", tc.bs>>10, tc.rate/1e6), c, 0, tc.qd, tc.rate/float64(tc.bs),
			devicetest.RandomReads(1, tc.bs, 8*models.GiB))
	}
}

// A drive bus holds every request in flight: 4 KiB random I/O at QD256
// to drives that take 2 to 14 ms and complete out of order completes at
// min(QD / latency, the resource's ceiling) through the bus's data path
// (8 drives on 1 GB/s), a port's own link (one drive on SATA 6 Gb/s) and
// the controller's command processor (RAID 5 writes, four commands each
// at 7.5 µs, over 4 drives).
//
// A read's transfer is booked for when its drive has the data, and a
// RAID 5 write's write phase for when its reads complete, out of order.
// When these calendars kept 32 intervals they forgot future bookings past
// some 32 requests in flight and placed nothing before them: 30 % writes
// ran at 24,554 IOPS through the bus and 23,319 through the port of about
// 32,000, and RAID 5 writes at 4,074 through the command processor of
// about 16,000.
func TestBusHoldsDeepQueues(t *testing.T) {
	const qd = 256
	mixed := func(writes int) func(int) models.Request {
		rng := rand.New(rand.NewPCG(1, 2))
		return func(int) models.Request {
			op := models.Read
			if rng.IntN(100) < writes {
				op = models.Write
			}
			return models.Request{Op: op, Offset: rng.Int64N(1<<20) * 4096, Length: 4096}
		}
	}
	ports := func(cfg BusConfig, n int) []*Port {
		bus, err := NewBus(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var out []*Port
		for range n {
			out = append(out, bus.Attach(&devicetest.Scattered{Lo: 2 * time.Millisecond, Hi: 14 * time.Millisecond}))
		}
		return out
	}
	devicetest.DeepQueue(t, "bus data, 30 % writes", &spread{ports: ports(BusConfig{Rate: 1e9}, 8), k: new(int)}, 0, qd, 1e9/4096, mixed(30))
	devicetest.DeepQueue(t, "port link, 30 % writes", &spread{ports: ports(BusConfig{PortRate: models.Bytes(SATA3)}, 1), k: new(int)}, 0, qd, SATA3/4096, mixed(30))

	const perCommand = 7500 * time.Nanosecond
	var members []models.Device
	for _, p := range ports(BusConfig{PerCommand: perCommand}, 4) {
		members = append(members, p)
	}
	a, err := raid.New(raid.Config{Level: raid.RAID5, Chunk: models.Bytes(64 * models.KiB)}, members)
	if err != nil {
		t.Fatal(err)
	}
	devicetest.DeepQueue(t, "commands, RAID 5 writes", a, 0, qd, 1/(4*perCommand).Seconds(), mixed(100))
	// Saturated: the processor never idles while commands wait, so RAID 5
	// writes run at its rate (whole bookings left the slivers between
	// those booked ahead unused: 30,463 of 33,333).
	devicetest.DeepQueue(t, "commands, RAID 5 writes, saturated", a, time.Hour, 4*qd, 1/(4*perCommand).Seconds(), mixed(100))
}

// A local client's thread and md's stripe thread book their work as
// requests arrive, not ahead for when I/O completes, so their calendars
// (Timelines of 32 intervals) lose nothing at depth: one thread of direct
// 4 KiB reads at QD256 (15 µs of the thread a read, 8 cores) and 4 KiB
// RAID 5 writes through md at QD256 (4 pages of its thread a write), over
// storage that completes out of order, run at min(QD / latency, the
// thread's rate).
func TestThreadsHoldDeepQueues(t *testing.T) {
	const qd = 256
	const perCall = 15 * time.Microsecond
	cfg := small()
	cfg.Local, cfg.DirectIO = true, true
	cfg.CPU.Cores = 8
	cfg.CPU.PerRequest, cfg.CPU.PerIO = 3*time.Microsecond, perCall-3*time.Microsecond
	c, err := New(cfg, &devicetest.Scattered{Lo: 2 * time.Millisecond, Hi: 14 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	devicetest.DeepQueue(t, "one local thread's reads", c, 0, qd, 1/perCall.Seconds(), devicetest.RandomReads(1, 4096, 8*models.GiB))

	var members []models.Device
	for range 4 {
		members = append(members, &devicetest.Scattered{Lo: 800 * time.Microsecond, Hi: 5600 * time.Microsecond})
	}
	a, err := raid.New(raid.Config{Level: raid.RAID5, Chunk: models.Bytes(64 * models.KiB)}, members)
	if err != nil {
		t.Fatal(err)
	}
	md, err := New(Config{CPU: CPU{Cores: 16}, DirectIO: true, RAIDStack: RAIDStackMD}, a)
	if err != nil {
		t.Fatal(err)
	}
	writes := rand.New(rand.NewPCG(1, 2))
	devicetest.DeepQueue(t, "md RAID 5 writes", md, 0, qd, 1/(4*MDStripePage).Seconds(), func(int) models.Request {
		return models.Request{Op: models.Write, Offset: writes.Int64N(8*models.GiB/4096) * 4096, Length: 4096}
	})
}
