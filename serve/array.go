package serve

import (
	"fmt"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/proto"
)

// NASArray is the model of a NAS that serves an SMB share and an iSCSI LUN
// from one array, as a NAS does: the setup's protocol front (SMB) and an
// iSCSI front sit side by side over the same link (one port) and the same
// NAS device (CPU, page cache, array). The NAS device's address space is
// split: the share's volume is [0, LUNBase), the LUN the LUNSize bytes at
// LUNBase (the end of the array, aligned), so the two never store into
// each other's blocks, and both contend for the same drives, cache, CPU
// and wire.
//
// As a models.Device it is the share's volume: Capacity is the share's
// part and Submit charges the share's requests through the SMB front;
// SubmitLUN charges a LUN request through the iSCSI front. Both fronts keep
// per-connection state of their own. It is not safe for concurrent use:
// the volume that holds it serialises both (see NewLUNVolume).
type NASArray struct {
	share   models.Device // the setup's front
	lun     *proto.Device // iSCSI over the same link and NAS device
	lunBase int64
	lunSize int64
}

var (
	_ models.Device   = (*NASArray)(nil)
	_ models.Parent   = (*NASArray)(nil)
	_ models.Observer = (*NASArray)(nil)
)

// LUNAlign aligns the LUN's region in the array (a whole number of RAID
// chunks and of 4 KiB blocks for any usual chunk size).
const LUNAlign = 1 << 20

// NewNASArray puts an iSCSI front beside front (a setup's built model,
// whose outermost device is its protocol) and carves a LUN of lunSize
// bytes (rounded down to whole MiB) from the end of the array.
func NewNASArray(front models.Device, lunSize int64) (*NASArray, error) {
	pd, ok := front.(*proto.Device)
	if !ok {
		return nil, fmt.Errorf("%w: the setup's model has no protocol front to put iSCSI beside", models.ErrConfig)
	}
	below := pd.Children()[0]
	capacity := below.Capacity()
	lunSize = lunSize / LUNAlign * LUNAlign
	base := (capacity - lunSize) / LUNAlign * LUNAlign
	if lunSize <= 0 || base < LUNAlign {
		return nil, fmt.Errorf("%w: a LUN of %s does not fit beside a share in %s (want at least 1 MiB for each, in whole MiB)", models.ErrConfig, models.Bytes(lunSize).Human(), models.Bytes(capacity).Human())
	}
	lun, err := proto.New(proto.Config{Protocol: proto.ISCSI}, pd.Link(), below)
	if err != nil {
		return nil, err
	}
	return &NASArray{share: front, lun: lun, lunBase: base, lunSize: lunSize}, nil
}

// LUNBase returns where the LUN begins in the array: the share's size.
func (a *NASArray) LUNBase() int64 { return a.lunBase }

// LUNSize returns the LUN's size in bytes.
func (a *NASArray) LUNSize() int64 { return a.lunSize }

// Share returns the setup's front, the share's whole stack.
func (a *NASArray) Share() models.Device { return a.share }

// Capacity implements models.Device: the share's part of the array.
func (a *NASArray) Capacity() int64 { return a.lunBase }

// Submit implements models.Device: a request of the share, through the
// setup's front.
func (a *NASArray) Submit(at time.Duration, r models.Request) (time.Duration, error) {
	if err := models.CheckRange(r, a.lunBase); err != nil {
		return at, err
	}
	return a.share.Submit(at, r)
}

// SubmitLUN charges a request of the LUN (offsets within the LUN) through
// the iSCSI front, at the LUN's place in the array.
func (a *NASArray) SubmitLUN(at time.Duration, r models.Request) (time.Duration, error) {
	if err := models.CheckRange(r, a.lunSize); err != nil {
		return at, err
	}
	if r.Op == models.Read || r.Op == models.Write || r.Op == models.Trim {
		r.Offset += a.lunBase
	}
	return a.lun.Submit(at, r)
}

// Children implements models.Parent: the setup's stack, once. The iSCSI
// front's own stack below is the same NAS device and would be counted
// twice; its protocol counters are the array's own (Counters).
func (a *NASArray) Children() []models.Device { return []models.Device{a.share} }

// Counters implements models.Observer: the iSCSI front's protocol counters
// with a lun_ prefix (the link's are the SMB front's, shared).
func (a *NASArray) Counters() []models.Counter {
	var out []models.Counter
	for _, c := range a.lun.Counters() {
		switch c.Name {
		case "round_trips", "iscsi_commands", "iscsi_r2ts":
			out = append(out, models.Counter{Name: "lun_" + c.Name, Value: c.Value})
		}
	}
	return out
}
