package cache

import (
	"testing"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/devicetest"
)

// TestConformance runs the device kit on a read-only tier and on a
// read-write tier small enough (32 MiB) that the traces evict and flush.
func TestConformance(t *testing.T) {
	for _, cfg := range []Config{
		{Mode: ReadOnly, Capacity: models.Bytes(32 * models.MiB)},
		{Mode: ReadWrite, Capacity: models.Bytes(32 * models.MiB)},
		{Mode: ReadWrite, Block: models.Bytes(4 * models.KiB)},
	} {
		t.Run(cfg.Mode+"-"+cfg.Block.String(), func(t *testing.T) {
			devicetest.Run(t, devicetest.Config{
				Parallel: true,
				New: func(t testing.TB, _ uint64) models.Device {
					tr, err := New(cfg, []models.Device{ssd(t), ssd(t)}, hddArray(t))
					if err != nil {
						t.Fatal(err)
					}
					return tr
				},
			})
		})
	}
}
