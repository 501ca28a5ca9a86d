// Package fault wraps a models.Device with an injector that fails or slows
// chosen requests, deterministically, in the manner of pebble's
// vfs/errorfs: a Rule chooses requests by operation, byte range, time,
// index and probability, and says what happens to them — an error, a
// longer completion, a stall of the whole device, or the device's death.
//
// The injector is a model like any other: pure, no wall clock, its random
// choices drawn from a generator seeded at construction, so a trace with
// faults replays bit for bit. Layers above see an injected failure as the
// hardware's: ErrInjected wraps models.ErrFailed, which a RAID array
// answers by failing the member (as md does on an I/O error), fusefs by
// EIO and iscsi by a MEDIUM ERROR sense.
//
// # Uses
//
//	fail member 2 of an array at t = 3 s:      wrap the member, Rule{Start: 3 * time.Second, Dead: true}
//	fail it after its 100th request:           Rule{After: 100, Dead: true}
//	an unreadable sector range:                Rule{Ops: Reads, From: off, To: off + 4096, Fail: true}
//	one write in ten fails:                    Rule{Ops: Writes, Probability: 0.1, Fail: true}
//	a 200 ms latency spike every 1000 reads:   one Rule{Ops: Reads, After: 999, Count: 1, Delay: ...} per spike
//	a controller reset that answers nothing for 2 s: Rule{Start: t, Count: 1, Stall: 2 * time.Second}
//
// Rules can be written as text (Parse), for tests' tables and control
// planes: "read range=0:1MiB after=10 count=1 fail".
package fault

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/nasemu/nasemu/models"
)

// ErrInjected is the error of a request an injector failed. It wraps
// models.ErrFailed: to every layer above, the device failed it.
var ErrInjected = fmt.Errorf("%w: injected fault", models.ErrFailed)

// Ops is a set of operations a Rule applies to.
type Ops uint16

// Sets of operations.
const (
	Reads   = Ops(1 << models.Read)
	Writes  = Ops(1 << models.Write)
	Flushes = Ops(1 << models.Flush)
	Trims   = Ops(1 << models.Trim)
	// Block is every block operation: the set a Rule of no Ops means.
	Block = Reads | Writes | Flushes | Trims
	// Files is every file operation (open, create, close, remove, stat).
	Files = Ops(1<<models.Open | 1<<models.Create | 1<<models.Close | 1<<models.Remove | 1<<models.Stat)
)

// Has reports whether op is in the set.
func (s Ops) Has(op models.Op) bool { return op <= models.Stat && s&(1<<op) != 0 }

// Rule chooses requests and says what happens to them. A request matches
// when its op is in Ops, it overlaps [From, To) (Flush, which has no
// range, matches any range), and it is submitted at or after Start. Of
// the matching requests the first After pass untouched; of the rest, each
// is chosen with Probability, until Count have been chosen. A chosen
// request gets every effect the rule names.
type Rule struct {
	Ops      Ops           // operations it applies to; 0 means Block
	From, To int64         // byte range a request must overlap; To 0 means no limit
	Start    time.Duration // requests submitted before Start pass
	After    int           // matching requests to pass before choosing any
	Count    int           // requests to choose at most; 0 means no limit
	// Probability that a matching request is chosen, drawn from the
	// injector's seeded generator; 0 means 1.
	Probability float64

	// Delay is added to a chosen request's completion: a drive's error
	// recovery, a retry, a slow path.
	Delay time.Duration
	// Stall makes the device answer nothing for Stall from a chosen
	// request's submission: it and every request submitted in that window
	// reach the device at its end (a controller reset, a link flap, a
	// path failover). One stall holds at a time: a chosen request whose
	// stall would end later starts a new window in place of the old.
	Stall time.Duration
	// Fail fails a chosen request with ErrInjected; the device serves
	// the others.
	Fail bool
	// Dead makes the device fail every request from the first chosen one
	// on: a drive that died, was pulled or lost power.
	Dead bool
}

