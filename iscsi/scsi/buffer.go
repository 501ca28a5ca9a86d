package scsi

import (
	"math/bits"
	"sync"
)

// Data buffers of reads and writes are recycled by power-of-two size
// class: at tens of thousands of commands a second, allocating each one
// costs more in garbage collection than the copy itself.
var pools [32]sync.Pool

// Buffer returns a buffer of n bytes (contents undefined) from the pool.
func Buffer(n int) []byte {
	if n == 0 {
		return nil
	}
	c := bits.Len(uint(n - 1))
	if c >= len(pools) {
		return make([]byte, n)
	}
	if b, ok := pools[c].Get().(*[]byte); ok {
		return (*b)[:n]
	}
	return make([]byte, n, 1<<c)
}

// BufferCap returns the memory Buffer(n) takes: n rounded up to its size
// class.
func BufferCap(n int) int {
	if n == 0 {
		return 0
	}
	if c := bits.Len(uint(n - 1)); c < len(pools) {
		return 1 << c
	}
	return n
}

// Recycle returns a buffer from Buffer to the pool; the caller must not
// use it afterwards.
func Recycle(b []byte) {
	c := bits.Len(uint(cap(b) - 1))
	if cap(b) == 0 || c >= len(pools) || cap(b) != 1<<c {
		return
	}
	b = b[:cap(b)]
	pools[c].Put(&b)
}
