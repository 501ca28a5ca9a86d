package setup

import (
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/link"
	"github.com/nasemu/nasemu/models/proto"
)

// These tests check the composition, not the models: that Build puts the
// link, its count and mode, and the clients' flows where they belong. The
// bounds come from the link's own payload rate.

// seqRead drives dev with flows clients, each reading its own region
// sequentially in 1 MiB requests with qd outstanding, for total bytes, and
// returns each flow's MB/s and the aggregate.
func seqRead(t *testing.T, dev models.Device, flows, qd int, total int64) (perFlow []float64, aggregate float64) {
	t.Helper()
	const bs = 1 << 20
	region := dev.Capacity() / int64(flows) / bs * bs
	type slot struct {
		free time.Duration
		flow int
	}
	slots := make([]slot, 0, flows*qd)
	for f := range flows {
		for range qd {
			slots = append(slots, slot{0, f})
		}
	}
	next := make([]int64, flows)
	bytes := make([]int64, flows)
	last := make([]time.Duration, flows)
	for moved := int64(0); moved < total; moved += bs {
		i := 0
		for j := range slots {
			if slots[j].free < slots[i].free {
				i = j
			}
		}
		f := slots[i].flow
		off := int64(f)*region + next[f]%region
		done, err := dev.Submit(slots[i].free, models.Request{Op: models.Read, Offset: off, Length: bs, Flow: f})
		if err != nil {
			t.Fatal(err)
		}
		next[f] += bs
		bytes[f] += bs
		last[f] = max(last[f], done)
		slots[i].free = done
	}
	var end time.Duration
	for f := range flows {
		perFlow = append(perFlow, float64(bytes[f])/last[f].Seconds()/1e6)
		end = max(end, last[f])
	}
	return perFlow, float64(total) / end.Seconds() / 1e6
}

func loadScaled(t *testing.T, name string) *Setup {
	t.Helper()
	s, err := Load(name, builtinFS, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s.WithDriveCapacity(testCapacity)
}

func payloadMBps(t *testing.T, s *Setup) float64 {
	k, ok := link.LookupKind(s.Link.Kind)
	if !ok {
		t.Fatalf("%s: unknown link kind %s", s.Name, s.Link.Kind)
	}
	return k.PayloadRate(s.Link.MTU) / 1e6
}

// TestComposeLinkBound checks that a network setup's sequential reads are
// held to its link's payload rate, which the same array read locally
// exceeds.
func TestComposeLinkBound(t *testing.T) {
	s := loadScaled(t, "ds1817-raid0-ssd-smb-1g")
	dev, err := s.Build(1)
	if err != nil {
		t.Fatal(err)
	}
	_, got := seqRead(t, dev, 1, 8, 256<<20)
	rate := payloadMBps(t, s)
	if got > rate*1.001 || got < rate*0.6 {
		t.Errorf("%s: %.1f MB/s, want at most the link's %.1f and more than 60%% of it", s.Name, got, rate)
	}
	local := *s
	local.Link = link.Config{Kind: "local"}.WithDefaults()
	local.Protocol = proto.Config{Protocol: proto.Local}.Defaults()
	if err := local.Validate(); err != nil {
		t.Fatal(err)
	}
	ldev, err := local.Build(1)
	if err != nil {
		t.Fatal(err)
	}
	_, l := seqRead(t, ldev, 1, 8, 256<<20)
	if l < 2*rate {
		t.Errorf("%s read locally: %.1f MB/s; 4 SSDs in RAID 0 should pass 2 × 1GbE (%.1f)", s.Name, l, 2*rate)
	}
	t.Logf("1GbE link %.1f MB/s: over SMB %.1f MB/s, locally %.1f MB/s", rate, got, l)
}

// TestComposeLACP checks that the LACP setup's four clients each get a
// link's worth and together more than two links' worth (review 003
// measured 422–427 MB/s over 4 × 1GbE).
func TestComposeLACP(t *testing.T) {
	s := loadScaled(t, "ds1817-raid0-ssd-smb-lacp-4x1g")
	dev, err := s.Build(1)
	if err != nil {
		t.Fatal(err)
	}
	per, agg := seqRead(t, dev, s.Clients, 4, 512<<20)
	rate := payloadMBps(t, s)
	for f, r := range per {
		if r > rate*1.001 {
			t.Errorf("client %d: %.1f MB/s, more than one link carries (%.1f)", f, r, rate)
		}
	}
	if agg < 2*rate || agg > float64(s.Link.Count)*rate*1.001 {
		t.Errorf("aggregate %.1f MB/s over %d × %.1f MB/s: want more than 2 links' worth", agg, s.Link.Count, rate)
	}
	t.Logf("LACP: clients %.1f MB/s, aggregate %.1f MB/s", per, agg)
}

// TestComposeMultichannel checks that SMB Multichannel over 2 × 1GbE lets
// one client pass one link's rate (review 001: +30–90% on sequential
// patterns of a 4-drive RAID 0).
func TestComposeMultichannel(t *testing.T) {
	one := loadScaled(t, "rst001-raid0-wdse-smb-1g")
	two := loadScaled(t, "rst001-raid0-wdse-smb-2x1g")
	var got [2]float64
	for i, s := range []*Setup{one, two} {
		dev, err := s.Build(1)
		if err != nil {
			t.Fatal(err)
		}
		_, got[i] = seqRead(t, dev, 1, 8, 256<<20)
	}
	rate := payloadMBps(t, one)
	if got[0] > rate*1.001 || got[1] < rate*1.2 || got[1] > 2*rate*1.001 {
		t.Errorf("one link %.1f MB/s, two %.1f MB/s; link %.1f MB/s: want the second above 1.2 links' worth", got[0], got[1], rate)
	}
	t.Logf("multichannel: 1 link %.1f MB/s, 2 links %.1f MB/s", got[0], got[1])
}
