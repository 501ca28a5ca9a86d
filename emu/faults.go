package emu

import (
	"fmt"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/raid"
)

// ArrayStatus is the health of one array of a volume's model.
type ArrayStatus struct {
	// Path is the array's place in the model's stack: child indices from
	// the top ("0/0/1").
	Path            string  `json:"path"`
	State           string  `json:"state"`
	Failed          []int   `json:"failed,omitempty"`
	Rebuilding      int     `json:"rebuilding"`
	Waiting         []int   `json:"waiting,omitempty"`
	RebuildProgress float64 `json:"rebuild_progress"`
	RebuildBytes    int64   `json:"rebuild_bytes"`
}

// Arrays returns the health of every array of the model (devices that
// implement raid.StatusReporter), top down, bringing their background work
// up to now.
func (v *Volume) Arrays() []ArrayStatus {
	var out []ArrayStatus
	v.WithModel(func(m models.Device, now time.Duration) {
		walkPaths(m, "0", func(d models.Device, path string) {
			r, ok := d.(raid.StatusReporter)
			if !ok {
				return
			}
			st := r.Status(now)
			out = append(out, ArrayStatus{
				Path: path, State: st.State.String(), Failed: st.Failed,
				Rebuilding: st.Rebuilding, Waiting: st.Waiting,
				RebuildProgress: st.RebuildProgress, RebuildBytes: st.RebuildBytes,
			})
		})
	})
	return out
}

// walkPaths calls fn for d and every device below it with its path.
func walkPaths(d models.Device, path string, fn func(d models.Device, path string)) {
	fn(d, path)
	if p, ok := d.(models.Parent); ok {
		for i, c := range p.Children() {
			walkPaths(c, fmt.Sprintf("%s/%d", path, i), fn)
		}
	}
}

// FailMember fails member i of the first array of the model's stack (the
// first device, top down, that implements raid.MemberFailer).
func (v *Volume) FailMember(i int) error {
	return v.withFault(func(d models.Device, now time.Duration) (bool, error) {
		if m, ok := d.(raid.MemberFailer); ok {
			return true, m.FailMember(now, i)
		}
		return false, nil
	})
}

// ReplaceMember puts dev in the place of failed member i of the first
// array of the model's stack that can replace members, which starts a
// rebuild.
func (v *Volume) ReplaceMember(i int, dev models.Device) error {
	return v.withFault(func(d models.Device, now time.Duration) (bool, error) {
		if m, ok := d.(raid.MemberReplacer); ok {
			return true, m.ReplaceMember(now, i, dev)
		}
		return false, nil
	})
}

// withFault applies fn to the devices of the stack, top down, until one
// supports the fault.
func (v *Volume) withFault(fn func(d models.Device, now time.Duration) (bool, error)) error {
	var err error
	found := false
	v.WithModel(func(m models.Device, now time.Duration) {
		models.Walk(m, func(d models.Device, _ int) {
			if !found {
				found, err = fn(d, now)
			}
		})
	})
	if !found {
		return ErrNoFaults
	}
	return err
}
