//go:build !linux

package bench

import (
	"errors"
	"fmt"
	"time"
)

var errNotLinux = errors.New("only on Linux")

func (f *pathFile) truncate(time.Duration, int64) (time.Duration, error) {
	return f.clock.Now(), fmt.Errorf("%s: ftruncate: %w", f.path, errNotLinux)
}

func (f *pathFile) allocate(time.Duration, int64, int64, bool) (time.Duration, error) {
	return f.clock.Now(), fmt.Errorf("%s: fallocate: %w", f.path, errNotLinux)
}

func (f *pathFile) punch(time.Duration, int64, int64) (time.Duration, error) {
	return f.clock.Now(), fmt.Errorf("%s: trim: %w", f.path, errNotLinux)
}

const oNoFollow = 0
