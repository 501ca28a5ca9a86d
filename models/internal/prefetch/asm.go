//go:build amd64 || arm64

package prefetch

// Uint64 starts loading the cache line that holds *p. It does not read
// *p: p may point anywhere in a live slice.
//
//go:noescape
func Uint64(p *uint64)
