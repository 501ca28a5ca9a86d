package ssd

import (
	"slices"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
)

// TestNCQTags: 64 reads issued at once, each to its own die, whose sense
// takes most of a millisecond (tR 1 ms, less on lower pages). An NVMe drive takes them all and they complete
// together; a SATA drive takes 32 (NCQ's tags), and each of the others
// starts when one of those completes, a whole sense later.
func TestNCQTags(t *testing.T) {
	const ms = time.Millisecond
	for _, iface := range []string{NVMe, SATA} {
		c := testConfig(64<<20, 1.2)
		c.Interface = iface
		c.Channels, c.DiesPerChannel, c.BlocksPerDie = 8, 8, 8 // 256 MiB raw
		c.ReadTLC, c.ReadSLC = ms, ms
		d, err := New(c, 1)
		if err != nil {
			t.Fatal(err)
		}
		group := int64(c.PageSize) // one plane: a page group is one page
		at, err := d.Submit(0, models.Request{Op: models.Write, Offset: 0, Length: 64 * group})
		if err != nil {
			t.Fatal(err)
		}
		if at, err = d.Submit(at, models.Request{Op: models.Flush}); err != nil {
			t.Fatal(err)
		}
		t0 := at + 100*ms
		var done []time.Duration
		dies := map[int]bool{}
		for i := range int64(64) {
			p := int64(d.fwd.get(i*group/slotSize)) - 1
			dies[d.dieOf(p)] = true
			end, err := d.Submit(t0, models.Request{Op: models.Read, Offset: i * group, Length: slotSize})
			if err != nil {
				t.Fatal(err)
			}
			done = append(done, end-t0)
		}
		if len(dies) != 64 {
			t.Fatalf("%v: the 64 reads hit %d dies, want 64", iface, len(dies))
		}
		slices.Sort(done)
		switch iface {
		case NVMe:
			if done[63] > done[0]+ms/2 {
				t.Errorf("NVMe: reads complete from %v to %v, want together", done[0], done[63])
			}
		case SATA:
			// The first 32 share the half-duplex link; the 33rd starts
			// when the first completes and needs a sense of its own.
			if done[31] > done[0]+ms/2 || done[32] < done[0]*3/2 {
				t.Errorf("SATA: the 32nd read completes at %v and the 33rd at %v, want near %v and a second sense later", done[31], done[32], done[0])
			}
		}
	}
}
