package raid

import (
	"errors"
	"fmt"
	"time"

	"github.com/nasemu/nasemu/models"
)

// memberState is the health of one member.
type memberState uint8

const (
	inSyncState     memberState = iota // healthy and holding current data
	failedState                        // failed, not yet replaced
	rebuildingState                    // replaced; in sync below its rebuild position only
)

// Array is a RAID array over member devices. It is a models.Device whose
// requests are split into member requests according to the level's layout.
type Array struct {
	cfg       Config
	segs      []segment
	members   []models.Device
	state     []memberState
	used      []int64 // bytes of each member the layout uses
	capacity  int64
	tolerates int

	// free is, per member, the latest completion time of the I/O this array
	// has issued to it: the member that frees up first gets a mirrored read.
	free []time.Duration
	// fgBusy is the latest completion time of a foreground request; md's
	// default rebuild pacing throttles down before it.
	fgBusy time.Duration
	// failErr is set, once and for all, when more members have failed than
	// the level tolerates.
	failErr error

	rb rebuild

	// Per-request scratch, reused so that Submit does not allocate.
	pend  []pendingIO // per member: the contiguous member I/O being gathered
	done  time.Duration
	reads []memberIO // read phase of a partial-stripe write
	wrs   []memberIO // write phase of a partial-stripe write
	later []memberIO // write phases due after the request's other I/O

	held    []heldRow // the write coalescer's rows (nil when Config.Coalesce is off)
	heldSeq uint64

	// stripeOp is set while a request that goes through parity stripes (a
	// write or trim of a RAID 5 or 6 segment, a flush of held rows) is
	// submitted; stripeBytes counts the member bytes such requests moved
	// (StripeBytesHandled).
	stripeOp    bool
	stripeBytes int64

	c counters
}

var (
	_ models.Device   = (*Array)(nil)
	_ models.Observer = (*Array)(nil)
	_ models.Parent   = (*Array)(nil)
	_ MemberFailer    = (*Array)(nil)
	_ MemberReplacer  = (*Array)(nil)
	_ StatusReporter  = (*Array)(nil)
)

// pendingIO is a member I/O being gathered from consecutive chunk pieces.
type pendingIO struct {
	op    models.Op
	off   int64
	n     int64
	at    time.Duration
	valid bool
}

// memberIO is one planned member I/O.
type memberIO struct {
	member int
	off, n int64
	at     time.Duration // when it is due (write phases only)
}

// New builds an array of the configured level over members, which it owns
// from now on (the array is their only user). Errors wrap models.ErrConfig.
func New(cfg Config, members []models.Device) (*Array, error) {
	cfg = cfg.withDefaults(len(members))
	caps := make([]int64, len(members))
	for i, m := range members {
		if m == nil {
			return nil, fmt.Errorf("%w: raid: member %d is nil", models.ErrConfig, i)
		}
		caps[i] = m.Capacity()
	}
	segs, used, err := layout(cfg, caps)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", cfg.Name, err)
	}
	n := len(members)
	a := &Array{
		cfg:       cfg,
		segs:      segs,
		members:   append([]models.Device(nil), members...),
		state:     make([]memberState, n),
		used:      used,
		tolerates: Tolerates(cfg.Level, n),
		free:      make([]time.Duration, n),
		pend:      make([]pendingIO, n),
		reads:     make([]memberIO, 0, n),
		wrs:       make([]memberIO, 0, n),
		later:     make([]memberIO, 0, 4*n),
		rb:        rebuild{member: -1},
	}
	for _, s := range segs {
		a.capacity += s.size
	}
	if cfg.Coalesce {
		a.held = make([]heldRow, gatherRows)
		a.later = make([]memberIO, 0, 4*n+2*gatherRows*n)
	}
	return a, nil
}

// StripeBytes returns the data one full stripe holds (data members ×
// chunk) of a RAID 0, 5, 6 or 10 array, and 0 for other levels and for
// arrays of several segments (JBOD, SHR: LVM on md, with read-ahead of its
// own). Linux md sets a striped array's read-ahead to twice this
// (raid0_run, raid5's run, raid10_run: ra_pages = 2 × stripe), which the
// NAS's page cache uses (nas.Striper).
func (a *Array) StripeBytes() int64 {
	if len(a.segs) != 1 {
		return 0
	}
	switch s := &a.segs[0]; s.level {
	case RAID0, RAID5, RAID6, RAID10:
		return int64(s.width()) * s.chunk
	}
	return 0
}

