package fusefs

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nasemu/nasemu/emu"
)

// TestRemountKeepsDataAndLayout writes files of random data and sizes,
// unmounts, remounts over the same backing directory and verifies every
// checksum — and that the allocator kept each file's layout.
func TestRemountKeepsDataAndLayout(t *testing.T) {
	backing := t.TempDir()
	model := freeModel(t, 1<<30)
	s := mountShare(t, model, &emu.VirtualClock{}, backing, Options{})
	rng := rand.New(rand.NewPCG(11, 12))
	sums := map[string][32]byte{}
	extents := map[string]int{}
	for i := range 30 {
		name := fmt.Sprintf("f%02d", i)
		data := randBytes(uint64(i), rng.IntN(1<<20))
		if err := os.WriteFile(s.path(name), data, 0o644); err != nil {
			t.Fatal(err)
		}
		sums[name] = sha256.Sum256(data)
	}
	// Delete every third file and rewrite some: fragmentation to keep.
	for i := 0; i < 30; i += 3 {
		name := fmt.Sprintf("f%02d", i)
		os.Remove(s.path(name))
		delete(sums, name)
	}
	for name := range sums {
		extents[name], _, _ = s.fs.Layout(name)
	}
	usedBefore := used(s.fs)
	s.unmount(t)

	s2 := mountShare(t, model, &emu.VirtualClock{}, backing, Options{})
	for name, sum := range sums {
		if got := sha256.Sum256(mustRead(t, s2.path(name))); got != sum {
			t.Errorf("%s: checksum differs after remount", name)
		}
		if n, _, _ := s2.fs.Layout(name); n != extents[name] {
			t.Errorf("%s: %d extents after remount, %d before", name, n, extents[name])
		}
	}
	if used(s2.fs) != usedBefore {
		t.Errorf("allocated %d bytes after remount, %d before", used(s2.fs), usedBefore)
	}
}

// TestKillAfterFsyncLosesNothing runs the emulator in a child process,
// writes files through it (fsyncing some), kills it with SIGKILL and checks
// that every fsynced byte is in the backing directory and readable after a
// remount.
func TestKillAfterFsyncLosesNothing(t *testing.T) {
	requireFuse(t)
	backing, mnt := t.TempDir(), usedMountpoint(t.TempDir())
	cmd := startChildEmulator(t, mnt, backing)

	sums := map[string][32]byte{}
	for i := range 20 {
		name := fmt.Sprintf("synced%02d", i)
		data := randBytes(uint64(200+i), (i+1)*77_777)
		fh, err := os.Create(filepath.Join(mnt, name))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fh.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := fh.Sync(); err != nil {
			t.Fatal(err)
		}
		sums[name] = sha256.Sum256(data)
		// Keep the file open and write more without fsync: that may be
		// lost, but must not damage what was synced.
		if i%2 == 0 {
			fh.WriteAt([]byte("unsynced tail"), int64(len(data)))
		}
		fh.Close()
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	syscall.Unmount(mnt, syscall.MNT_DETACH)

	for name, sum := range sums {
		got := mustRead(t, filepath.Join(backing, name))
		n := len(got)
		if i := bytes.Index(got, []byte("unsynced tail")); i > 0 {
			n = i
		}
		if sha256.Sum256(got[:n]) != sum {
			t.Errorf("%s: synced data lost or damaged after SIGKILL", name)
		}
	}
	// A remount over the crashed state re-lays out the files and serves them.
	s := mountShare(t, freeModel(t, 1<<30), &emu.VirtualClock{}, backing, Options{})
	for name, sum := range sums {
		got := mustRead(t, s.path(name))
		if n := bytes.Index(got, []byte("unsynced tail")); n > 0 {
			got = got[:n]
		}
		if sha256.Sum256(got) != sum {
			t.Errorf("%s: differs through the remounted share", name)
		}
	}
	if used(s.fs) == 0 {
		t.Error("remount after a crash allocated nothing for the files")
	}
}

// TestPowerLoss checks that a simulated power loss undoes exactly the
// writes that were not fsynced, and the creates since the last commit.
func TestPowerLoss(t *testing.T) {
	s := mountShare(t, freeModel(t, 1<<30), &emu.VirtualClock{}, "", Options{})
	synced := randBytes(30, 300_000)
	fh, err := os.Create(s.path("f"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	fh.Write(synced)
	if err := fh.Sync(); err != nil {
		t.Fatal(err)
	}
	// Unsynced: an overwrite in the middle and an append.
	fh.WriteAt(bytes.Repeat([]byte{0xAA}, 10_000), 100_000)
	fh.WriteAt(bytes.Repeat([]byte{0xBB}, 50_000), 300_000)
	other := randBytes(31, 20_000)
	os.WriteFile(s.path("never-synced"), other, 0o644)

	resp := s.fs.Control(ControlRequest{Cmd: "power-loss"})
	if !resp.OK || resp.LostBytes < 60_000 {
		t.Fatalf("power-loss: %+v, want ok and at least 60000 bytes lost", resp)
	}
	if got := mustRead(t, s.path("f")); !bytes.Equal(got, synced) {
		t.Errorf("after power loss the file holds %d bytes, equal to the synced contents: %v", len(got), bytes.Equal(got[:min(len(got), len(synced))], synced[:min(len(got), len(synced))]))
	}
	// Created after the last commit (f's fsync): the create is undone.
	if _, err := os.Stat(s.path("never-synced")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file created since the last commit survived the power loss: %v", err)
	}
	if want := int64((300_000 + BlockSize - 1) / BlockSize * BlockSize); used(s.fs) != want {
		t.Errorf("after power loss %d bytes allocated, want %d (the synced file)", used(s.fs), want)
	}
	// The descriptor opened before the power loss is stale; data synced
	// through one opened after it is durable again.
	if _, err := fh.WriteAt([]byte("new"), 0); err == nil {
		t.Error("a write through a descriptor opened before the power loss succeeded")
	}
	fh.Close()
	if fh, err = os.OpenFile(s.path("f"), os.O_RDWR, 0); err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	fh.WriteAt([]byte("new"), 0)
	if err := fh.Sync(); err != nil {
		t.Fatal(err)
	}
	s.fs.PowerLoss()
	if got := mustRead(t, s.path("f")); !bytes.Equal(got[:3], []byte("new")) {
		t.Error("a write synced after the power loss was lost by the next one")
	}
	_ = time.Second
}

// startChildEmulator mounts backing at mnt in a child process (this test
// binary, see childEnv), waits until it serves and returns it, for a test
// to kill; the cleanup kills it and unmounts whatever it left.
func startChildEmulator(t *testing.T, mnt, backing string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mnt+":"+backing)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if Mounted(mnt) {
			syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
	})
	if line, _ := bufio.NewReader(out).ReadString('\n'); strings.TrimSpace(line) != "ready" {
		t.Fatalf("child emulator: %q", line)
	}
	return cmd
}
