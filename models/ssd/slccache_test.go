package ssd

import (
	"math"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
)

// TestSLCCacheShrinks: the dynamic cache is what the free user space holds
// in SLC mode, up to the firmware's limit. A drive that lends every free
// block (limit a third of its capacity) has a cache of a third of its free
// space at every fill level; one with a small limit keeps it until the
// free space in SLC mode falls below it.
func TestSLCCacheShrinks(t *testing.T) {
	c := testConfig(64<<20, 1.3)
	user := float64(c.Capacity)
	for _, lim := range []float64{user / 3, user / 30} {
		c.SLCCacheMax, c.SLCCacheMin = models.Bytes(lim), 1<<20
		d, err := New(c, 1)
		if err != nil {
			t.Fatal(err)
		}
		at := time.Duration(0)
		for fill := 0.0; fill < 0.99; fill += 0.1 {
			free := float64(d.geo.userSlots-d.mapped) * slotSize
			if math.Abs(free-(1-fill)*user) > 0.01*user {
				t.Fatalf("%.0f %% full: %.0f bytes free", fill*100, free)
			}
			want := min(lim, 1<<20+free/3)
			if got := counter(t, d, "slc_cache_bytes"); math.Abs(got-want) > 8192 {
				t.Errorf("limit %.0f MiB, %.0f %% full: cache %.2f MiB, want %.2f", lim/(1<<20), fill*100, got/(1<<20), want/(1<<20))
			}
			for off := int64(fill * user); off < int64((fill+0.1)*user) && off < d.Capacity(); off += 1 << 20 {
				done, err := d.Submit(at, models.Request{Op: models.Write, Offset: off, Length: min(1<<20, d.Capacity()-off)})
				if err != nil {
					t.Fatal(err)
				}
				at = done
			}
			at += 5 * time.Second // idle: fold
		}
	}
}