// Capacity implements models.Device.
func (a *Array) Capacity() int64 { return a.capacity }

// Level returns the array's RAID level.
func (a *Array) Level() Level { return a.cfg.Level }

// Children implements models.Parent: the members, in bay order (a replaced
// member's replacement in its place).
func (a *Array) Children() []models.Device { return append([]models.Device(nil), a.members...) }

// Submit implements models.Device. Reads and writes are split per chunk
// and gathered into one I/O per member where consecutive chunks are
// contiguous on that member; the request completes when its last member
// I/O does. Flush goes to every member that is present. File operations
// complete at once.
func (a *Array) Submit(at time.Duration, r models.Request) (time.Duration, error) {
	if r.Op.IsFileOp() {
		return at, nil
	}
	if err := models.CheckRange(r, a.capacity); err != nil {
		return at, fmt.Errorf("%s: %w", a.cfg.Name, err)
	}
	a.advance(at)
	for {
		if a.failErr != nil {
			return at, a.failErr
		}
		a.done = at
		var err error
		switch r.Op {
		case models.Flush:
			a.stripeOp = a.held != nil
			if err = a.drainHeld(at); err == nil {
				a.stripeOp = false
				err = a.flush(a.done)
			}
		default:
			a.stripeOp = r.Op != models.Read && a.parity(r)
			err = a.rw(at, r)
		}
		a.stripeOp = false
		if err == nil {
			break
		}
		a.dropPending()
		// A member that fails an I/O is failed, as md's error handler
		// (md_error) fails it, and the request is served again from the
		// redundancy left; the I/O already issued to other members took
		// their time. Each pass fails one more member, so this ends.
		var me *memberError
		if !errors.As(err, &me) || !errors.Is(err, models.ErrFailed) || a.state[me.member] == failedState {
			return at, err
		}
		a.markFailed(at, me.member)
	}
	a.fgBusy = max(a.fgBusy, a.done)
	return a.done, nil
}

// memberError is a member's refusal of an I/O the array issued.
type memberError struct {
	array  string
	member int
	err    error
}

func (e *memberError) Error() string {
	return fmt.Sprintf("%s: member %d: %v", e.array, e.member, e.err)
}

func (e *memberError) Unwrap() error { return e.err }

// rw splits a read, write or trim over the segments it touches. Member
// I/O due at `at` is submitted first, then the write phases of partial
// stripes, due later, in order: a member serving in order of submission
// then does not hold the early I/O behind the late.
func (a *Array) rw(at time.Duration, r models.Request) error {
	off, end := r.Offset, r.End()
	a.later = a.later[:0]
	for i := range a.segs {
		s := &a.segs[i]
		if off >= end {
			break
		}
		if off >= s.start+s.size {
			continue
		}
		lo, hi := off-s.start, min(end, s.start+s.size)-s.start
		var err error
		switch s.level {
		case Single, RAID0:
			err = a.striped(s, at, r.Op, lo, hi)
		case RAID1:
			err = a.mirror(s, at, r.Op, lo, hi)
		case RAID10:
			err = a.mirrorStriped(s, at, r.Op, lo, hi)
		case RAID5, RAID6:
			switch r.Op {
			case models.Read:
				err = a.parityRead(s, at, lo, hi)
			case models.Write:
				err = a.parityWrite(s, at, lo, hi)
			case models.Trim:
				err = a.parityTrim(s, at, lo, hi)
			}
		}
		if err != nil {
			return err
		}
		off = s.start + hi
	}
	return a.submitLater()
}

// drainHeld writes out every row the coalescer holds, as rw does a
// request's member I/O; a.done becomes the time the last is on its member.
func (a *Array) drainHeld(at time.Duration) error {
	a.later = a.later[:0]
	if err := a.writeOutRange(nil, at, 0, 0); err != nil {
		return err
	}
	return a.submitLater()
}

// submitLater issues the gathered member I/O, then the write phases.
func (a *Array) submitLater() error {
	if err := a.flushPending(); err != nil {
		return err
	}
	for _, io := range a.later {
		d, err := a.submitMember(io.member, models.Write, io.off, io.n, io.at)
		if err != nil {
			return err
		}
		a.done = max(a.done, d)
	}
	return nil
}

