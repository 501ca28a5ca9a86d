//go:build !linux

package bench

import (
	"errors"
	"os"
)

func freeBytes(string) (int64, error) { return 0, errors.ErrUnsupported }

func preallocate(*os.File, int64, int64, Fallocate) error { return nil }
