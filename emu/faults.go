package emu

import (
	"fmt"
	"strings"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fault"
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

// faultSeed seeds the random choices (p=) of a volume's injected faults:
// a volume replays the same choices for the same requests.
const faultSeed = 1

// FaultRule is a fault rule armed on a volume, in models/fault's text
// form, with the requests that matched it and those it chose.
type FaultRule struct {
	Rule   string `json:"rule"`
	Seen   int    `json:"seen"`
	Chosen int    `json:"chosen"`
}

// InjectFault arms a rule of models/fault's injector in front of the
// volume's model: the requests it chooses fail, wait or stall as the rule
// says, at the volume's byte offsets, from now on (a failure wraps
// models.ErrFailed, which fusefs answers with EIO and iscsi with MEDIUM
// ERROR). At most fault.MaxRules are armed at once.
func (v *Volume) InjectFault(r fault.Rule) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.faults.Add(r)
}

// ClearFaults disarms every injected rule. A "dead" rule that fired
// leaves the volume failing every request: a dead device stays dead.
func (v *Volume) ClearFaults() {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.faults.Clear()
}

// Faults returns the injected rules, in the order armed.
func (v *Volume) Faults() []FaultRule {
	v.mu.Lock()
	defer v.mu.Unlock()
	var out []FaultRule
	for _, r := range v.faults.Rules() {
		out = append(out, FaultRule{Rule: r.Rule.String(), Seen: r.Seen, Chosen: r.Chosen})
	}
	return out
}

// FaultRequest carries out a control plane's fault request on v: "list"
// (or nothing) changes nothing, "clear" disarms every rule (ClearFaults),
// anything else is a rule in models/fault's text form (fault.Parse) to
// arm (InjectFault). It returns the rules armed after it.
func (v *Volume) FaultRequest(arg string) ([]FaultRule, error) {
	switch arg = strings.TrimSpace(arg); arg {
	case "", "list":
	case "clear":
		v.ClearFaults()
	default:
		r, err := fault.Parse(arg)
		if err != nil {
			return nil, err
		}
		if err := v.InjectFault(r); err != nil {
			return nil, err
		}
	}
	return v.Faults(), nil
}
