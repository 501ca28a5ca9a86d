package bench

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
