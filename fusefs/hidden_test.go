package fusefs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/models/fixed"
)

// The root's listing shows the clients' files only: not the allocator's
// state, the journal's holding directory or nas's SMB probe file, which
// a lookup by name still finds (the prober opens it through smbd).
func TestOwnFilesUnlisted(t *testing.T) {
	model, err := fixed.New(fixed.Config{Capacity: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	backing := t.TempDir()
	os.WriteFile(filepath.Join(backing, StateFile), []byte("{}"), 0o600)
	s := mountShare(t, model, &emu.VirtualClock{}, backing, Options{})
	probe := ProbePrefix + "4242"
	for _, name := range []string{"data", probe} {
		if err := os.WriteFile(s.path(name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(s.path("data")); err != nil { // fills the holding directory
		t.Fatal(err)
	}
	os.WriteFile(s.path("kept"), nil, 0o644)
	ents, err := os.ReadDir(s.mnt)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != "kept" {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("root lists %q, want only [kept]", names)
	}
	if b, err := os.ReadFile(s.path(probe)); err != nil || string(b) != probe {
		t.Errorf("lookup of the probe file: %q, %v", b, err)
	}
	for _, own := range []string{StateFile, HoldDir} {
		if _, err := os.Lstat(filepath.Join(backing, own)); err != nil {
			t.Errorf("%s is not in the backing directory (the test hides nothing): %v", own, err)
		}
	}
}
