package nas

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fixed"
	"github.com/nasemu/nasemu/models/raid"
)

// parityArray is a 4-member RAID 5 of members far faster than md's stripe
// thread: 20 µs per I/O, 64 at a time each.
func parityArray(t *testing.T, level raid.Level) *raid.Array {
	t.Helper()
	var members []models.Device
	for range 4 {
		d, err := fixed.New(fixed.Config{Capacity: 16 * models.GiB, Units: 64, Read: 20 * time.Microsecond, Write: 20 * time.Microsecond, BytesPerSecond: 3e9})
		if err != nil {
			t.Fatal(err)
		}
		members = append(members, d)
	}
	a, err := raid.New(raid.Config{Level: level, Chunk: models.Bytes(64 * models.KiB)}, members)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Under Linux md, a RAID 5 array's 4 KiB random writes are read-modify-
// writes whose four member pages md's one stripe thread handles, however
// many cores the NAS has: they top out at 1 / (4 × MDStripePage) on the
// reference core. Reads bypass the thread, and other RAID stacks have none.
func TestMDStripeThread(t *testing.T) {
	run := func(stack string, level raid.Level, op models.Op) float64 {
		cfg := Config{CPU: CPU{Cores: 16}, DirectIO: true, RAIDStack: stack}
		c, err := New(cfg, parityArray(t, level))
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		const n = 20000
		dones := closedLoop(t, c, 0, 64, n, func(int) models.Request {
			return models.Request{Op: op, Offset: rng.Int64N(8*models.GiB/4096) * 4096, Length: 4096}
		})
		return n / last(dones).Seconds()
	}
	ceiling := 1 / (4 * MDStripePage).Seconds()
	if got := run(RAIDStackMD, raid.RAID5, models.Write); got > ceiling*1.01 || got < ceiling*0.9 {
		t.Errorf("md RAID 5 4K random writes: %.0f IOPS, want the stripe thread's %.0f", got, ceiling)
	}
	if got := run(RAIDStackNone, raid.RAID5, models.Write); got < ceiling*1.5 {
		t.Errorf("RAID 5 4K random writes without md: %.0f IOPS, want well above md's %.0f", got, ceiling)
	}
	if got := run(RAIDStackMD, raid.RAID5, models.Read); got < ceiling*1.5 {
		t.Errorf("md RAID 5 4K random reads: %.0f IOPS, want them past the stripe thread (%.0f)", got, ceiling)
	}
	if got := run(RAIDStackMD, raid.RAID10, models.Write); got < ceiling*1.5 {
		t.Errorf("md RAID 10 4K random writes: %.0f IOPS, want no stripe thread (%.0f)", got, ceiling)
	}
}

// A sequential stream of buffered writes reaches a parity array as
// full-stripe writes: writeback cuts its I/Os on the array's stripe
// boundaries (writebackPages), as Linux's plugged writeback reaches md.
// Cut at 1 MiB, which 3 data chunks of 64 KiB do not divide, nearly every
// writeback I/O would end in a read-modify-write.
func TestWritebackFullStripes(t *testing.T) {
	a := parityArray(t, raid.RAID5)
	c, err := New(Config{CPU: CPU{Cores: 4}, RAM: models.Bytes(512 * models.MiB), RAIDStack: RAIDStackMD}, a)
	if err != nil {
		t.Fatal(err)
	}
	const size = 256 * models.MiB
	var at time.Duration
	for off := int64(0); off < size; off += models.MiB {
		if at, err = c.Submit(at, models.Request{Op: models.Write, Offset: off, Length: models.MiB}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Submit(at, models.Request{Op: models.Flush}); err != nil {
		t.Fatal(err)
	}
	written, _ := models.Sum(a, "member_bytes_written")
	read, _ := models.Sum(a, "member_bytes_read")
	// 256 MiB of data and a third of it in parity; at most the stream's
	// last, partial stripe is read first (two chunks).
	if want := float64(size) * 4 / 3; written < want || written > want+float64(a.StripeBytes()) {
		t.Errorf("members wrote %.0f bytes, want %.0f: a parity chunk per stripe", written, want)
	}
	if read > float64(2*64*models.KiB) {
		t.Errorf("members read %.0f bytes for a sequential stream of writes: partial stripes", read)
	}
}
