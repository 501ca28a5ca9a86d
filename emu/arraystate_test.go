package emu

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fixed"
	"github.com/nasemu/nasemu/models/raid"
)

func raidVolume(t *testing.T) *Volume {
	t.Helper()
	members := make([]models.Device, 4)
	for i := range members {
		d, err := fixed.New(fixed.Config{Capacity: 8 << 20})
		if err != nil {
			t.Fatal(err)
		}
		members[i] = d
	}
	a, err := raid.New(raid.Config{Level: raid.RAID5}, members)
	if err != nil {
		t.Fatal(err)
	}
	v, err := NewVolume(a, NewMemStore(a.Capacity()), Options{Clock: NewWallClock(1, 0)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { v.Close() })
	return v
}

// TestArrayStateSaved: a failed member saved in a directory fails again
// in a new volume of the same model; an optimal array saves nothing; the
// saved file is read only when it is a regular file of bounded size.
func TestArrayStateSaved(t *testing.T) {
	dir := t.TempDir()
	v := raidVolume(t)
	if err := v.SaveArrays(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, ArrayStateFile)); !os.IsNotExist(err) {
		t.Fatalf("an optimal array saved a state: %v", err)
	}
	if err := v.FailMember(3); err != nil {
		t.Fatal(err)
	}
	if err := v.SaveArrays(dir); err != nil {
		t.Fatal(err)
	}
	again := raidVolume(t)
	if err := again.LoadArrays(dir, nil); err != nil {
		t.Fatal(err)
	}
	if a := again.Arrays()[0]; a.State != "degraded" || len(a.Failed) != 1 || a.Failed[0] != 3 {
		t.Errorf("loaded array: %+v, want degraded with member 3 failed", a)
	}

	path := filepath.Join(dir, ArrayStateFile)
	other := filepath.Join(dir, "elsewhere")
	if err := os.Rename(path, other); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, path); err != nil {
		t.Fatal(err)
	}
	if err := raidVolume(t).LoadArrays(dir, nil); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("a symlinked state: %v, want refused", err)
	}
	os.Remove(path)
	if err := os.WriteFile(path, make([]byte, maxArrayState+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := raidVolume(t).LoadArrays(dir, nil); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("an oversized state: %v, want refused", err)
	}
}
