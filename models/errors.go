package models

import "errors"

// Sentinel errors returned (wrapped, with context) by every model. Callers
// test them with errors.Is. Only fusefs translates them to errno values and
// only iscsi to SCSI sense data.
var (
	// ErrInvalid: the request itself is malformed (negative length, unknown op).
	ErrInvalid = errors.New("invalid request")
	// ErrOutOfRange: the request addresses bytes beyond the device's capacity.
	ErrOutOfRange = errors.New("request beyond device capacity")
	// ErrFailed: the device (or more array members than its redundancy
	// tolerates) has failed; no data can be read or written.
	ErrFailed = errors.New("device failed")
	// ErrNoSpace: a thin or file-backed layer has no room left.
	ErrNoSpace = errors.New("no space left on device")
	// ErrConfig: a model's configuration is impossible; the message names the
	// parameter.
	ErrConfig = errors.New("invalid configuration")
)
