package serve

import (
	"time"

	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/models"
)

// lunView is the LUN of a NASArray as a device of its own: requests of
// the LUN (offsets within it) are charged through the array's iSCSI front
// at the LUN's place, under the lock of the volume that holds the array
// (the share's, when there is one), so that the share and the LUN are
// serialised on the one model.
type lunView struct {
	vol *emu.Volume // holds arr
	arr *NASArray
}

var _ models.Device = lunView{}

// Capacity implements models.Device.
func (v lunView) Capacity() int64 { return v.arr.lunSize }

// Submit implements models.Device, at the holding volume's time.
func (v lunView) Submit(_ time.Duration, r models.Request) (done time.Duration, err error) {
	v.vol.WithModel(func(_ models.Device, now time.Duration) { done, err = v.arr.SubmitLUN(now, r) })
	return done, err
}

// NewLUNVolume returns the LUN of arr, whose model vol holds, as a volume
// of its own for the SCSI layer: its bytes live in data (of the LUN's
// size), its time is charged to the array, and answers are paced by
// opts.Clock. The share's FUSE compensation is not applied: LUN requests do
// not pass through FUSE. Its PowerLoss is data's.
func NewLUNVolume(vol *emu.Volume, arr *NASArray, data emu.Store, opts emu.Options) (*emu.Volume, error) {
	return emu.NewVolume(lunView{vol: vol, arr: arr}, data, opts)
}
