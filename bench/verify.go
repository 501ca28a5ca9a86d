package bench

import (
	"encoding/binary"
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
// It is mix(seed, w), in two steps, the first the same for a whole
// buffer (patternSeed): the words cost most of a verify I/O's CPU.
func patternWord(seed uint64, w int64) uint64 { return patternNext(patternSeed(seed), w) }

func patternSeed(seed uint64) uint64            { return mixStep(mixStart, seed) }
func patternNext(seeded uint64, w int64) uint64 { return mixStep(seeded, uint64(w)) }

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
		ps := patternSeed(seed)
		for ; i+8 <= len(buf); i += 8 {
			binary.LittleEndian.PutUint64(buf[i:], patternNext(ps, (off+int64(i))>>3))
		}
	}
	for ; i < len(buf); i++ {
		buf[i] = patternByte(seed, off+int64(i), pat)
	}
}

// checkPattern reports the first byte of buf that is not the data of
// [off, off+len(buf)). It compares a word at a time where it can, at the
// cost of filling: checking a byte at a time made a 4 KiB verify read cost
// tens of µs of CPU, ten times fio's checksum of it, and so delayed the
// reaping of the I/Os behind it.
func checkPattern(buf []byte, seed uint64, off int64, pat []byte, name string) error {
	if len(pat) > 0 {
		return checkBytes(buf, seed, off, pat, name)
	}
	i := min(int(-off&7), len(buf)) // the bytes before the first whole word
	if err := checkBytes(buf[:i], seed, off, nil, name); err != nil {
		return err
	}
	ps := patternSeed(seed)
	for ; i+8 <= len(buf) && binary.LittleEndian.Uint64(buf[i:]) == patternNext(ps, (off+int64(i))>>3); i += 8 {
	}
	// From the first word that differs, or the tail, a byte at a time.
	return checkBytes(buf[i:], seed, off+int64(i), nil, name)
}

// checkBytes is checkPattern a byte at a time.
func checkBytes(buf []byte, seed uint64, off int64, pat []byte, name string) error {
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
