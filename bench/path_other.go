//go:build !linux

package bench

const oDirect = 0

func readOnlyFS(string) bool { return false }
