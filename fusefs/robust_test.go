package fusefs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nasemu/nasemu/emu"
)

// TestRobustPowerLossStaleDescriptor is issue 20's first point: a file
// written through a descriptor, a power loss, more written through the
// same descriptor and an fsync. The NAS rebooted: the descriptor is stale
// and every call through it fails, so no write or fsync is acknowledged
// and then found undone.
func TestRobustPowerLossStaleDescriptor(t *testing.T) {
	s := journalShare(t, Options{})
	fh, err := os.Create(s.path("f"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	first := randBytes(1, 1<<20)
	if _, err := fh.Write(first); err != nil {
		t.Fatal(err)
	}
	s.powerLoss(t)
	_, werr := fh.Write(randBytes(2, 1<<20))
	serr := fh.Sync()
	if werr == nil || serr == nil {
		_, exists := os.Stat(s.path("f"))
		t.Fatalf("after a power loss, a write through a descriptor opened before it: %v, its fsync: %v (the file: %v)", werr, serr, exists)
	}
	for what, err := range map[string]error{"write": werr, "fsync": serr} {
		if !errors.Is(err, syscall.EIO) {
			t.Errorf("%s through a stale descriptor: %v, want EIO", what, err)
		}
	}
	// Every other call through it fails too, but for fstat: the kernel
	// asks a file's attributes without the descriptor, so the share
	// cannot tell an fstat from a stat and answers by the path (the file
	// is gone: ENOENT).
	var st syscall.Stat_t
	if err := syscall.Fstat(int(fh.Fd()), &st); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("fstat through a stale descriptor of a file gone: %v, want ENOENT", err)
	}
	// A read may end at the attributes the kernel asks first, by the
	// name that is gone (ENOENT); it never reads.
	if _, err := fh.ReadAt(make([]byte, 10), 0); !errors.Is(err, syscall.EIO) && !errors.Is(err, syscall.ENOENT) {
		t.Errorf("read through a stale descriptor of a file gone: %v, want EIO or ENOENT", err)
	}
	if err := fh.Truncate(0); !errors.Is(err, syscall.EIO) {
		t.Errorf("ftruncate through a stale descriptor: %v, want EIO", err)
	}
	if err := fh.Close(); !errors.Is(err, syscall.EIO) {
		t.Errorf("close of a stale descriptor: %v, want EIO", err)
	}
	// The file was created after the last commit: it is gone, and so is
	// what was written to it.
	gone(t, s.path("f"), "a file created and never synced")
	gone(t, s.backing+"/f", "its backing file")

	// A directory opened before the power loss is stale too.
	if err := os.Mkdir(s.path("d"), 0o755); err != nil {
		t.Fatal(err)
	}
	syncDir(t, s.path("d"))
	d, err := os.Open(s.path("d"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	s.powerLoss(t)
	if err := d.Sync(); !errors.Is(err, syscall.EIO) {
		t.Errorf("fsync of a directory opened before the power loss: %v, want EIO", err)
	}
	if _, err := d.Readdirnames(-1); !errors.Is(err, syscall.EIO) {
		t.Errorf("readdir of a directory opened before the power loss: %v, want EIO", err)
	}

	// What is opened after the power loss works as ever.
	data := randBytes(3, 300_000)
	writeSynced(t, s.path("g"), data)
	s.powerLoss(t)
	holds(t, s.path("g"), data, "a file created, written and fsynced after a power loss")

	// A descriptor left open across a power loss does not make the file
	// fail for others: a stat by its name answers.
	kept, err := os.Open(s.path("g"))
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close()
	s.powerLoss(t)
	if fi, err := os.Stat(s.path("g")); err != nil || fi.Size() != int64(len(data)) {
		t.Errorf("stat of a file a stale descriptor holds open: %v, %v; want its %d bytes", fi, err, len(data))
	}
	if _, err := kept.ReadAt(make([]byte, 10), 0); !errors.Is(err, syscall.EIO) {
		t.Errorf("read through the stale descriptor: %v, want EIO", err)
	}
}

// TestRobustPowerLossRace runs writers that append records and fsync each,
// reopening after every failure, while the power fails again and again:
// every record whose fsync succeeded is still in its file at the end,
// whatever a write, fsync or open was doing when the power failed.
func TestRobustPowerLossRace(t *testing.T) {
	s := journalShare(t, Options{})
	const writers, record = 4, 64 << 10
	type acked struct {
		off  int64
		data []byte
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex // guards results
	results := make([][]acked, writers)
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := s.path(fmt.Sprintf("w%d", w))
			var fh *os.File
			defer func() {
				if fh != nil {
					fh.Close()
				}
			}()
			for seq := uint64(0); ; seq++ {
				select {
				case <-done:
					return
				default:
				}
				if fh == nil {
					var err error
					if fh, err = os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644); err != nil {
						errs <- fmt.Errorf("open %s: %w", path, err)
						return
					}
				}
				st, err := fh.Stat()
				if err != nil {
					fh.Close()
					fh = nil
					continue
				}
				data := randBytes(uint64(w)<<32|seq, record)
				if _, err = fh.WriteAt(data, st.Size()); err == nil {
					err = fh.Sync()
				}
				if err != nil {
					if !errors.Is(err, syscall.EIO) {
						errs <- fmt.Errorf("%s: %w, want EIO at worst", path, err)
						return
					}
					fh.Close()
					fh = nil
					continue
				}
				mu.Lock()
				results[w] = append(results[w], acked{st.Size(), data})
				mu.Unlock()
			}
		}()
	}
	acks := func() []int {
		mu.Lock()
		defer mu.Unlock()
		n := make([]int, writers)
		for w := range n {
			n[w] = len(results[w])
		}
		return n
	}
	for range 20 {
		time.Sleep(20 * time.Millisecond)
		s.powerLoss(t)
	}
	// Every writer goes on after the last loss (however loaded the host).
	after := acks()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		moved := true
		for w, n := range acks() {
			moved = moved && n > after[w]
		}
		if moved {
			break
		}
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for w, recs := range results {
		if len(recs) == after[w] {
			t.Errorf("writer %d had no fsync succeed after the last power loss", w)
			continue
		}
		got := mustRead(t, s.path(fmt.Sprintf("w%d", w)))
		for i, r := range recs {
			if int64(len(got)) < r.off+record || !bytes.Equal(got[r.off:r.off+record], r.data) {
				t.Fatalf("writer %d: record %d of %d (at %d), fsynced, is lost: the file has %d bytes", w, i, len(recs), r.off, len(got))
			}
		}
	}
}

// TestRobustDoubleMount is issue 20's fifth point: a backing directory is
// served by one share at a time. A second share of it, in this process or
// another, is refused with an error naming the holder; once the first is
// unmounted the directory is free again.
func TestRobustDoubleMount(t *testing.T) {
	s := journalShare(t, Options{})
	_, err := New(freeModel(t, 1<<30), nil, s.backing, Options{})
	var inUse *emu.InUseError
	if !errors.As(err, &inUse) || !errors.Is(err, emu.ErrInUse) {
		t.Fatalf("a second share of a served backing directory: %v, want an in-use error", err)
	}
	if want := fmt.Sprintf("this process (PID %d)", os.Getpid()); !strings.Contains(err.Error(), want) {
		t.Errorf("the error %q does not name the holder, %s", err, want)
	}
	s.unmount(t)
	f, err := New(freeModel(t, 1<<30), nil, s.backing, Options{})
	if err != nil {
		t.Fatalf("a share of the backing directory after the first was unmounted: %v", err)
	}
	if err := f.Unmount(); err != nil {
		t.Fatal(err)
	}

	// Another process's share, named by its PID; it is free once that
	// process is killed.
	requireFuse(t)
	backing := t.TempDir()
	child := startChildEmulator(t, usedMountpoint(t.TempDir()), backing)
	_, err = New(freeModel(t, 1<<30), nil, backing, Options{})
	if want := fmt.Sprintf("process %d (", child.Process.Pid); !errors.Is(err, emu.ErrInUse) || !strings.Contains(err.Error(), want) {
		t.Fatalf("a share of a directory another process serves: %v, want an in-use error naming %s...)", err, want)
	}
	child.Process.Kill()
	child.Wait()
	f, err = New(freeModel(t, 1<<30), nil, backing, Options{})
	if err != nil {
		t.Fatalf("a share of the backing directory after its emulator was killed: %v", err)
	}
	f.Unmount()
}

// TestRobustArrayStateRemount is issue 20's sixth point: an array's
// health outlives the mount. A RAID 5 with two failed members fails reads
// with EIO, and after a remount it is still failed (not "optimal", serving
// files whose fsync had failed); one with a failed member comes back
// degraded, one being rebuilt comes back rebuilding, and the file is gone
// once the array is optimal again.
func TestRobustArrayStateRemount(t *testing.T) {
	backing := t.TempDir()
	data := randBytes(7, 1<<20)
	remount := func() *share {
		model, replacement := raid5(t)
		return mountShare(t, model, emu.NewWallClock(1, 0), backing, Options{Replacement: replacement})
	}
	state := func(s *share) string {
		t.Helper()
		st := s.fs.Status()
		if len(st.Arrays) != 1 {
			t.Fatalf("status: %d arrays, want 1", len(st.Arrays))
		}
		return st.Arrays[0].State
	}
	control := func(s *share, cmd string, member int) {
		t.Helper()
		if resp := s.fs.Control(ControlRequest{Cmd: cmd, Member: member}); !resp.OK {
			t.Fatalf("%s %d: %s", cmd, member, resp.Error)
		}
	}

	s := remount()
	writeSynced(t, s.path("f"), data)
	control(s, "fail", 1)
	s.unmount(t)
	s = remount()
	if got := state(s); got != "degraded" {
		t.Errorf("after a remount, an array with a failed member is %s, want degraded", got)
	}
	if got, err := readDirect(s.path("f")); err != nil || !bytes.Equal(got, data) {
		t.Errorf("a file on the degraded array after a remount: err %v, equal %v", err, bytes.Equal(got, data))
	}
	control(s, "replace", 1)
	s.unmount(t)
	s = remount()
	if got := state(s); got != "rebuilding" {
		t.Errorf("after a remount, an array being rebuilt is %s, want rebuilding", got)
	}
	for deadline := time.Now().Add(10 * time.Second); state(s) != "optimal" && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	s.unmount(t)
	if _, err := os.Stat(s.backing + "/" + ArrayStateFile); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an optimal array left its saved state behind: %v", err)
	}

	s = remount()
	if got := state(s); got != "optimal" {
		t.Fatalf("after the rebuild and a remount the array is %s, want optimal", got)
	}
	control(s, "fail", 0)
	control(s, "fail", 2)
	if _, err := readDirect(s.path("f")); !errors.Is(err, syscall.EIO) {
		t.Errorf("a read on a RAID 5 with two failed members: %v, want EIO", err)
	}
	// Saved at the fault: a crash now would come back failed too.
	if _, err := os.Stat(s.backing + "/" + ArrayStateFile); err != nil {
		t.Errorf("the failed array's state is not saved at the fault: %v", err)
	}
	s.unmount(t)
	s = remount()
	if got := state(s); got != "failed" {
		t.Errorf("after a remount, a RAID 5 with two failed members is %s, want failed", got)
	}
	if _, err := readDirect(s.path("f")); !errors.Is(err, syscall.EIO) {
		t.Errorf("a read on the failed array after a remount: %v, want EIO", err)
	}
	if names, _ := os.ReadDir(s.mnt); len(names) != 1 {
		t.Errorf("the share lists %d entries, want 1 (the state file is hidden)", len(names))
	}
}

