package proto

import (
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/link"
)

// flagNAS records the flags of the data requests that reach it.
type flagNAS struct {
	fakeNAS
	seen []models.Request
}

func (f *flagNAS) Submit(at time.Duration, r models.Request) (time.Duration, error) {
	if r.Op == models.Read || r.Op == models.Write {
		f.seen = append(f.seen, r)
	}
	return f.fakeNAS.Submit(at, r)
}

// TestDirectReachesServer: an unbuffered request of a client on the NAS
// itself reaches the NAS as Direct; a remote client's (SMB, iSCSI) reaches
// it buffered, its writes write-through, and is not served from the
// client's cache: a sequential unbuffered read in an open file is one
// request on the wire, not the read-ahead of the next, and an unbuffered
// write over iSCSI completes when the LUN has it, not at once.
func TestDirectReachesServer(t *testing.T) {
	for _, c := range []struct {
		pc                   Config
		lc                   link.Config
		direct, writeThrough bool
	}{
		{Config{Protocol: Local}, link.Config{Kind: "local"}, true, false},
		{Config{Protocol: SMB3}, link.Config{Kind: "1gbe"}, false, true},
		{Config{Protocol: ISCSI}, link.Config{Kind: "1gbe"}, false, true},
	} {
		nas := &flagNAS{fakeNAS: fakeNAS{capacity: 64 * gib, io: time.Millisecond}}
		d := newStack(t, c.pc, c.lc, nas)
		const n = 1 << 20
		at, err := d.Submit(0, models.Request{Op: models.Open, Length: 64 << 20})
		if err != nil {
			t.Fatal(err)
		}
		nas.seen = nil // the client filesystem's own reads of an open
		for i := range int64(4) {
			if at, err = d.Submit(at, models.Request{Op: models.Read, Offset: i * n, Length: n, Direct: true}); err != nil {
				t.Fatal(err)
			}
		}
		reads := len(nas.seen)
		w, err := d.Submit(at, models.Request{Op: models.Write, Offset: 8 * n, Length: n, Direct: true})
		if err != nil {
			t.Fatal(err)
		}
		if w-at < time.Millisecond {
			t.Errorf("%s: an unbuffered write completed after %v, before the NAS's 1 ms", c.pc.Protocol, w-at)
		}
		for _, r := range nas.seen[:reads] {
			if r.Direct != c.direct || r.WriteThrough {
				t.Errorf("%s: read reached the NAS as %+v, want direct %v", c.pc.Protocol, r, c.direct)
			}
		}
		var got int64
		for _, r := range nas.seen[:reads] {
			got += r.Length
		}
		if got != 4*n {
			t.Errorf("%s: %d bytes read at the NAS for 4 unbuffered reads of %d (client read-ahead?)", c.pc.Protocol, got, n)
		}
		for _, r := range nas.seen[reads:] {
			if r.Direct != c.direct || r.WriteThrough != c.writeThrough {
				t.Errorf("%s: write reached the NAS as %+v, want direct %v write-through %v", c.pc.Protocol, r, c.direct, c.writeThrough)
			}
		}
	}
}
