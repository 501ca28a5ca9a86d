package raid

import (
	"testing"

	"github.com/nasemu/nasemu/models/fixed"
)

// TestStripeBytes: the data of one full stripe, which md doubles for its
// read-ahead: members holding data × chunk for striped levels, 0 for the
// rest.
func TestStripeBytes(t *testing.T) {
	for _, c := range []struct {
		level Level
		n     int
		want  int64
	}{
		{RAID0, 4, 4 * 64 << 10},
		{RAID5, 4, 3 * 64 << 10},
		{RAID6, 6, 4 * 64 << 10},
		{RAID10, 4, 2 * 64 << 10},
		{RAID1, 2, 0},
		{JBOD, 3, 0},
	} {
		a := mustNew(t, Config{Level: c.level, Chunk: 64 << 10}, fixedMembers(t, c.n, fixed.Config{Capacity: 1 << 30}))
		if got := a.StripeBytes(); got != c.want {
			t.Errorf("%s of %d: %d, want %d", c.level, c.n, got, c.want)
		}
	}
}
