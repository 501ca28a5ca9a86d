//go:build !amd64 && !arm64

package prefetch

// Uint64 does nothing on this architecture (see asm.go).
func Uint64(p *uint64) {}
