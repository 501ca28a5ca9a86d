package bench

import (
	"errors"
	"fmt"
)

// errVerify marks data read back that differs from what was written.
var errVerify = errors.New("verify failed")

// Data of a job with verify= is a function of the file and the byte's
// offset in it (or verify_pattern repeated from offset 0), so that any
// range read back can be checked whichever write stored it; a later job
// of the run that reads the file checks it the same way. Simulated
// targets store no data: their verify reads cost what reads cost, and
// nothing is compared.

// patternWord is the 8 bytes at word w (offset w·8) of a file seeded seed.
func patternWord(seed uint64, w int64) uint64 { return mix(seed, uint64(w)) }

// patternByte is the byte at off.
func patternByte(seed uint64, off int64, pat []byte) byte {
	if len(pat) > 0 {
		return pat[off%int64(len(pat))]
	}
	return byte(patternWord(seed, off>>3) >> (8 * (off & 7)))
}

// fillPattern fills buf with the data of [off, off+len(buf)).
func fillPattern(buf []byte, seed uint64, off int64, pat []byte) {
	i := 0
	for ; i < len(buf) && (off+int64(i))&7 != 0; i++ {
		buf[i] = patternByte(seed, off+int64(i), pat)
	}
	if len(pat) == 0 {
		for ; i+8 <= len(buf); i += 8 {
			v := patternWord(seed, (off+int64(i))>>3)
			for k := range 8 {
				buf[i+k] = byte(v >> (8 * k))
			}
		}
	}
	for ; i < len(buf); i++ {
		buf[i] = patternByte(seed, off+int64(i), pat)
	}
}

// checkPattern reports the first byte of buf that is not the data of
// [off, off+len(buf)).
func checkPattern(buf []byte, seed uint64, off int64, pat []byte, name string) error {
	for i := range buf {
		if want := patternByte(seed, off+int64(i), pat); buf[i] != want {
			return fmt.Errorf("%w: %s at offset %d: read 0x%02x, wrote 0x%02x", errVerify, name, off+int64(i), buf[i], want)
		}
	}
	return nil
}

// checkZero reports the first byte of buf, read at off from a range
// trimmed since it was written, that is not zero (fio's verify_zero).
func checkZero(buf []byte, off int64, name string) error {
	for i, b := range buf {
		if b != 0 {
			return fmt.Errorf("%w: %s at offset %d: read 0x%02x from a trimmed range, want zeros", errVerify, name, off+int64(i), b)
		}
	}
	return nil
}