// MaxDelay bounds a rule's Delay and Stall: a day is longer than any
// recovery or reset a device makes, and keeps model times far from
// overflow.
const MaxDelay = 24 * time.Hour

// Validate returns an error wrapping models.ErrConfig for a rule that
// cannot be met or does nothing.
func (r Rule) Validate() error {
	switch {
	case r.From < 0 || r.To < 0 || (r.To != 0 && r.To <= r.From):
		return fmt.Errorf("%w: fault range [%d, %d) is empty or negative", models.ErrConfig, r.From, r.To)
	case r.Start < 0 || r.After < 0 || r.Count < 0 || r.Delay < 0 || r.Stall < 0:
		return fmt.Errorf("%w: fault rule %v has a negative figure", models.ErrConfig, r)
	case r.Probability < 0 || r.Probability > 1 || r.Probability != r.Probability:
		return fmt.Errorf("%w: fault probability %v outside [0, 1]", models.ErrConfig, r.Probability)
	case r.Ops&^(Block|Files) != 0:
		return fmt.Errorf("%w: fault ops %#x name unknown operations", models.ErrConfig, uint16(r.Ops))
	case r.Delay > MaxDelay || r.Stall > MaxDelay:
		return fmt.Errorf("%w: fault delay or stall beyond %v", models.ErrConfig, MaxDelay)
	case r.Delay == 0 && r.Stall == 0 && !r.Fail && !r.Dead:
		return fmt.Errorf("%w: fault rule %v has no effect (delay, stall, fail or dead)", models.ErrConfig, r)
	}
	return nil
}

// matches reports whether q, submitted at at, is one the rule applies to.
func (r *Rule) matches(at time.Duration, q models.Request) bool {
	ops := r.Ops
	if ops == 0 {
		ops = Block
	}
	if !ops.Has(q.Op) || at < r.Start {
		return false
	}
	if q.Op == models.Flush || q.Op.IsFileOp() || (r.From == 0 && r.To == 0) {
		return true
	}
	end := q.End()
	if q.Length == 0 {
		end = q.Offset + 1 // an empty request at an offset touches it
	}
	return end > r.From && (r.To == 0 || q.Offset < r.To)
}

// armed is a rule and what it has seen.
type armed struct {
	Rule
	seen, chosen int
}

// Event is one request an injector chose, for tests and logs.
type Event struct {
	Rule    int // index of the rule, in the order added
	At      time.Duration
	Request models.Request
}

// Device is a models.Device that passes requests to the device it wraps
// and applies its rules to them. It is not safe for concurrent use, like
// the devices it wraps.
type Device struct {
	dev   models.Device
	rng   *rand.Rand
	rules []armed

	dead       bool
	deadAt     time.Duration
	stallUntil time.Duration
	stallFrom  time.Duration

	events                 []Event
	failed, delayed, stall int64
}

var (
	_ models.Device   = (*Device)(nil)
	_ models.Parent   = (*Device)(nil)
	_ models.Observer = (*Device)(nil)
)

