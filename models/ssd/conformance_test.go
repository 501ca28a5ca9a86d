package ssd

import (
	"testing"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/devicetest"
)

// TestConformance runs the device kit on a small NVMe drive whose trace
// fills it past garbage collection, and on a SATA drive with an SLC cache.
func TestConformance(t *testing.T) {
	slc := testConfig(64<<20, 1.3)
	slc.SLCCacheMax, slc.SLCCacheMin = 16<<20, 4<<20
	slc.Interface = SATA
	for name, c := range map[string]Config{"nvme": testConfig(64<<20, 1.2), "sata-slc": slc} {
		t.Run(name, func(t *testing.T) {
			devicetest.Run(t, devicetest.Config{
				Parallel: true,
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