// striped serves single drives and RAID 0: each chunk piece lives on one
// member.
func (a *Array) striped(s *segment, at time.Duration, op models.Op, off, end int64) error {
	for off < end {
		local, moff := s.locate(off)
		n := end - off
		if s.level == RAID0 {
			n = min(n, s.chunk-s.inChunk(off))
		}
		if err := a.queue(s.members[local], op, moff, n, at); err != nil {
			return err
		}
		off += n
	}
	return nil
}

// flush sends Flush to every member present (failed members are gone).
func (a *Array) flush(at time.Duration) error {
	for m := range a.members {
		if a.state[m] == failedState {
			continue
		}
		d, err := a.submitMember(m, models.Flush, 0, 0, at)
		if err != nil {
			return err
		}
		a.done = max(a.done, d)
	}
	return nil
}

// inSync reports whether member m holds current data for member bytes
// [off, off+n).
func (a *Array) inSync(m int, off, n int64) bool {
	switch a.state[m] {
	case inSyncState:
		return true
	case rebuildingState:
		return m == a.rb.member && off+n <= a.rb.pos
	}
	return false
}

// queue adds a member I/O to the one being gathered for that member when
// it continues it, and issues the gathered one otherwise.
func (a *Array) queue(m int, op models.Op, off, n int64, at time.Duration) error {
	p := &a.pend[m]
	if p.valid && p.op == op && p.at == at && p.off+p.n == off {
		p.n += n
		return nil
	}
	if p.valid {
		if err := a.issuePending(m); err != nil {
			return err
		}
	}
	*p = pendingIO{op: op, off: off, n: n, at: at, valid: true}
	return nil
}

func (a *Array) issuePending(m int) error {
	p := &a.pend[m]
	p.valid = false
	d, err := a.submitMember(m, p.op, p.off, p.n, p.at)
	a.done = max(a.done, d)
	return err
}

// flushPending issues every gathered member I/O, in member order.
func (a *Array) flushPending() error {
	for m := range a.pend {
		if a.pend[m].valid {
			if err := a.issuePending(m); err != nil {
				return err
			}
		}
	}
	return nil
}

func (a *Array) dropPending() {
	for m := range a.pend {
		a.pend[m].valid = false
	}
}

// parity reports whether r touches a RAID 5 or 6 segment.
func (a *Array) parity(r models.Request) bool {
	off, end := r.Offset, r.End()
	for i := range a.segs {
		s := &a.segs[i]
		if s.start < end && off < s.start+s.size && (s.level == RAID5 || s.level == RAID6) {
			return true
		}
	}
	return false
}

// StripeBytesHandled returns the member bytes read and written so far by
// requests that go through parity stripes: writes and trims of RAID 5 and
// 6 segments (their reads of old data or parity included) and flushes of
// rows the coalescer held. Linux md handles each of these a page per
// member at a time in its stripe cache, in one kernel thread per array
// (raid5d; drivers/md/raid5.c), where reads of a healthy array bypass the
// stripe cache; the NAS above charges that thread's work (nas.StripeHandler).
func (a *Array) StripeBytesHandled() int64 { return a.stripeBytes }

// submitMember issues one I/O to member m and keeps the counters.
func (a *Array) submitMember(m int, op models.Op, off, n int64, at time.Duration) (time.Duration, error) {
	d, err := a.members[m].Submit(at, models.Request{Op: op, Offset: off, Length: n})
	if err != nil {
		return at, &memberError{array: a.cfg.Name, member: m, err: err}
	}
	if a.stripeOp {
		a.stripeBytes += n
	}
	switch op {
	case models.Read:
		a.c.memberReads++
		a.c.memberBytesRead += n
		a.c.memberTicks[0] += d - at
	case models.Write:
		a.c.memberWrites++
		a.c.memberBytesWritten += n
		a.c.memberTicks[1] += d - at
	}
	a.c.memberQueue += d - at
	a.free[m] = max(a.free[m], d)
	return d, nil
}

// ChildName implements models.ChildNamer: members are "drive N", by bay.
func (a *Array) ChildName(i int) (string, models.Class) {
	return fmt.Sprintf("drive %d", i+1), ""
}

var _ models.ChildNamer = (*Array)(nil)
