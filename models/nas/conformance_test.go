package nas

import (
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/devicetest"
	"github.com/nasemu/nasemu/models/fixed"
)

// TestConformance runs the device kit on the controllers of the golden
// configurations (page cache small enough to evict and write back,
// encryption, write-through, direct I/O, local clients) over a fixed-cost
// array, and on a drive's port of a bus.
func TestConformance(t *testing.T) {
	storage := func(t testing.TB) models.Device {
		d, err := fixed.New(fixed.Config{Capacity: 2 * models.GiB, Units: 4, Read: 2 * time.Millisecond, Write: time.Millisecond, Other: 100 * time.Microsecond, BytesPerSecond: 300e6})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	names := []string{"tiny", "one-core", "crypt", "engine", "write-through", "crypt-write-through", "direct", "local"}
	for i, cfg := range goldenConfigs() {
		t.Run(names[i], func(t *testing.T) {
			devicetest.Run(t, devicetest.Config{
				Parallel: true,
				FileOps:  true,
				New: func(t testing.TB, _ uint64) models.Device {
					c, err := New(cfg, storage(t))
					if err != nil {
						t.Fatal(err)
					}
					return c
				},
			})
		})
	}
	t.Run("port", func(t *testing.T) {
		devicetest.Run(t, devicetest.Config{
			Parallel: true,
			New: func(t testing.TB, _ uint64) models.Device {
				b, err := NewBus(BusConfig{Rate: 1e9, PortRate: 600e6, PerCommand: 5 * time.Microsecond})
				if err != nil {
					t.Fatal(err)
				}
				b.Attach(storage(t)) // a neighbour on the bus
				return b.Attach(storage(t))
			},
		})
	})
}
