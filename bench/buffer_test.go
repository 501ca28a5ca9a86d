package bench

import (
	"bytes"
	"encoding/binary"
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

// TestScrambleBuffers: as fio's scramble_buffers (its default), a job's
// writes mark their buffer before each write, so the same slot's buffer
// written 16 times lays down 16 different blocks, each 512 bytes
// carrying its own file offset at the start of one of its 64-byte lines;
// scramble_buffers=0 writes the buffer unchanged, and zero_buffers
// writes zeros unless scramble_buffers is named too.
func TestScrambleBuffers(t *testing.T) {
	for _, tc := range []struct {
		opts      string
		scrambled bool
	}{{"", true}, {"ioengine=io_uring\niodepth=4\n", true}, {"scramble_buffers=0\n", false}, {"zero_buffers\nscramble_buffers=1\n", true}} {
		dir := t.TempDir()
		p, err := OpenPath(dir)
		if err != nil {
			t.Fatal(err)
		}
		jobs, err := ParseFio("s.fio", strings.NewReader("[s]\nfilename=f\nfilesize=64k\nrw=write\nbs=4k\n"+tc.opts))
		if err != nil {
			t.Fatal(err)
		}
		mustRun(t, p, jobs, Options{Seed: 1})
		got, err := os.ReadFile(filepath.Join(dir, "f"))
		if err != nil || len(got) != 64<<10 {
			t.Fatalf("%q: read %d bytes (%v)", tc.opts, len(got), err)
		}
		same := 0
		for off := 4096; off < len(got); off += 4096 {
			if bytes.Equal(got[off:off+4096], got[:4096]) {
				same++
			}
		}
		marked := 0
		for off := 0; off < len(got); off += 512 {
			for l := 0; l < 512; l += 64 {
				if binary.LittleEndian.Uint64(got[off+l:]) == uint64(off) {
					marked++
					break
				}
			}
		}
		if tc.scrambled && (same != 0 || marked != len(got)/512) {
			t.Errorf("%q: %d of 15 blocks like the first, %d of %d sectors marked with their offset", tc.opts, same, marked, len(got)/512)
		}
		if !tc.scrambled && same != 15 {
			t.Errorf("%q: %d of 15 blocks like the first, want all", tc.opts, same)
		}
	}
}
