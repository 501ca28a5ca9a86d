package iscsi

import (
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/devicetest"
	"github.com/nasemu/nasemu/models/fixed"
)

// TestTruncateConformance runs the device kit on a LUN carved from the
// start of a larger device.
func TestTruncateConformance(t *testing.T) {
	devicetest.Run(t, devicetest.Config{
		Parallel: true,
		New: func(t testing.TB, _ uint64) models.Device {
			d, err := fixed.New(fixed.Config{Capacity: 1 << 30, Units: 4, Read: 100 * time.Microsecond, Write: 50 * time.Microsecond, Other: 20 * time.Microsecond, BytesPerSecond: 500e6})
			if err != nil {
				t.Fatal(err)
			}
			return Truncate(d, 256<<20)
		},
	})
}
