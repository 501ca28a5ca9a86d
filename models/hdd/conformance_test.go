package hdd

import (
	"testing"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/devicetest"
)

// TestConformance runs the device kit on a WD Red with command queueing
// and its write cache, and on one with neither.
func TestConformance(t *testing.T) {
	plain := wdRed1TB()
	plain.QueueDepth = 1
	plain.WriteCacheDisabled = true
	for name, c := range map[string]Config{"ncq": wdRed1TB(), "qd1-nowc": plain} {
		t.Run(name, func(t *testing.T) {
			devicetest.Run(t, devicetest.Config{
				New: func(t testing.TB, seed uint64) models.Device {
					d, err := New(c, seed)
					if err != nil {
						t.Fatal(err)
					}
					return d
				},
			})
		})
	}
}
