package iscsi

import (
	"time"

	"github.com/nasemu/nasemu/models"
)

// Truncate returns dev limited to its first size bytes: a LUN carved from
// the start of a larger volume, as a NAS carves LUNs from its pool. Requests
// pass through unchanged; only the capacity shrinks.
func Truncate(dev models.Device, size int64) models.Device {
	return &truncated{Device: dev, size: size}
}

type truncated struct {
	models.Device
	size int64
}

func (t *truncated) Capacity() int64 { return t.size }

func (t *truncated) Submit(at time.Duration, r models.Request) (time.Duration, error) {
	if r.Op == models.Read || r.Op == models.Write || r.Op == models.Trim {
		if err := models.CheckRange(r, t.size); err != nil {
			return at, err
		}
	}
	return t.Device.Submit(at, r)
}

// Children lets counters be summed through the wrapper.
func (t *truncated) Children() []models.Device { return []models.Device{t.Device} }
