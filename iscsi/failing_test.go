package iscsi

import (
	"fmt"
	"time"

	"github.com/nasemu/nasemu/models"
)

// failing is a device whose reads and writes fail as a dead array's do.
type failing struct{ capacity int64 }

func (f failing) Capacity() int64 { return f.capacity }

func (f failing) Submit(at time.Duration, r models.Request) (time.Duration, error) {
	if r.Op == models.Read || r.Op == models.Write {
		return at, fmt.Errorf("array offline: %w", models.ErrFailed)
	}
	return at, nil
}
