package raid

import (
	"fmt"
	"time"

	"github.com/nasemu/nasemu/models"
)

// MemberFailer is implemented by arrays whose members can be failed, as
// when a drive dies or is pulled.
type MemberFailer interface {
	// FailMember marks member i failed at time at. The array keeps serving
	// in degraded mode while its level tolerates the failures, and fails
	// every later request (with an error wrapping models.ErrFailed) once
	// they are too many; FailMember itself returns an error only when i is
	// not a member or is already failed.
	FailMember(at time.Duration, i int) error
}

// StatusReporter is implemented by arrays that report their health.
type StatusReporter interface {
	// Status brings background work (a rebuild) up to time at and reports
	// the array's state.
	Status(at time.Duration) Status
}

// State is the health of an array.
type State uint8

// Array states.
const (
	Optimal    State = iota // every member in sync
	Degraded                // a member failed and not replaced; redundancy reduced
	Rebuilding              // a replacement is being rebuilt
	Failed                  // more members failed than the level tolerates; data lost
)

var stateNames = [...]string{Optimal: "optimal", Degraded: "degraded", Rebuilding: "rebuilding", Failed: "failed"}

// String returns the state's lower-case name.
func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// Status is a snapshot of an array's health.
type Status struct {
	State State
	// Failed lists the members failed and not replaced, in order.
	Failed []int
	// Rebuilding is the member being rebuilt, or -1; Waiting lists replaced
	// members queued for rebuild after it (they are rebuilt one at a time).
	Rebuilding int
	Waiting    []int
	// RebuildProgress is the fraction (0 to 1) of the current rebuild done;
	// 1 when no rebuild is running.
	RebuildProgress float64
	// RebuildBytes counts the bytes written to replacements so far.
	RebuildBytes int64
	// LastRebuildDone is when the most recent finished rebuild wrote its
	// last byte (zero when none has finished).
	LastRebuildDone time.Duration
}

// Status implements StatusReporter.
func (a *Array) Status(at time.Duration) Status {
	a.advance(at)
	st := Status{
		Rebuilding:      a.rb.member,
		Waiting:         append([]int(nil), a.rb.waiting...),
		RebuildProgress: 1,
		RebuildBytes:    a.c.rebuildBytes,
		LastRebuildDone: a.rb.doneAt,
	}
	for m, s := range a.state {
		if s == failedState {
			st.Failed = append(st.Failed, m)
		}
	}
	if a.rb.member >= 0 {
		st.RebuildProgress = a.rb.progress()
	}
	switch {
	case a.failErr != nil:
		st.State = Failed
	case a.rb.member >= 0:
		st.State = Rebuilding
	case len(st.Failed) > 0 || len(st.Waiting) > 0:
		st.State = Degraded
	}
	return st
}

// FailMember implements MemberFailer.
func (a *Array) FailMember(at time.Duration, i int) error {
	if i < 0 || i >= len(a.members) {
		return fmt.Errorf("%w: %s has no member %d (members 0 to %d)", models.ErrInvalid, a.cfg.Name, i, len(a.members)-1)
	}
	if a.state[i] == failedState {
		return fmt.Errorf("%w: %s: member %d is already failed", models.ErrInvalid, a.cfg.Name, i)
	}
	a.advance(at)
	a.markFailed(at, i)
	return nil
}

// markFailed fails member i at time at, background work being brought up
// to at.
func (a *Array) markFailed(at time.Duration, i int) {
	if a.state[i] == rebuildingState {
		a.dropRebuild(at, i)
	}
	a.state[i] = failedState
	if a.failErr == nil && a.tooManyFailed() {
		var list []int
		for m, s := range a.state {
			if s != inSyncState {
				list = append(list, m)
			}
		}
		a.failErr = fmt.Errorf("%w: %s failed: members %v are failed or not rebuilt, %s tolerates %d",
			models.ErrFailed, a.cfg.Name, list, a.cfg.Level, a.tolerates)
	}
}

// tooManyFailed reports whether some segment has lost more members than
// its level survives. A member being rebuilt counts as lost: like md, the
// array does not rely on the part of a replacement already rebuilt.
func (a *Array) tooManyFailed() bool {
	for i := range a.segs {
		s := &a.segs[i]
		lost := 0
		for _, m := range s.members {
			if a.state[m] != inSyncState {
				lost++
			}
		}
		switch s.level {
		case Single, RAID0:
			if lost > 0 {
				return true
			}
		case RAID1:
			if lost == len(s.members) {
				return true
			}
		case RAID5, RAID6:
			if lost > s.parityCount() {
				return true
			}
		case RAID10:
			for l := 0; l < len(s.members); l += 2 {
				if a.state[s.members[l]] != inSyncState && a.state[s.members[l+1]] != inSyncState {
					return true
				}
			}
		}
	}
	return false
}

// lostErr is returned when a request finds no surviving copy of its data;
// FailMember fails the array before that can happen, so this is a guard.
func (a *Array) lostErr() error {
	if a.failErr != nil {
		return a.failErr
	}
	return fmt.Errorf("%w: %s: no surviving copy of the data", models.ErrFailed, a.cfg.Name)
}

// degradedRead reconstructs member bytes [moff, moff+n) of a lost chunk of
// a parity row: it reads the same bytes from as many surviving members of
// the row as there are data chunks (data members first, then P, then Q)
// and XORs them (or solves with Q); the piece completes with the last read.
func (a *Array) degradedRead(s *segment, at time.Duration, row int64, lostLocal int, moff, n int64) error {
	d := s.width()
	got := 0
	p, q := s.parityLocal(row)
	try := func(l int) error {
		m := s.members[l]
		if got == d || l == lostLocal || !a.inSync(m, moff, n) {
			return nil
		}
		got++
		done, err := a.submitMember(m, models.Read, moff, n, at)
		a.done = max(a.done, done)
		return err
	}
	for i := 0; i < d; i++ {
		if err := try(s.dataLocal(row, i)); err != nil {
			return err
		}
	}
	if err := try(p); err != nil {
		return err
	}
	if q >= 0 {
		if err := try(q); err != nil {
			return err
		}
	}
	if got < d {
		return a.lostErr()
	}
	a.c.degradedReads++
	return nil
}
