package emu

import (
	"os"
	"syscall"
)

// punchHole frees [off, off+n) of f, keeping its size.
func punchHole(f *os.File, off, n int64) error {
	const mode = 0x02 | 0x01 // FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE
	return syscall.Fallocate(int(f.Fd()), mode, off, n)
}
