package bench

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// freeTarget returns a path target on a new directory and the bytes free
// on its file system.
func freeTarget(t *testing.T) (*Path, string, int64) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("statfs figures are Linux's here")
	}
	dir := t.TempDir()
	tg, err := OpenPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	free, err := freeBytes(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tg, dir, free
}

// TestLayoutFreeSpace asks for more than the file system has free: the
// layout fails before writing anything and names the shortfall.
func TestLayoutFreeSpace(t *testing.T) {
	tg, dir, free := freeTarget(t)
	_, err := Run(tg, []Job{{Name: "big", RW: Read, Size: free + 1<<30, Directory: "sub"}}, Options{})
	if !errors.Is(err, ErrTarget) || !strings.Contains(err.Error(), "not enough free space") || !strings.Contains(err.Error(), "short") {
		t.Fatalf("got %v, want a shortfall", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("the failed layout left %v behind", ents)
	}
	// Two files that fit one by one but not together: the second fails.
	half := free/2 + 1<<20
	_, err = Run(tg, []Job{{Name: "two", RW: Write, FileSize: half, NrFiles: 2, Fallocate: FallocateNone}}, Options{})
	if !errors.Is(err, ErrTarget) || !strings.Contains(err.Error(), "laid out earlier") {
		t.Fatalf("got %v, want a shortfall counting the first file", err)
	}
	if err := tg.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("Cleanup left %v behind", ents)
	}
}

// TestUploadFreeSpace runs file-by-file uploads (the copy suite's way:
// each file created, written and closed in the timed phase, so never laid
// out) whose files together exceed the free space: the run fails before
// it creates a file, naming the shortfall; an upload that fits runs and
// gives its promise back, so a second one in the same run fits as well.
func TestUploadFreeSpace(t *testing.T) {
	tg, dir, free := freeTarget(t)
	// A runtime bounds what a regression would write before the test fails.
	up := Job{Name: "up", RW: Write, BS: 1 << 20, FileByFile: true, NrFiles: 4, FileSize: free/4 + 1<<30, FilenameFormat: "up/$filenum", Runtime: time.Second}
	_, err := Run(tg, []Job{up}, Options{})
	if !errors.Is(err, ErrTarget) || !strings.Contains(err.Error(), "not enough free space") || !strings.Contains(err.Error(), "short") {
		t.Fatalf("got %v, want a shortfall", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("the refused upload left %v behind", ents)
	}
	small := up
	small.NrFiles, small.FileSize, small.Runtime = 4, 1<<20, 0
	again := small
	again.Name, again.FilenameFormat, again.Stonewall = "again", "again/$filenum", true
	rep := mustRun(t, tg, []Job{small, again}, Options{})
	for _, r := range rep.Results {
		if r.Files != 4 {
			t.Errorf("%s: %d files, want 4", r.Name, r.Files)
		}
	}
	if tg.undo.promised != 0 {
		t.Errorf("%d bytes still promised after the run", tg.undo.promised)
	}
}

// TestLayoutFallocate checks that native and keep preallocate the blocks
// of a file laid out without data, and none leaves it sparse.
func TestLayoutFallocate(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("fallocate is Linux's")
	}
	dir := t.TempDir()
	tg, err := OpenPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	const size = 8 << 20
	for _, tc := range []struct {
		mode   Fallocate
		blocks bool
	}{{FallocateNative, true}, {FallocateKeep, true}, {FallocatePosix, true}, {FallocateNone, false}} {
		name := "f-" + string(tc.mode)
		if _, err := tg.LayoutWith(name, size, false, tc.mode); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		alloc := fi.Sys().(*syscall.Stat_t).Blocks * 512
		if fi.Size() != size || (alloc >= size) != tc.blocks {
			t.Errorf("fallocate=%q: size %d, %d bytes allocated; want %d, allocated %v", tc.mode, fi.Size(), alloc, size, tc.blocks)
		}
	}
}

// TestCleanup removes the files and directories the target created, and
// only those.
func TestCleanup(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "keep.dat")
	if err := os.WriteFile(mine, []byte("the user's"), 0o644); err != nil {
		t.Fatal(err)
	}
	tg, err := OpenPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tg.Layout("a/b/new.dat", 1<<20, true); err != nil {
		t.Fatal(err)
	}
	if _, err := tg.Layout("keep.dat", 1<<20, true); err != nil { // extends the user's file
		t.Fatal(err)
	}
	f, _, err := tg.Open(0, "a/up.dat", 4096, OpenFlags{Write: true, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	f.Close(0)
	if got := len(tg.Created()); got != 2 {
		t.Errorf("Created: %v, want the two new files", tg.Created())
	}
	if err := tg.Cleanup(); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || ents[0].Name() != "keep.dat" {
		t.Errorf("after Cleanup: %v, want keep.dat alone", ents)
	}
}

// TestCleanupFileEngines checks that what the file engines create (files
// and directories made in the timed phase) is the run's to remove, and
// that after Cleanup (an interrupted run) the target creates nothing
// more: a run still going fails instead of leaving a file behind.
func TestCleanupFileEngines(t *testing.T) {
	dir := t.TempDir()
	tg, err := OpenPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []IOKind{KindFileCreate, KindDirCreate} {
		name := fmt.Sprintf("d/%v/x", e)
		if err := tg.prepare(e, name, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := tg.fileOp(0, e, name, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := tg.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("after Cleanup: %v, want nothing", ents)
	}
	if _, err := tg.fileOp(0, KindFileCreate, "late", 0); !errors.Is(err, errCleanedUp) {
		t.Errorf("a file created after Cleanup: %v", err)
	}
	if _, _, err := tg.Open(0, "late", 4096, OpenFlags{Write: true, Create: true}); !errors.Is(err, errCleanedUp) {
		t.Errorf("a file opened for creation after Cleanup: %v", err)
	}
	if _, err := tg.Layout("sub/late", 4096, true); !errors.Is(err, errCleanedUp) {
		t.Errorf("a file laid out after Cleanup: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("after Cleanup and three attempts to create: %v, want nothing", ents)
	}
}
