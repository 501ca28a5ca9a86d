package link

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nasemu/nasemu/internal/golden"
)

// TestGolden pins every arrival time and counter Send gives over seeded
// traffic on several kinds of link (testdata/links.golden). Speed work
// (here or in models/timeline) must leave it bit-identical. Rewrite it
// (-rewrite) only for a deliberate change of behaviour, and say so.
//
// It sends requests and responses of every size class, in both
// directions, on single, LACP and multichannel links, with messages
// booked for the future (a read's data, sent when the disk has it) and
// messages from the past interleaved, and tabulates every answer: a
// message's latency is its arrival less its send time.
func TestGolden(t *testing.T) {
	runs := golden.NewTable(append([]string{"link"}, golden.Header...)...)
	counters := golden.NewTable("link", "device", "counter", "value")
	for ci, cfg := range []Config{
		{Kind: "1gbe"},
		{Kind: "10gbe", MTU: 9000},
		{Kind: "2.5gbe", Count: 2, Mode: SMBMultichannel},
		{Kind: "1gbe", Count: 4, Mode: LACP},
		{Kind: "fc8"},
		{Kind: "tb3"},
		{Kind: "local"},
	} {
		l := mustNew(t, cfg)
		rng := rand.New(rand.NewPCG(uint64(ci), 3))
		now := time.Duration(0)
		row := golden.NewSeries()
		for i := range 20_000 {
			now += time.Duration(rng.IntN(20_000))
			t0 := now
			switch rng.IntN(8) {
			case 0:
				t0 += time.Duration(rng.IntN(10_000_000))
			case 1:
				t0 -= time.Duration(rng.IntN(2_000_000))
			}
			n := int64(rng.IntN(200))
			switch rng.IntN(4) {
			case 0:
				n = 4096 << rng.IntN(6)
			case 1:
				n = 0
			}
			dir := Dir(rng.IntN(2))
			lane := l.Lane(rng.IntN(16), dir, t0)
			row.Hash(int64(lane))
			row.Done(i, t0, l.Send(t0, lane, dir, n), nil)
		}
		name := fmt.Sprintf("%s-x%d-%v-mtu%d", cfg.Kind, max(cfg.Count, 1), cfg.Mode, cfg.MTU)
		runs.Row(append([]string{name}, row.Cells()...)...)
		golden.Counters(counters, name, "link", l.Counters())
	}
	golden.Check(t, "links", "# link: seeded messages over each link (golden_test.go); latencies in exact µs\n"+
		runs.String()+"\n"+counters.String())
}
