package bench

import (
	"fmt"
	"slices"
	"time"

	"github.com/nasemu/nasemu/models"
)

// AccountSource is implemented by targets whose model accounts its
// resources' busy time (sim: targets): what the bottleneck analysis of
// each job is derived from.
type AccountSource interface {
	// Accounts returns the busy time of each resource up to at (work
	// booked for after at not counted yet).
	Accounts(at time.Duration) []models.Account
}

// Use is one modelled resource's share of a job's window.
type Use struct {
	Resource string       `json:"resource"` // "link tx", "drive 2 head", "NAS cores"
	Class    models.Class `json:"class"`
	Units    int          `json:"units"`
	// Busy is the resource's utilisation over the window: busy time
	// booked during it over units × the window (at most 1; background
	// work the job's first requests set going, such as writeback of
	// earlier writes, counts: it competes with the job).
	Busy float64 `json:"busy"`
	// DemandUs is the busy time per I/O of the window, in µs: the
	// resource's share of an I/O's service time.
	DemandUs float64 `json:"demand_us"`
	// Background is true when no request of the window reached the
	// resource: a cache above it (the page cache, an SSD cache tier)
	// served them all, and the resource was busy with that cache's
	// background work (writeback, flushing) only. It cannot limit the
	// job, so it is never the bottleneck.
	Background bool `json:"background,omitempty"`
}

// Bottleneck names the resource that limits a job: the one with the
// highest utilisation over its window among those its requests reached
// (not Background). By the utilisation law a closed
// system's throughput is at most Units / DemandUs of every resource, so
// the busiest one bounds it; at a low queue depth no resource is
// saturated and Busy says how close it came.
type Bottleneck struct {
	Component string  `json:"component"` // the class in words: "link", "drives (RAID parity read-modify-write)"
	Resource  string  `json:"resource"`
	Class     string  `json:"class"`
	Busy      float64 `json:"busy"`
}

// String returns the bottleneck for people: "link tx (link, 99 % busy)".
func (b *Bottleneck) String() string {
	if b == nil {
		return "-"
	}
	return fmt.Sprintf("%s: %s %.0f%%", b.Component, b.Resource, b.Busy*100)
}

// Saturated is the utilisation from which a resource counts as saturated
// (busy all the window): the window's edges blur a resource's figure by
// about a per cent — requests in flight when it opens and closes, and
// background work its first requests set going.
const Saturated = 0.99

// accountSnapshot is a target's busy times and its RAID parity work at
// one moment.
type accountSnapshot struct {
	accounts []models.Account
	parity   float64 // read-modify-writes and reconstruct-writes so far
}

// snapshotAccounts returns t's accounts up to at, or nil when t keeps
// none.
func snapshotAccounts(t Target, at time.Duration) *accountSnapshot {
	src, ok := t.(AccountSource)
	if !ok {
		return nil
	}
	s := &accountSnapshot{accounts: src.Accounts(at)}
	if sim, ok := t.(*Sim); ok {
		rmw, _ := models.Sum(sim.dev, "read_modify_writes")
		rcw, _ := models.Sum(sim.dev, "reconstruct_writes")
		s.parity = rmw + rcw
	}
	return s
}

// analyse returns the utilisation of every resource that was busy
// between the snapshots before and after, over a window of length window
// in which ios I/Os completed, busiest first, and the bottleneck.
func analyse(before, after *accountSnapshot, window time.Duration, ios int64) ([]Use, *Bottleneck) {
	if before == nil || after == nil || window <= 0 || len(before.accounts) != len(after.accounts) {
		return nil, nil
	}
	var uses []Use
	for i, a := range after.accounts {
		b := before.accounts[i]
		busy := a.Busy - b.Busy
		if busy <= 0 || a.Units <= 0 {
			continue
		}
		u := Use{Resource: a.Label(), Class: a.Class, Units: a.Units,
			Busy: min(1, busy.Seconds()/(float64(a.Units)*window.Seconds()))}
		for k, g := range a.Gates {
			if k < len(b.Gates) && g == b.Gates[k] {
				u.Background = true // a gate above it let nothing through
			}
		}
		if ios > 0 {
			u.DemandUs = float64(busy) / 1e3 / float64(ios)
		}
		uses = append(uses, u)
	}
	if len(uses) == 0 {
		return nil, nil
	}
	// Busiest first; among saturated resources the stack's order, front
	// to drives: a saturated front limits the job whatever the back does,
	// and the back can be as busy only with work a cache decoupled from it
	// (flushing, writeback).
	slices.SortStableFunc(uses, func(x, y Use) int {
		xs, ys := x.Busy >= Saturated, y.Busy >= Saturated
		switch {
		case xs && ys:
			return 0
		case xs != ys:
			if xs {
				return -1
			}
			return 1
		case x.Busy > y.Busy:
			return -1
		case x.Busy < y.Busy:
			return 1
		}
		return 0
	})
	top := uses[0]
	for _, u := range uses {
		if !u.Background {
			top = u
			break
		}
	}
	bn := &Bottleneck{Component: component(top.Class, after.parity > before.parity), Resource: top.Resource, Class: string(top.Class), Busy: top.Busy}
	return uses, bn
}

// component names a class of resource for people; parity says the array
// did parity read-modify-writes (or reconstruct-writes) in the window.
func component(c models.Class, parity bool) string {
	switch c {
	case models.ClassLink:
		return "link"
	case models.ClassProtocol:
		return "protocol"
	case models.ClassCPU:
		return "NAS CPU"
	case models.ClassController:
		return "controller"
	case models.ClassCache:
		return "SSD cache"
	case models.ClassDrive:
		if parity {
			return "drives (RAID parity)"
		}
		return "drives"
	}
	return string(c)
}
