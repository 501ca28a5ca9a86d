package fusefs

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nasemu/nasemu/emu"
	"golang.org/x/sys/unix"
)

// exchange exchanges two paths (renameat2 RENAME_EXCHANGE).
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}

// journalShare mounts a zero-cost share for the journal tests.
func journalShare(t *testing.T, opts Options) *share {
	t.Helper()
	return mountShare(t, freeModel(t, 1<<30), &emu.VirtualClock{}, "", opts)
}

// writeSynced writes a file through the share and fsyncs it, which
// commits the running transaction.
func writeSynced(t *testing.T, path string, data []byte) {
	t.Helper()
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := fh.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := fh.Sync(); err != nil {
		t.Fatal(err)
	}
}

// writeUnsynced writes a file through the share without an fsync.
func writeUnsynced(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// syncDir fsyncs a directory of the share: a commit, like any fsync.
func syncDir(t *testing.T, path string) {
	t.Helper()
	d, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		t.Fatal(err)
	}
}

// powerLoss simulates a power loss through the control interface.
func (s *share) powerLoss(t *testing.T) ControlResponse {
	t.Helper()
	resp := s.fs.Control(ControlRequest{Cmd: "power-loss"})
	if !resp.OK {
		t.Fatalf("power-loss: %+v", resp)
	}
	return resp
}

// gone checks that nothing is at path.
func gone(t *testing.T, path, why string) {
	t.Helper()
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s: %s exists after the power loss (err %v)", why, path, err)
	}
}

// holds checks the file at path holds data.
func holds(t *testing.T, path string, data []byte, why string) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%s: %v", why, err)
		return
	}
	if !bytes.Equal(got, data) {
		t.Errorf("%s: %s holds %d bytes (%.20q), want %d (%.20q)", why, path, len(got), got, len(data), data)
	}
}

// heldFiles returns the entries of the backing directory's holding
// directory.
func heldFiles(s *share) []string {
	ents, _ := os.ReadDir(filepath.Join(s.backing, HoldDir))
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// statfsFree returns the free bytes statfs reports on the mount.
func statfsFree(t *testing.T, mnt string) int64 {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(mnt, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bfree) * st.Bsize
}

// allocFree returns the allocator's free bytes: what a write can use now.
func allocFree(f *FS) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.alloc.Free()
}

