package fusefs

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// A control socket nobody answers on (its emulator was killed) is
// replaced; one an emulator answers on, or a file that is not a socket,
// is not.
func TestRemoveStaleSocket(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "ctl.sock")
	if removed, err := RemoveStaleSocket(sock); removed || err != nil {
		t.Errorf("no socket: removed %v, %v", removed, err)
	}

	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	if removed, err := RemoveStaleSocket(sock); removed || !errors.Is(err, ErrSocketInUse) {
		t.Errorf("a live socket: removed %v, %v; want ErrSocketInUse", removed, err)
	}
	// A killed process leaves the socket file behind.
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	if removed, err := RemoveStaleSocket(sock); !removed || err != nil {
		t.Errorf("a stale socket: removed %v, %v", removed, err)
	}
	if _, err := os.Lstat(sock); !os.IsNotExist(err) {
		t.Errorf("the stale socket is still there: %v", err)
	}

	file := filepath.Join(dir, "not-a-socket")
	os.WriteFile(file, []byte("data"), 0o600)
	if removed, err := RemoveStaleSocket(file); removed || err == nil {
		t.Errorf("a regular file: removed %v, %v; want it refused", removed, err)
	}
	if _, err := os.Stat(file); err != nil {
		t.Errorf("the regular file: %v", err)
	}
}

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