// TestRobustNlinkUnlinkedOpen is the first part of issue 20's tenth
// point: a file unlinked while open has no links (st_nlink 0), before and
// after the journal commits its deletion, and a file that lost one of two
// names has one; the held links in the journal's holding directory are
// not the client's.
func TestRobustNlinkUnlinkedOpen(t *testing.T) {
	s := journalShare(t, Options{})
	nlink := func(what string, st func(*syscall.Stat_t) error, want uint64) {
		t.Helper()
		var a syscall.Stat_t
		if err := st(&a); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if a.Nlink != want {
			t.Errorf("%s: st_nlink %d, want %d", what, a.Nlink, want)
		}
	}
	writeSynced(t, s.path("a"), []byte("data"))
	if err := os.Link(s.path("a"), s.path("b")); err != nil {
		t.Fatal(err)
	}
	fh, err := os.OpenFile(s.path("a"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	fstat := func(a *syscall.Stat_t) error { return syscall.Fstat(int(fh.Fd()), a) }
	nlink("fstat of a file with two names", fstat, 2)
	if err := os.Remove(s.path("a")); err != nil {
		t.Fatal(err)
	}
	nlink("stat of the other name after one was unlinked", func(a *syscall.Stat_t) error { return syscall.Stat(s.path("b"), a) }, 1)
	nlink("fstat after one name was unlinked", fstat, 1)
	if err := os.Remove(s.path("b")); err != nil {
		t.Fatal(err)
	}
	nlink("fstat of an open file without names", fstat, 0)
	if err := fh.Truncate(2); err != nil {
		t.Fatal(err)
	}
	nlink("fstat of an open file without names after ftruncate", fstat, 0)
	if err := fh.Sync(); err != nil { // commits the deletes
		t.Fatal(err)
	}
	nlink("fstat of an open file without names after the commit", fstat, 0)
}

// TestRobustRenameOverOpenDir is go-fuse posixtest's RenameOpenDir (go-fuse
// issue 55) and what must hold around it: a directory replaced by a
// rename while it is open keeps its inode number and mode through the
// descriptor (fstat, fchmod, an empty listing), as on tmpfs; nothing of it
// stays in the backing directory once it is closed; the rename survives a
// remount, and a power loss before the commit undoes it while the stale
// descriptor fails and the path answers for the rebooted NAS's directory.
func TestRobustRenameOverOpenDir(t *testing.T) {
	backing := t.TempDir()
	s := mountShare(t, freeModel(t, 1<<30), &emu.VirtualClock{}, backing, Options{})
	data := []byte("moved with dir1")
	// replaceOpen makes dir1 (with a file) and dir2 (empty, mode 0700),
	// opens dir2 and renames dir1 over it; it returns the descriptor and
	// dir2's attributes from before.
	replaceOpen := func() (*os.File, syscall.Stat_t) {
		t.Helper()
		if err := os.Mkdir(s.path("dir1"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(s.path("dir2"), 0o700); err != nil {
			t.Fatal(err)
		}
		writeSynced(t, s.path("dir1/f"), data) // commits both
		var st syscall.Stat_t
		if err := syscall.Stat(s.path("dir2"), &st); err != nil {
			t.Fatal(err)
		}
		d, err := os.Open(s.path("dir2"))
		if err != nil {
			t.Fatal(err)
		}
		// rename(2) itself: os.Rename refuses to replace a directory.
		if err := syscall.Rename(s.path("dir1"), s.path("dir2")); err != nil {
			d.Close()
			t.Fatal(err)
		}
		return d, st
	}
	d, before := replaceOpen()
	defer d.Close()
	fd := int(d.Fd())
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		t.Fatalf("fstat of the replaced open directory: %v", err)
	}
	if st.Ino != before.Ino || st.Mode != syscall.S_IFDIR|0o700 || st.Nlink != 0 {
		t.Errorf("fstat of the replaced open directory: ino %d mode %o nlink %d, want ino %d mode %o nlink 0",
			st.Ino, st.Mode, st.Nlink, before.Ino, syscall.S_IFDIR|0o700)
	}
	if err := syscall.Fchmod(fd, 0o750); err != nil {
		t.Errorf("fchmod of the replaced open directory: %v", err)
	} else if err := syscall.Fstat(fd, &st); err != nil || st.Mode != syscall.S_IFDIR|0o750 {
		t.Errorf("fstat after fchmod: mode %o, %v; want %o", st.Mode, err, syscall.S_IFDIR|0o750)
	}
	// The kernel lists no removed directory (ENOENT, as tmpfs and ext4).
	if names, err := d.Readdirnames(-1); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("listing of the replaced open directory: %q, %v; want ENOENT", names, err)
	}
	if err := syscall.Stat(s.path("dir2"), &st); err != nil || st.Ino == before.Ino || st.Mode != syscall.S_IFDIR|0o755 {
		t.Errorf("stat of dir2 by path: ino %d mode %o, %v; want dir1's directory (mode %o)", st.Ino, st.Mode, err, syscall.S_IFDIR|0o755)
	}
	d.Close()
	syncDir(t, s.path("dir2")) // commits the rename
	// listing returns the names in a directory, sorted.
	listing := func(dir string) []string {
		t.Helper()
		ents, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		return names
	}
	shows := func(what string, got []string, want ...string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("%s: %q, want %q", what, got, want)
		}
	}
	shows("the share's root", listing(s.mnt), "dir2")
	shows("the share's dir2", listing(s.path("dir2")), "f")
	var own []string
	for _, name := range listing(backing) {
		if !hiddenName(name) {
			own = append(own, name)
		}
	}
	shows("the backing directory (without the emulator's files)", own, "dir2")
	shows("the backing dir2", listing(backing+"/dir2"), "f")
	shows("the holding directory", heldFiles(s))

	s.unmount(t)
	s = mountShare(t, freeModel(t, 1<<30), &emu.VirtualClock{}, backing, Options{})
	shows("the share's root after a remount", listing(s.mnt), "dir2")
	holds(t, s.path("dir2/f"), data, "dir1's file, renamed over an open dir2, after a remount")
	if err := syscall.Stat(s.path("dir2"), &st); err != nil || st.Mode != syscall.S_IFDIR|0o755 {
		t.Errorf("dir2 after a remount: mode %o, %v; want %o", st.Mode, err, syscall.S_IFDIR|0o755)
	}

	// The same rename, then a power loss before it commits.
	if err := os.RemoveAll(s.path("dir2")); err != nil {
		t.Fatal(err)
	}
	syncDir(t, s.mnt)
	d, before = replaceOpen()
	defer d.Close()
	s.powerLoss(t)
	// The replaced directory is gone (the rebooted NAS has the one it
	// replaced again, a new inode), as the kernel knows.
	if err := syscall.Fstat(int(d.Fd()), &st); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("fstat of a replaced directory opened before a power loss: ino %d, %v; want ENOENT", st.Ino, err)
	}
	d.Close()
	holds(t, s.path("dir1/f"), data, "dir1's file after the power loss undid the rename")
	if err := syscall.Stat(s.path("dir2"), &st); err != nil || st.Mode != syscall.S_IFDIR|0o700 {
		t.Errorf("dir2 after the power loss undid its replacement: mode %o, %v; want %o", st.Mode, err, syscall.S_IFDIR|0o700)
	}
	shows("the share's dir2 after the power loss", listing(s.path("dir2")))
	shows("the share's root after the power loss", listing(s.mnt), "dir1", "dir2")
}
