//go:build !linux

package bench

const oDirect = 0

func readOnlyFS(string) bool { return false }

// invalidate is a no-op where posix_fadvise is not available.
func (f *pathFile) invalidate() error { return nil }

// diskStats implements diskStater: no block device statistics here.
func (p *Path) diskStats() ([]diskCounters, bool) { return nil, false }
