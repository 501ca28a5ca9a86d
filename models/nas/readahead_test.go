package nas

import (
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fixed"
)

// stripedStorage is a fixed device that says it is striped, and records
// the longest read it was asked for.
type stripedStorage struct {
	*fixed.Device
	stripe, longest int64
}

func (s *stripedStorage) StripeBytes() int64 { return s.stripe }

func (s *stripedStorage) Submit(at time.Duration, r models.Request) (time.Duration, error) {
	if r.Op == models.Read {
		s.longest = max(s.longest, r.Length)
	}
	return s.Device.Submit(at, r)
}

// TestStripedReadAhead: a single buffered stream on a striped array reads
// ahead twice the stripe (md's read-ahead of a RAID 0/5/6/10), so one
// stream keeps every member busy; a read_ahead the config states is kept;
// storage that is not striped gets Linux's 128 KiB.
func TestStripedReadAhead(t *testing.T) {
	for _, c := range []struct {
		stripe, readAhead, want int64
	}{
		{4 * 64 << 10, 0, 2 * 4 * 64 << 10},
		{4 * 64 << 10, 128 << 10, 128 << 10},
		{0, 0, DefaultReadAhead},
	} {
		d, err := fixed.New(fixed.Config{Capacity: 64 * models.GiB, Units: 4, Read: time.Millisecond, BytesPerSecond: 150e6})
		if err != nil {
			t.Fatal(err)
		}
		s := &stripedStorage{Device: d, stripe: c.stripe}
		ctl, err := New(Config{RAM: models.Bytes(models.GiB), ReadAhead: models.Bytes(c.readAhead)}, s)
		if err != nil {
			t.Fatal(err)
		}
		var at time.Duration
		for off := int64(0); off < 64<<20; off += 64 << 10 {
			if at, err = ctl.Submit(at, models.Request{Op: models.Read, Offset: off, Length: 64 << 10}); err != nil {
				t.Fatal(err)
			}
		}
		// The first miss reads the request and the window after it.
		if s.longest != c.want+64<<10 {
			t.Errorf("stripe %d, read_ahead %d: longest read %d, want the 64 KiB request and %d ahead", c.stripe, c.readAhead, s.longest, c.want)
		}
	}
}
