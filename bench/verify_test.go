package bench

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestCheckPattern checks filled ranges at every alignment and finds the
// first changed byte wherever it is.
func TestCheckPattern(t *testing.T) {
	const seed = 42
	for _, off := range []int64{0, 1, 7, 8, 13, 4096} {
		for _, n := range []int{0, 1, 5, 8, 9, 64, 4099} {
			buf := make([]byte, n)
			fillPattern(buf, seed, off, nil)
			if err := checkPattern(buf, seed, off, nil, "f"); err != nil {
				t.Fatalf("off %d len %d: %v", off, n, err)
			}
			for _, bad := range []int{0, n / 2, n - 1} {
				if n == 0 {
					continue
				}
				buf[bad] ^= 0x10
				err := checkPattern(buf, seed, off, nil, "f")
				want := fmt.Sprintf("at offset %d:", off+int64(bad))
				if !errors.Is(err, errVerify) || !strings.Contains(err.Error(), want) {
					t.Errorf("off %d len %d, byte %d changed: %v, want %q", off, n, bad, err, want)
				}
				buf[bad] ^= 0x10
			}
		}
	}
	for w := range int64(100) {
		if patternWord(seed, w) != mix(seed, uint64(w)) {
			t.Fatalf("patternWord(%d, %d) is not mix's", seed, w)
		}
	}
	pat := []byte{0xde, 0xad, 0xbe}
	buf := make([]byte, 100)
	fillPattern(buf, seed, 5, pat)
	if err := checkPattern(buf, seed, 5, pat, "f"); err != nil {
		t.Fatal(err)
	}
	buf[99] = 0
	if err := checkPattern(buf, seed, 5, pat, "f"); !errors.Is(err, errVerify) {
		t.Errorf("verify_pattern with its last byte changed: %v", err)
	}
}

func BenchmarkCheckPattern4K(b *testing.B) {
	buf := make([]byte, 4096)
	fillPattern(buf, 1, 8192, nil)
	b.SetBytes(4096)
	for b.Loop() {
		if err := checkPattern(buf, 1, 8192, nil, "f"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkFillPattern4K(b *testing.B) {
	buf := make([]byte, 4096)
	b.SetBytes(4096)
	for b.Loop() {
		fillPattern(buf, 1, 8192, nil)
	}
}