// New wraps dev with an injector of the given rules whose random choices
// come from a generator seeded with seed.
func New(dev models.Device, seed uint64, rules ...Rule) (*Device, error) {
	if dev == nil {
		return nil, fmt.Errorf("%w: fault injector without a device", models.ErrConfig)
	}
	d := &Device{dev: dev, rng: rand.New(rand.NewPCG(seed, 0x6661756c74))}
	for _, r := range rules {
		if err := d.Add(r); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// MaxRules bounds the rules of one injector: control planes add them at
// run time, and every request is matched against each.
const MaxRules = 64

// Add arms one more rule; past MaxRules it is refused.
func (d *Device) Add(r Rule) error {
	if err := r.Validate(); err != nil {
		return err
	}
	if len(d.rules) >= MaxRules {
		return fmt.Errorf("%w: %d fault rules armed already (at most %d)", models.ErrConfig, len(d.rules), MaxRules)
	}
	d.rules = append(d.rules, armed{Rule: r})
	return nil
}

// Clear disarms every rule. A device that died stays dead, and a stall
// under way runs its course.
func (d *Device) Clear() { d.rules = d.rules[:0] }

// Armed is a rule with what it has seen: the requests that matched it
// and those it chose.
type Armed struct {
	Rule
	Seen, Chosen int
}

// Rules returns the rules armed, in the order added.
func (d *Device) Rules() []Armed {
	out := make([]Armed, len(d.rules))
	for i, r := range d.rules {
		out[i] = Armed{Rule: r.Rule, Seen: r.seen, Chosen: r.chosen}
	}
	return out
}

// Dead reports whether a Dead rule has fired.
func (d *Device) Dead() bool { return d.dead }

// MaxEvents bounds the events an injector keeps: the first ones are
// what a test looks at, and a rule that fires for days must not grow
// memory; the counters count them all.
const MaxEvents = 1024

// Events returns the requests chosen so far, in order (the first
// MaxEvents of them).
func (d *Device) Events() []Event { return append([]Event(nil), d.events...) }

// Unwrap returns the device the injector wraps.
func (d *Device) Unwrap() models.Device { return d.dev }

// Capacity implements models.Device.
func (d *Device) Capacity() int64 { return d.dev.Capacity() }

// Children implements models.Parent.
func (d *Device) Children() []models.Device { return []models.Device{d.dev} }

// Counters implements models.Observer.
func (d *Device) Counters() []models.Counter {
	return []models.Counter{
		{Name: "faults_failed", Value: float64(d.failed)},
		{Name: "faults_delayed", Value: float64(d.delayed)},
		{Name: "faults_stalls", Value: float64(d.stall)},
	}
}

// Submit implements models.Device. A request the device would refuse for
// its range is refused as it would be and counts for no rule.
func (d *Device) Submit(at time.Duration, q models.Request) (time.Duration, error) {
	if err := models.CheckRange(q, d.dev.Capacity()); err != nil {
		return at, err
	}
	if d.dead && at >= d.deadAt {
		return at, fmt.Errorf("%v: %w (the device is dead)", q, ErrInjected)
	}
	var delay time.Duration
	fail := false
	for i := range d.rules {
		r := &d.rules[i]
		if (r.Count > 0 && r.chosen >= r.Count) || !r.matches(at, q) {
			continue
		}
		r.seen++
		if r.seen <= r.After || (r.Probability > 0 && r.Probability < 1 && d.rng.Float64() >= r.Probability) {
			continue
		}
		r.chosen++
		if len(d.events) < MaxEvents {
			d.events = append(d.events, Event{Rule: i, At: at, Request: q})
		}
		delay += r.Delay
		if r.Delay > 0 {
			d.delayed++
		}
		if r.Stall > 0 && at+r.Stall > d.stallUntil {
			d.stallFrom, d.stallUntil = at, at+r.Stall
			d.stall++
		}
		if r.Dead && (!d.dead || at < d.deadAt) {
			d.dead, d.deadAt = true, at
		}
		fail = fail || r.Fail || r.Dead
	}
	if fail {
		d.failed++
		return at + delay, fmt.Errorf("%v: %w", q, ErrInjected)
	}
	start := at
	if at >= d.stallFrom && at < d.stallUntil {
		start = d.stallUntil
	}
	done, err := d.dev.Submit(start, q)
	if err != nil {
		return done, err
	}
	return done + delay, nil
}

// Find returns the first injector in the stack rooted at dev (dev itself
// included), or nil.
func Find(dev models.Device) *Device {
	var found *Device
	models.Walk(dev, func(x models.Device, _ int) {
		if f, ok := x.(*Device); ok && found == nil {
			found = f
		}
	})
	return found
}
