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
// itself reaches the NAS as Direct (it bypasses the page cache); a remote
// client's (SMB, iSCSI) reaches it without the flag, which concerns the
// client's cache only; write-through passes on either way.
func TestDirectReachesServer(t *testing.T) {
	for _, c := range []struct {
		pc     Config
		lc     link.Config
		direct bool
	}{
		{Config{Protocol: Local}, link.Config{Kind: "local"}, true},
		{Config{Protocol: SMB3}, link.Config{Kind: "1gbe"}, false},
		{Config{Protocol: ISCSI}, link.Config{Kind: "1gbe"}, false},
	} {
		nas := &flagNAS{fakeNAS: fakeNAS{capacity: 64 * gib, io: time.Millisecond}}
		d := newStack(t, c.pc, c.lc, nas)
		const n = 1 << 20
		for i, r := range []models.Request{
			{Op: models.Read, Offset: 0, Length: n, Direct: true},
			{Op: models.Write, Offset: 8 * n, Length: n, Direct: true},
			{Op: models.Write, Offset: 16 * n, Length: n, WriteThrough: true},
		} {
			nas.seen = nil
			if _, err := d.Submit(time.Duration(i)*time.Second, r); err != nil {
				t.Fatal(err)
			}
			for _, got := range nas.seen {
				if got.Direct != (r.Direct && c.direct) || got.WriteThrough != r.WriteThrough {
					t.Errorf("%s: %+v reached the NAS as %+v", c.pc.Protocol, r, got)
				}
			}
			if len(nas.seen) == 0 {
				t.Errorf("%s: %+v did not reach the NAS", c.pc.Protocol, r)
			}
		}
	}
}
