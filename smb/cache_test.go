package smb

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nasemu/nasemu/bench"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/proto"
)

// pattern returns n bytes that differ at every offset of a file.
func pattern(off, n int64) []byte {
	b := make([]byte, n)
	for i := range b {
		x := off + int64(i)
		b[i] = byte(x ^ x>>8 ^ x>>16)
	}
	return b
}

// A buffered file is cached as the Windows client caches it: a created
// file gets its size first, a sequential writer's writes go on behind it
// and reach the share in full by Close, a sequential reader is read ahead
// of (proto.SMBReadAhead reads), and reads out of the stream, out of order
// or past the reads ahead get the file's bytes too.
func TestClientCache(t *testing.T) {
	srv := startSamba(t)
	tg := openTarget(t, srv.urlWithPassword(""))
	const chunk, size = 64 << 10, 4 << 20
	f, _, err := tg.Open(0, "cache.dat", size, bench.OpenFlags{Write: true, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(srv.dir, "cache.dat")); err != nil || fi.Size() != size {
		t.Fatalf("created file: %v, want its size %d set before the writes", fi, size)
	}
	buf := make([]byte, chunk)
	for off := int64(0); off < size; off += chunk {
		copy(buf, pattern(off, chunk))
		if _, err := f.Do(0, models.Write, off, chunk, buf); err != nil {
			t.Fatal(err)
		}
		clear(buf) // the cache copied it
	}
	if _, err := f.Close(0); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(srv.dir, "cache.dat"))
	if err != nil || !bytes.Equal(got, pattern(0, size)) {
		t.Fatalf("the share has %d bytes (%v), not what was written behind", len(got), err)
	}

	f, _, err = tg.Open(0, "cache.dat", size, bench.OpenFlags{})
	if err != nil {
		t.Fatal(err)
	}
	c := f.(*cachedFile)
	read := func(off int64) {
		t.Helper()
		if _, err := f.Do(0, models.Read, off, chunk, buf); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf, pattern(off, chunk)) {
			t.Fatalf("read at %d: wrong bytes", off)
		}
	}
	read(0)
	if n := len(c.ahead); n != proto.SMBReadAhead {
		t.Errorf("%d reads ahead after the first, want %d", n, proto.SMBReadAhead)
	}
	read(2 * chunk) // one ahead, out of order
	read(chunk)
	read(40 * chunk) // out of the stream
	for off := int64(3 * chunk); off < size; off += chunk {
		read(off)
	}
	if _, err := f.Close(0); err != nil {
		t.Fatal(err)
	}
}

// A write behind that fails fails the file's next request and its Close:
// data a writer was told it had written is never lost silently.
func TestClientCacheWriteFailure(t *testing.T) {
	srv := startSamba(t)
	tg := openTarget(t, srv.urlWithPassword(""))
	const chunk = 64 << 10
	f, _, err := tg.Open(0, "lost.dat", 64*chunk, bench.OpenFlags{Write: true, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	c := f.(*cachedFile)
	buf := pattern(0, chunk)
	if _, err := f.Do(0, models.Write, 0, chunk, buf); err != nil {
		t.Fatal(err)
	}
	c.s.conn.Close() // the connection is lost with writes behind
	var failed error
	for off := int64(chunk); off < 64*chunk && failed == nil; off += chunk {
		_, failed = f.Do(0, models.Write, off, chunk, buf)
	}
	_, cerr := f.Close(0)
	if failed == nil && cerr == nil {
		t.Fatal("writes behind a lost connection: no request and no Close failed")
	}
	if cerr == nil || !strings.Contains(cerr.Error(), "lost.dat") {
		t.Errorf("Close: %v, want the failure of the writes behind, naming the file", cerr)
	}
}
