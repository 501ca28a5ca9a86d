package emu

import "errors"

// Sentinel errors of the emulator. Model errors (models.ErrFailed,
// models.ErrOutOfRange, ...) pass through wrapped.
var (
	// ErrClosed: the volume or store was used after Close.
	ErrClosed = errors.New("emulated volume closed")
	// ErrShortStore: the store is smaller than the model's capacity.
	ErrShortStore = errors.New("store smaller than the modelled capacity")
	// ErrInUse: another emulator holds the lock of a backing file or
	// directory (see Lock and InUseError).
	ErrInUse = errors.New("in use by another emulator")
	// ErrNoFaults: the model has no device that supports the requested
	// fault (Volume.FailMember, ReplaceMember).
	ErrNoFaults = errors.New("the model has no device that supports this fault")
)
