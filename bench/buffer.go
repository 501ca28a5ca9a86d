package bench

import (
	"encoding/binary"
	"time"
)

// Buffer contents: what a job writes on a real target. fio fills its
// buffers with random data unless told otherwise; storage that compresses
// or deduplicates (a NAS, a compressing file system) sees the difference.
// No model in nasemu compresses, so on sim: targets the contents change
// nothing.

// BufferFill is how a job's write buffers are filled (fio's
// zero_buffers, buffer_pattern, buffer_compress_percentage and
// buffer_compress_chunk).
type BufferFill struct {
	Zero        bool   // zero_buffers
	Pattern     []byte // buffer_pattern: repeated (else zeros) where data is not random
	CompressPct int    // buffer_compress_percentage: share of each chunk that is not random
	Chunk       int64  // buffer_compress_chunk (0: fio's 512)
}

// fill fills buf as fio's fill_io_buffer does: all zeros or the pattern
// (zero_buffers, or a pattern without a compress percentage), else each
// chunk random for (100 − pct)% and the pattern or zeros for the rest
// (fio's __fill_random_buf_percentage). random fills its argument with
// random bytes.
func (b BufferFill) fill(buf []byte, random func([]byte)) {
	fixed := func(p []byte) {
		if len(b.Pattern) == 0 {
			clear(p)
			return
		}
		for i := 0; i < len(p); i += copy(p[i:], b.Pattern) {
		}
	}
	switch {
	case b.Zero:
		clear(buf)
		return
	case b.CompressPct == 0 && len(b.Pattern) > 0:
		fixed(buf)
		return
	case b.CompressPct == 0:
		random(buf)
		return
	case b.CompressPct >= 100:
		fixed(buf)
		return
	}
	chunk := b.Chunk
	if chunk <= 0 {
		chunk = 512
	}
	for len(buf) > 0 {
		n := min(int(chunk*int64(100-b.CompressPct)/100), len(buf))
		random(buf[:n])
		buf = buf[n:]
		m := min(int(chunk)-n, len(buf))
		fixed(buf[:m])
		buf = buf[m:]
	}
}

// scrambles reports whether a job's writes change their buffer before
// each write as fio's scramble_buffers does, so that no two writes carry
// the same data and storage that deduplicates cannot fold them: fio's
// default, unless the job zeroes its buffers (and does not name
// scramble_buffers), makes them compressible or deduplicable, or
// verifies what it writes. fio refills a refill_buffers job's buffers
// instead; nasemu fills a slot's buffer once and scrambles it then too.
func scrambles(j *Job) bool {
	named := false
	for _, s := range j.Recorded {
		named = named || s.Key == "scramble_buffers"
	}
	switch {
	case named && !recordedTrue(j, "scramble_buffers"):
		return false
	case j.Buffer.Zero && !named, j.Buffer.CompressPct > 0, j.Verify != "":
		return false
	}
	for _, s := range j.Recorded {
		if s.Key == "dedupe_percentage" && s.Value != "" && s.Value != "0" {
			return false
		}
	}
	return true
}

// scramble marks buf, the data of a write at off prepared at at, as
// fio's scrambling does: in each 512-byte block, the block's offset at
// the start of one of its first eight 64-byte lines (the same line in
// every block, picked from the time and the offset), and the time
// (seconds, nanoseconds) in the last 16 bytes of its first line.
func scramble(buf []byte, off int64, at time.Duration) {
	const block, line = 512, 64
	sec, nsec := uint64(at/time.Second), uint64(at%time.Second)
	l := int((nsec^uint64(off))&7) * line
	for p := 0; p+block <= len(buf); p += block {
		binary.LittleEndian.PutUint64(buf[p+l:], uint64(off)+uint64(p))
		binary.LittleEndian.PutUint64(buf[p+line-16:], sec)
		binary.LittleEndian.PutUint64(buf[p+line-8:], nsec)
	}
}
