//go:build !linux

package fusefs

// closeFuseOnExec: elsewhere the FUSE library opens its device itself.
func closeFuseOnExec() {}
