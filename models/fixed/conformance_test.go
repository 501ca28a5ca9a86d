package fixed

import (
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/devicetest"
)

func TestConformance(t *testing.T) {
	devicetest.Run(t, devicetest.Config{
		Parallel: true,
		New: func(t testing.TB, _ uint64) models.Device {
			d, err := New(Config{Capacity: 1 << 30, Units: 4, Read: 100 * time.Microsecond, Write: 50 * time.Microsecond, Other: 20 * time.Microsecond, BytesPerSecond: 500e6})
			if err != nil {
				t.Fatal(err)
			}
			return d
		},
	})
}