// TestPowerLossUndoesCreates: a file created since the last commit is gone
// after a power loss, one created and fsynced is there with its data, and
// links made since the commit go too.
func TestPowerLossUndoesCreates(t *testing.T) {
	s := journalShare(t, Options{})
	synced := randBytes(1, 50_000)
	writeSynced(t, s.path("synced"), synced)
	writeUnsynced(t, s.path("unsynced"), randBytes(2, 30_000))
	if err := os.Symlink("synced", s.path("symlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(s.path("synced"), s.path("hardlink")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(s.path("fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := used(s.fs)

	resp := s.powerLoss(t)
	if resp.LostChanges != 4 || resp.LostBytes != 30_000 {
		t.Errorf("power loss undid %d changes and %d bytes, want 4 (create, symlink, link, mknod) and 30000", resp.LostChanges, resp.LostBytes)
	}
	for _, name := range []string{"unsynced", "symlink", "hardlink", "fifo"} {
		gone(t, s.path(name), "created since the last commit")
		gone(t, filepath.Join(s.backing, name), "in the backing directory")
	}
	holds(t, s.path("synced"), synced, "created, written and fsynced")
	var st syscall.Stat_t
	if err := syscall.Stat(s.path("synced"), &st); err != nil || st.Nlink != 1 {
		t.Errorf("synced file: %d links after its hard link was undone (err %v)", st.Nlink, err)
	}
	if want := int64(50_000+BlockSize-1) / BlockSize * BlockSize; used(s.fs) != want || before <= want {
		t.Errorf("allocated %d bytes after the power loss (%d before), want %d: the undone file's blocks are freed", used(s.fs), before, want)
	}
	if ents, _ := os.ReadDir(s.mnt); len(ents) != 1 {
		t.Errorf("root lists %d entries after the power loss, want 1", len(ents))
	}
	// The names are free again.
	writeSynced(t, s.path("unsynced"), []byte("again"))
	holds(t, s.path("unsynced"), []byte("again"), "re-created after the power loss")
}

// TestPowerLossUndoesRename: the classic write-temp-then-rename. Without
// an fsync after the rename, a power loss brings the old target back.
func TestPowerLossUndoesRename(t *testing.T) {
	s := journalShare(t, Options{})
	old, new := []byte("old contents"), []byte("new contents, longer")

	t.Run("no-fsync", func(t *testing.T) {
		writeSynced(t, s.path("target"), old)
		writeUnsynced(t, s.path("tmp"), new)
		if err := os.Rename(s.path("tmp"), s.path("target")); err != nil {
			t.Fatal(err)
		}
		holds(t, s.path("target"), new, "before the power loss")
		s.powerLoss(t)
		holds(t, s.path("target"), old, "renamed over without any fsync")
		gone(t, s.path("tmp"), "the temporary file, never committed")
		if held := heldFiles(s); len(held) != 0 {
			t.Errorf("holding directory keeps %v after the power loss", held)
		}
	})

	t.Run("fsync-before-only", func(t *testing.T) {
		writeSynced(t, s.path("target"), old)
		writeSynced(t, s.path("tmp"), new)
		if err := os.Rename(s.path("tmp"), s.path("target")); err != nil {
			t.Fatal(err)
		}
		fh, err := os.OpenFile(s.path("target"), os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		fh.WriteAt([]byte("unsynced overwrite, after the rename"), 0)
		fh.Close()
		s.powerLoss(t)
		holds(t, s.path("target"), old, "renamed over after an fsync of the temporary file only")
		holds(t, s.path("tmp"), new, "the synced temporary file, at its old name with its synced data")
		os.Remove(s.path("tmp"))
	})

	t.Run("fsync-after", func(t *testing.T) {
		writeSynced(t, s.path("target"), old)
		writeSynced(t, s.path("tmp"), new)
		if err := os.Rename(s.path("tmp"), s.path("target")); err != nil {
			t.Fatal(err)
		}
		writeSynced(t, s.path("other"), []byte("any fsync commits")) // not of the renamed file
		s.powerLoss(t)
		holds(t, s.path("target"), new, "renamed over, then any fsync")
		gone(t, s.path("tmp"), "the renamed temporary file")
		if held := heldFiles(s); len(held) != 0 {
			t.Errorf("holding directory keeps %v after the commit", held)
		}
	})

	t.Run("directory", func(t *testing.T) {
		if err := os.MkdirAll(s.path("d/sub"), 0o755); err != nil {
			t.Fatal(err)
		}
		writeSynced(t, s.path("d/sub/f"), old)
		if err := os.Mkdir(s.path("empty"), 0o755); err != nil {
			t.Fatal(err)
		}
		syncDir(t, s.mnt)
		if err := os.Rename(s.path("d"), s.path("e")); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Rename(s.path("e/sub"), s.path("empty")); err != nil { // over an empty directory (os.Rename refuses)
			t.Fatal(err)
		}
		writeUnsynced(t, s.path("empty/g"), new)
		s.powerLoss(t)
		holds(t, s.path("d/sub/f"), old, "in a renamed directory")
		gone(t, s.path("e"), "a directory's new name")
		gone(t, s.path("empty/g"), "a file created in a moved directory")
		if ents, err := os.ReadDir(s.path("empty")); err != nil || len(ents) != 0 {
			t.Errorf("the directory a rename replaced: %d entries, err %v; want it back, empty", len(ents), err)
		}
		// The share works on through the restored names.
		writeSynced(t, s.path("d/sub/h"), new)
		holds(t, s.path("d/sub/h"), new, "written after the power loss")
	})

	t.Run("exchange", func(t *testing.T) {
		writeSynced(t, s.path("x"), old)
		writeSynced(t, s.path("y"), new)
		if err := exchange(s.path("x"), s.path("y")); err != nil {
			// Only a kernel without renameat2 flags for FUSE may skip,
			// and not in CI; any other error is the share's.
			if os.Getenv("CI") != "true" && (errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS)) {
				t.Skipf("this kernel passes no RENAME_EXCHANGE to FUSE: %v", err)
			}
			t.Fatalf("RENAME_EXCHANGE: %v", err)
		}
		holds(t, s.path("x"), new, "exchanged")
		s.powerLoss(t)
		holds(t, s.path("x"), old, "exchange undone")
		holds(t, s.path("y"), new, "exchange undone")
	})
}

// TestPowerLossUndoesUnlink: a file deleted since the last commit is back
// after a power loss with its synced data; after a commit (an fsync of any
// other file) it is gone and its blocks are free for writes.
func TestPowerLossUndoesUnlink(t *testing.T) {
	s := journalShare(t, Options{})
	data := randBytes(3, 200_000)
	blocks := int64(200_000+BlockSize-1) / BlockSize * BlockSize
	writeSynced(t, s.path("a"), data)
	writeSynced(t, s.path("other"), []byte("x"))

	if err := os.Remove(s.path("a")); err != nil {
		t.Fatal(err)
	}
	gone(t, s.path("a"), "deleted (before any power loss)")
	if held := heldFiles(s); len(held) != 1 {
		t.Fatalf("holding directory has %v, want the deleted file", held)
	}
	s.powerLoss(t)
	holds(t, s.path("a"), data, "deleted without a commit")
	if held := heldFiles(s); len(held) != 0 {
		t.Errorf("holding directory keeps %v after the power loss", held)
	}

	free0, alloc0 := statfsFree(t, s.mnt), allocFree(s.fs)
	if err := os.Remove(s.path("a")); err != nil {
		t.Fatal(err)
	}
	// statfs counts the deleted file's blocks as free at once (as ext4
	// does); the allocator reuses them only after the commit.
	if got := statfsFree(t, s.mnt); got != free0+blocks {
		t.Errorf("statfs free %d after the delete, want %d (+%d)", got, free0+blocks, blocks)
	}
	if got := allocFree(s.fs); got != alloc0 {
		t.Errorf("allocator free %d before the commit, want %d (the blocks are the running transaction's)", got, alloc0)
	}
	fh, err := os.OpenFile(s.path("other"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := fh.Sync(); err != nil {
		t.Fatal(err)
	}
	fh.Close()
	if got := allocFree(s.fs); got != alloc0+blocks {
		t.Errorf("allocator free %d after the commit, want %d", got, alloc0+blocks)
	}
	if got := statfsFree(t, s.mnt); got != free0+blocks {
		t.Errorf("statfs free %d after the commit, want %d", got, free0+blocks)
	}
	if held := heldFiles(s); len(held) != 0 {
		t.Errorf("holding directory keeps %v after the commit", held)
	}
	s.powerLoss(t)
	gone(t, s.path("a"), "deleted, then an fsync of another file")
	if got := statfsFree(t, s.mnt); got != free0+blocks {
		t.Errorf("statfs free %d after the power loss, want %d", got, free0+blocks)
	}
}

// TestPowerLossUndoesDirectories: a tree made since the last commit goes
// as a whole; a directory removed since it comes back with its mode.
func TestPowerLossUndoesDirectories(t *testing.T) {
	s := journalShare(t, Options{})
	if err := os.MkdirAll(s.path("a/b"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeUnsynced(t, s.path("a/b/c"), []byte("c"))
	s.powerLoss(t)
	gone(t, s.path("a"), "mkdir a/b, create a/b/c")
	gone(t, filepath.Join(s.backing, "a"), "in the backing directory")

	// Removed since the last commit: back, with the files in it.
	if err := os.MkdirAll(s.path("x/y"), 0o750); err != nil {
		t.Fatal(err)
	}
	os.Chmod(s.path("x/y"), 0o711)
	z := randBytes(4, 10_000)
	writeSynced(t, s.path("x/y/z"), z)
	if err := os.RemoveAll(s.path("x")); err != nil {
		t.Fatal(err)
	}
	gone(t, s.path("x"), "removed (before any power loss)")
	s.powerLoss(t)
	holds(t, s.path("x/y/z"), z, "in a removed tree")
	if st, err := os.Stat(s.path("x/y")); err != nil || st.Mode().Perm() != 0o711 {
		t.Errorf("removed directory back with mode %v (err %v), want 0711", st.Mode().Perm(), err)
	}
	// And the restored tree can be removed and made again.
	if err := os.RemoveAll(s.path("x")); err != nil {
		t.Fatal(err)
	}
	syncDir(t, s.mnt)
	s.powerLoss(t)
	gone(t, s.path("x"), "removed, then committed")
	if err := os.MkdirAll(s.path("x/y"), 0o755); err != nil {
		t.Errorf("making the tree again: %v", err)
	}
}

// TestPowerLossUndoesTruncate: a truncation since the last commit is
// undone with the file's synced data, whichever call made it; a committed
// one stays.
func TestPowerLossUndoesTruncate(t *testing.T) {
	s := journalShare(t, Options{})
	data := randBytes(5, 100_000)
	truncations := map[string]func(path string) error{
		"truncate": func(path string) error { return os.Truncate(path, 10_001) },
		"ftruncate": func(path string) error {
			fh, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				return err
			}
			defer fh.Close()
			return fh.Truncate(3)
		},
		"o_trunc": func(path string) error { return os.WriteFile(path, []byte("short"), 0o644) },
	}
	for name := range truncations {
		writeSynced(t, s.path(name), data)
	}
	usedBefore := used(s.fs)
	for name, truncate := range truncations {
		if err := truncate(s.path(name)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	if used(s.fs) >= usedBefore {
		t.Errorf("truncations freed nothing: %d bytes allocated, %d before", used(s.fs), usedBefore)
	}
	if resp := s.powerLoss(t); resp.LostChanges != len(truncations) {
		t.Errorf("power loss undid %d changes, want the %d truncations", resp.LostChanges, len(truncations))
	}
	for name := range truncations {
		holds(t, s.path(name), data, name+" without a commit")
	}
	if used(s.fs) != usedBefore {
		t.Errorf("after the power loss %d bytes allocated, want %d as before the truncations", used(s.fs), usedBefore)
	}

	// Committed by an fsync of another file: the truncation stays, the
	// unsynced append after it does not.
	if err := os.Truncate(s.path("truncate"), 10_001); err != nil {
		t.Fatal(err)
	}
	writeSynced(t, s.path("commit"), nil)
	fh, err := os.OpenFile(s.path("truncate"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	fh.Write([]byte("unsynced tail"))
	fh.Close()
	s.powerLoss(t)
	holds(t, s.path("truncate"), data[:10_001], "truncated, committed, appended")
}

// TestJournalInterval: the running transaction commits every
// JournalInterval; changes older than that survive a power loss.
func TestJournalInterval(t *testing.T) {
	const interval = 200 * time.Millisecond
	s := journalShare(t, Options{JournalInterval: interval})
	writeSynced(t, s.path("victim"), []byte("v"))
	if err := os.Remove(s.path("victim")); err != nil {
		t.Fatal(err)
	}
	writeUnsynced(t, s.path("older"), []byte("older"))
	time.Sleep(interval + 50*time.Millisecond)
	writeUnsynced(t, s.path("new"), []byte("new")) // commits the transaction above first
	s.powerLoss(t)
	holds(t, s.path("older"), nil, "created more than an interval before the power loss (its data unsynced)")
	gone(t, s.path("victim"), "deleted more than an interval before the power loss")
	gone(t, s.path("new"), "created just before the power loss")

	// Nothing else happens between a change and the power loss: the
	// commit that happened meanwhile is found at the loss.
	writeSynced(t, s.path("quiet"), []byte("quiet"))
	if err := os.Rename(s.path("quiet"), s.path("renamed")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(interval + 50*time.Millisecond)
	if st := s.fs.Status(); st.PendingChanges != 0 {
		t.Errorf("status: %d pending changes an interval after the last one, want 0", st.PendingChanges)
	}
	s.powerLoss(t)
	holds(t, s.path("renamed"), []byte("quiet"), "renamed an interval before a power loss, nothing since")
	gone(t, s.path("quiet"), "the old name of a committed rename")
}

// TestJournalOff: a negative JournalInterval commits every change at once,
// and a power loss keeps the namespace (undoing only unsynced data).
func TestJournalOff(t *testing.T) {
	s := journalShare(t, Options{JournalInterval: -1})
	writeUnsynced(t, s.path("f"), []byte("unsynced"))
	writeSynced(t, s.path("g"), []byte("g"))
	os.Remove(s.path("g"))
	if held := heldFiles(s); len(held) != 0 {
		t.Errorf("holding directory has %v with the journal off", held)
	}
	if resp := s.powerLoss(t); resp.LostChanges != 0 {
		t.Errorf("power loss undid %d changes with the journal off", resp.LostChanges)
	}
	holds(t, s.path("f"), nil, "created, never synced, journal off")
	gone(t, s.path("g"), "deleted, journal off")
}

// TestHoldDirHidden: the holding directory is neither listed, nor found,
// nor creatable through the share, and it is gone after a clean unmount.
func TestHoldDirHidden(t *testing.T) {
	s := journalShare(t, Options{})
	writeSynced(t, s.path("f"), []byte("f"))
	if err := os.Remove(s.path("f")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s.backing, HoldDir)); err != nil {
		t.Fatalf("no holding directory in the backing directory after a delete: %v", err)
	}
	ents, err := os.ReadDir(s.mnt)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("root lists %q, want nothing", e.Name())
	}
	if _, err := os.Stat(s.path(HoldDir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lookup of the holding directory: %v, want ENOENT", err)
	}
	if _, err := os.Stat(s.path(HoldDir + "/0")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("lookup in the holding directory: %v, want ENOENT", err)
	}
	if err := os.WriteFile(s.path(HoldDir), nil, 0o644); err == nil {
		t.Error("creating a file named like the holding directory succeeded")
	}
	if err := os.Mkdir(s.path(HoldDir), 0o755); err == nil {
		t.Error("making a directory named like the holding directory succeeded")
	}
	writeSynced(t, s.path("g"), []byte("g"))
	if err := os.Rename(s.path("g"), s.path(HoldDir)); err == nil {
		t.Error("renaming onto the holding directory's name succeeded")
	}
	if err := os.Remove(s.path(HoldDir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("removing the holding directory: %v, want ENOENT", err)
	}
	// Below the root the name is an ordinary one.
	os.Mkdir(s.path("sub"), 0o755)
	writeSynced(t, s.path("sub/"+HoldDir), []byte("mine"))
	holds(t, s.path("sub/"+HoldDir), []byte("mine"), "a user file of that name below the root")

	os.Remove(s.path("g"))
	s.unmount(t)
	if _, err := os.Stat(filepath.Join(s.backing, HoldDir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("holding directory left after a clean unmount: %v", err)
	}
	for _, name := range []string{"f", "g"} {
		gone(t, filepath.Join(s.backing, name), "deleted before a clean unmount")
	}
}

// TestRemountAfterKillWithHeldFiles kills the emulator while deleted and
// replaced files wait in the holding directory: the next mount commits the
// deletes, shows no leftover and keeps every live file's synced data.
func TestRemountAfterKillWithHeldFiles(t *testing.T) {
	requireFuse(t)
	backing, mnt := t.TempDir(), usedMountpoint(t.TempDir())
	cmd := startChildEmulator(t, mnt, backing)
	live := map[string][]byte{"keep": randBytes(6, 80_000), "target": randBytes(7, 30_000), "dir/deep": randBytes(8, 5_000)}
	os.Mkdir(filepath.Join(mnt, "dir"), 0o755)
	writeSynced(t, filepath.Join(mnt, "keep"), live["keep"])
	writeSynced(t, filepath.Join(mnt, "dir/deep"), live["dir/deep"])
	writeSynced(t, filepath.Join(mnt, "deleted"), randBytes(9, 60_000))
	writeSynced(t, filepath.Join(mnt, "target"), []byte("replaced"))
	writeSynced(t, filepath.Join(mnt, "tmp"), live["target"])
	if err := os.Remove(filepath.Join(mnt, "deleted")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(mnt, "tmp"), filepath.Join(mnt, "target")); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(filepath.Join(backing, HoldDir)); len(ents) != 2 {
		t.Fatalf("holding directory has %d entries before the kill, want 2", len(ents))
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	syscall.Unmount(mnt, syscall.MNT_DETACH)

	s := mountShare(t, freeModel(t, 1<<30), &emu.VirtualClock{}, backing, Options{})
	if _, err := os.Stat(filepath.Join(backing, HoldDir)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("holding directory after the remount: %v, want it committed and gone", err)
	}
	var names []string
	ents, _ := os.ReadDir(s.mnt)
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "dir keep target" {
		t.Errorf("root lists %v after the remount, want [dir keep target]", names)
	}
	var want int64
	for name, data := range live {
		holds(t, s.path(name), data, "synced live file after a kill and a remount")
		want += int64(len(data)+BlockSize-1) / BlockSize * BlockSize
	}
	if used(s.fs) != want || allocFree(s.fs) != s.fs.Volume().Capacity()/BlockSize*BlockSize-want {
		t.Errorf("allocated %d bytes after the remount, want %d (the live files)", used(s.fs), want)
	}
}

// TestHoldDirNotOurs: a mount refuses a backing directory whose holding
// directory holds what the journal does not make, and deletes none of it.
func TestHoldDirNotOurs(t *testing.T) {
	backing := t.TempDir()
	mine := filepath.Join(backing, HoldDir, "notes.txt")
	os.Mkdir(filepath.Dir(mine), 0o755)
	os.WriteFile(filepath.Join(backing, HoldDir, "17"), []byte("held"), 0o644)
	if err := os.WriteFile(mine, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(freeModel(t, 1<<30), &emu.VirtualClock{}, backing, Options{}); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Errorf("New over a foreign holding directory: %v, want an error saying the name is reserved", err)
	}
	for _, p := range []string{mine, filepath.Join(backing, HoldDir, "17")} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v after the refused mount, want it untouched", p, err)
		}
	}
}
