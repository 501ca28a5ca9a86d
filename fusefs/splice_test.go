package fusefs

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// TestSplicedReads checks the reads answered by splice (see splice.go):
// they return the file's bytes, at its end too, and a power loss waits
// for the reply of a read that passed its check of the handle, so that
// what the client gets is not the restored bytes.
func TestSplicedReads(t *testing.T) {
	s := mountShare(t, freeModel(t, 1<<30), nil, "", Options{})
	if !s.fs.spliceReads {
		t.Fatal("the mount does not splice reads: this kernel cannot resize pipes")
	}
	data := randBytes(3, 3<<20+123)
	fh, err := os.Create(s.path("f"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fh.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(fh.Sync(), fh.Close()); err != nil { // only what follows is unsynced
		t.Fatal(err)
	}
	// Through the mount, O_DIRECT: every byte is a read of the share.
	got, err := readDirect(s.path("f"))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes (%v) through the mount, want the %d written", len(got), err, len(data))
	}

	// A read through a handle, as go-fuse makes it.
	fd, err := syscall.Open(filepath.Join(s.backing, "f"), syscall.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(fd, &st); err != nil {
		t.Fatal(err)
	}
	h := s.fs.newFile(fs.NewLoopbackFile(fd).(*fs.LoopbackFile), st.Ino, nil, s.fs.reboot.boot.Load(), 0)
	defer h.Release(context.Background())
	read := func(off int64, n int) fuse.ReadResult {
		t.Helper()
		res, errno := h.Read(context.Background(), make([]byte, n), off)
		if errno != 0 {
			t.Fatalf("read of %d at %d: %v", n, off, errno)
		}
		return res
	}
	// Off a page boundary: one pipe buffer more than the range's pages.
	mid := read(1, 256<<10)
	if _, ok := mid.(*splicedRead); !ok {
		t.Errorf("a 256 KiB read was answered by %T, not by splice", mid)
	}
	if b, status := mid.Bytes(nil); !status.Ok() || !bytes.Equal(b, data[1:1+256<<10]) {
		t.Errorf("at offset 1: %d bytes (%v), want 256 KiB of the file's", len(b), status)
	}
	mid.Done()
	end := read(int64(len(data))-100, 64<<10) // the file's end: 100 bytes
	if b, status := end.Bytes(nil); !status.Ok() || !bytes.Equal(b, data[len(data)-100:]) {
		t.Errorf("at the end of the file: %d bytes (%v), want the last 100", len(b), status)
	}
	end.Done()

	// Unsynced bytes, read before a power loss: the loss restores the
	// file only after the reply.
	if errno := s.fs.undo.save(h, 8192, 8); errno != 0 { // as a write through h does
		t.Fatal(errno)
	}
	if _, err := syscall.Pwrite(fd, []byte("UNSYNCED"), 8192); err != nil {
		t.Fatal(err)
	}
	res := read(8192, 64<<10)
	if _, ok := res.(*splicedRead); !ok {
		t.Fatalf("a 64 KiB read was answered by %T, not by splice", res)
	}
	lost := make(chan int64)
	go func() { lost <- s.fs.PowerLoss() }()
	select {
	case <-lost:
		t.Fatal("a power loss did not wait for the reply of a read that passed its check")
	case <-time.After(200 * time.Millisecond):
	}
	b, status := res.Bytes(make([]byte, 64<<10))
	res.Done()
	if !status.Ok() || !bytes.Equal(b[:8], []byte("UNSYNCED")) {
		t.Errorf("the reply before the power loss has %q (%v), want the bytes before it", b[:8], status)
	}
	if n := <-lost; n != 8 {
		t.Errorf("the power loss lost %d bytes, want 8", n)
	}
	if _, errno := h.Read(context.Background(), make([]byte, 4096), 0); errno != staleErrno {
		t.Errorf("a read through a handle from before the power loss: %v, want %v", errno, staleErrno)
	}
}
