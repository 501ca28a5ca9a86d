package link

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models/internal/digest"
)

// goldenDigest pins every arrival time and counter Send gives over seeded
// traffic on several kinds of link. Speed work (here or in
// models/timeline) must leave it bit-identical. Update it only for a
// deliberate change of behaviour, and say so.
const goldenDigest = 0x961f9e29b8193cee

// TestGoldenDigest sends requests and responses of every size class, in
// both directions, on single, LACP and multichannel links, with messages
// booked for the future (a read's data, sent when the disk has it) and
// messages from the past interleaved, and hashes every answer.
func TestGoldenDigest(t *testing.T) {
	h := digest.New()
	put := h.Int
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
		for range 20_000 {
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
			put(int64(lane))
			put(int64(l.Send(t0, lane, dir, n)))
		}
		for _, c := range l.Counters() {
			h.String(c.Name)
			put(int64(c.Value))
		}
	}
	if got := h.Sum(); got != goldenDigest {
		t.Errorf("digest %#x, want %#x: the link's answers changed", got, uint64(goldenDigest))
	}
}
