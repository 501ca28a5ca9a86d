//go:build !linux

package emu

import (
	"errors"
	"os"
)

// punchHole is not available here; Trim falls back to writing zeros.
func punchHole(*os.File, int64, int64) error { return errors.ErrUnsupported }
