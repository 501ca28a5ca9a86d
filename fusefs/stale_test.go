package fusefs

import (
	"testing"
)

func TestMountEntryShare(t *testing.T) {
	for _, tc := range []struct {
		e    MountEntry
		want bool
	}{
		{MountEntry{FSType: "fuse.nasemu", Source: "nasemu:share"}, true},
		{MountEntry{FSType: "fuse.sshfs", Source: "nasemu:share"}, false},
		{MountEntry{FSType: "fuse.nasemu", Source: "other"}, false},
	} {
		if got := tc.e.Share(); got != tc.want {
			t.Errorf("%+v: Share() = %v", tc.e, got)
		}
	}
	if _, ok := MountAt("/no/such/mountpoint"); ok {
		t.Error("MountAt found a mount at a path that does not exist")
	}
}
