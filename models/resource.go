package models

import (
	"strings"
	"time"
)

// Class is the kind of component a modelled resource belongs to, as a
// bottleneck analysis names it.
type Class string

// The component classes.
const (
	ClassLink       Class = "link"       // a network link direction
	ClassProtocol   Class = "protocol"   // a file or block server's per-session thread (smbd, an iSCSI target thread)
	ClassCPU        Class = "cpu"        // the NAS's cores and crypto engine
	ClassController Class = "controller" // buses, HBAs and drive ports
	ClassDrive      Class = "drive"      // a data drive's head, dies, channels, controller or interface
	ClassCache      Class = "cache"      // the same of an SSD cache tier's drive
)

// Resource is the busy-time account of one kind of resource of a model:
// Units servers of the same kind (a link's members in one direction, a
// NAS's cores, an SSD's dies), busy Busy in total, over all units, from
// when the model was built up to the time asked for (work already booked
// for later is not counted yet). Busy is what the resource's reservations add up to,
// so over an interval of length T its utilisation is ΔBusy / (Units × T):
// by the utilisation law of operational analysis, the resource with the
// highest utilisation is the one that bounds throughput (a closed system's
// throughput is at most Units / service demand per request of every
// resource), whatever the workload.
type Resource struct {
	Name  string // the resource within its model: "cores", "dies", "head", "rx"
	Class Class
	Units int
	Busy  time.Duration
	// Key identifies a resource that several devices share (one bus
	// behind several drive ports): Accounts reports it once, under no
	// device's name. nil: not shared.
	Key any
}

// Accountant is implemented by models that account their resources' busy
// time. Resources returns a fresh slice in a stable order; it must not
// change the model's state.
type Accountant interface {
	Resources(at time.Duration) []Resource
}

// ChildNamer is implemented by composite devices whose children have
// roles worth naming in reports: an array's members ("drive 2"), a cache
// tier's drives ("cache drive 1", class ClassCache). An empty name leaves
// the child unnamed (the backing device of a cache tier); a non-empty
// class reclassifies the child's drive resources.
type ChildNamer interface {
	ChildName(i int) (name string, class Class)
}

// Gate is implemented by devices that decouple their clients from the
// devices below them (a page cache, an SSD cache tier): requests they
// serve themselves never wait for what is below, which may meanwhile be
// busy with their background work (writeback, flushing). Waits counts the
// requests so far that did wait for the device below: misses, bypasses,
// write-through, writers throttled or held for room. Gated says whether
// child i (of Parent.Children) is behind the gate: a cache tier's backing
// array is, its cache drives are not.
type Gate interface {
	Waits() int64
	Gated(i int) bool
}

// Account is one resource of a device stack, as Accounts finds it: Where
// names the device in the stack ("drive 2", "cache drive 1"; "" for the
// stack's own front), and the resource is as the device reported it.
type Account struct {
	Where string
	Resource
	// Gates are the Waits of the gates above the resource's device, top
	// first: between two accounts of the stack a resource was on the
	// requests' path only if every gate above it let requests through.
	Gates []int64
}

// Label returns the account's name for people: "drive 2 head", "link rx".
func (a Account) Label() string {
	name := a.Name
	if a.Where != "" {
		name = a.Where + " " + name
	}
	return name
}

// Accounts returns the resources of every device of the stack rooted at d
// that accounts for them, busy up to at, depth first (the front of the
// stack before the drives), each shared resource once.
func Accounts(d Device, at time.Duration) []Account {
	var out []Account
	seen := map[any]bool{}
	var walk func(d Device, where []string, class Class, gates []int64)
	walk = func(d Device, where []string, class Class, gates []int64) {
		if a, ok := d.(Accountant); ok {
			for _, r := range a.Resources(at) {
				if r.Key != nil {
					if seen[r.Key] {
						continue
					}
					seen[r.Key] = true
				}
				if class != "" && r.Class == ClassDrive {
					r.Class = class
				}
				w := strings.Join(where, " ")
				if r.Key != nil {
					w = "" // shared: no one device's
				}
				out = append(out, Account{Where: w, Resource: r, Gates: gates})
			}
		}
		p, ok := d.(Parent)
		if !ok {
			return
		}
		gate, _ := d.(Gate)
		namer, _ := d.(ChildNamer)
		for i, c := range p.Children() {
			w, cl := where, class
			if namer != nil {
				name, ncl := namer.ChildName(i)
				if name != "" {
					w = append(append([]string(nil), where...), name)
				}
				if ncl != "" {
					cl = ncl
				}
			}
			g := gates
			if gate != nil && gate.Gated(i) {
				g = append(gates[:len(gates):len(gates)], gate.Waits())
			}
			walk(c, w, cl, g)
		}
	}
	walk(d, nil, "", nil)
	return out
}
