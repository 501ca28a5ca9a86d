package bench

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBufferFill: buffer_compress_percentage leaves that share of each
// chunk fixed (zeros or buffer_pattern), zero_buffers and a pattern alone
// fill all of it, and a write job on a directory writes what its buffers
// hold.
func TestBufferFill(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(b []byte) { fillRandom(b, rng) }
	buf := make([]byte, 64<<10)
	BufferFill{CompressPct: 75, Chunk: 4096}.fill(buf, random)
	if z := bytes.Count(buf, []byte{0}); z < 48<<10 || z > 48<<10+256 {
		t.Errorf("75 %% compressible: %d zero bytes of %d", z, len(buf))
	}
	BufferFill{Pattern: []byte("ab")}.fill(buf, random)
	if strings.Count(string(buf), "ab") != len(buf)/2 {
		t.Errorf("buffer_pattern alone: %q...", buf[:16])
	}
	dir := t.TempDir()
	p, err := OpenPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := ParseFio("z.fio", strings.NewReader("[z]\nfilename=zeros\nfilesize=256k\nrw=write\nbs=64k\nzero_buffers\n"))
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, p, jobs, Options{Seed: 1})
	got, err := os.ReadFile(filepath.Join(dir, "zeros"))
	if err != nil || len(got) != 256<<10 || bytes.Count(got, []byte{0}) != len(got) {
		t.Errorf("zero_buffers wrote %d bytes, %d of them zero (%v)", len(got), bytes.Count(got, []byte{0}), err)
	}
}
