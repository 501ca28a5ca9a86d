package raid

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/nasemu/nasemu/models"
)

// MemberReplacer is implemented by arrays whose failed members can be
// replaced.
type MemberReplacer interface {
	// ReplaceMember puts dev in the place of failed member i at time at and
	// starts rebuilding it (or queues it behind a rebuild already running).
	// dev must be at least as large as the space the layout uses on i.
	ReplaceMember(at time.Duration, i int, dev models.Device) error
}

// rebuildStep is the member bytes one rebuild step copies (rounded up to
// a whole chunk): md works through a window of stripes at a time.
const rebuildStep = 1 << 20

// rebuild is the state of the rebuild engine.
//
// A rebuild is background work and runs lazily: when a request (or a
// Status or fault call) arrives at time t, every rebuild step whose issue
// time is at most t is issued first, so foreground I/O queues behind the
// rebuild I/O already due. A step reads its range from the surviving
// members of the segment (one mirror, the pair partner, or the rest of the
// parity row), then writes it to the replacement when those reads are
// done. The next step is issued after the paced interval step/rate and not
// before the previous step's reads complete, so a rebuild runs at the
// configured rate while the members keep up and slows down when
// foreground I/O holds them. With the md default pacing (Config.RebuildRate
// zero) the rate is speed_limit_max while no foreground request is in
// flight and speed_limit_min while one is.
type rebuild struct {
	member  int   // member being rebuilt, or -1
	pos     int64 // member bytes below pos are rebuilt
	total   int64 // member bytes to rebuild
	waiting []int // replaced members queued behind the current one

	started   time.Duration // when the current rebuild started
	prevIssue time.Duration // issue time of the last step
	prevReads time.Duration // completion of the last step's reads
	prevLen   int64         // bytes of the last step; 0 before the first
	doneAt    time.Duration // when the last finished rebuild completed
}

func (r *rebuild) progress() float64 {
	if r.total == 0 {
		return 1
	}
	return float64(r.pos) / float64(r.total)
}

// dropRebuild removes member m, which failed again, from the rebuild at
// time t.
func (a *Array) dropRebuild(t time.Duration, m int) {
	if a.rb.member == m {
		a.startNextRebuild(t)
		return
	}
	if i := slices.Index(a.rb.waiting, m); i >= 0 {
		a.rb.waiting = slices.Delete(a.rb.waiting, i, i+1)
	}
}

// startNextRebuild starts the rebuild of the first waiting member at time
// t, if any.
func (a *Array) startNextRebuild(t time.Duration) {
	r := &a.rb
	r.member = -1
	if len(r.waiting) == 0 {
		return
	}
	r.member = r.waiting[0]
	r.waiting = slices.Delete(r.waiting, 0, 1)
	r.pos, r.total, r.prevLen, r.started = 0, a.used[r.member], 0, t
}

// ReplaceMember implements MemberReplacer.
func (a *Array) ReplaceMember(at time.Duration, i int, dev models.Device) error {
	if i < 0 || i >= len(a.members) {
		return fmt.Errorf("%w: %s has no member %d (members 0 to %d)", models.ErrInvalid, a.cfg.Name, i, len(a.members)-1)
	}
	a.advance(at)
	if a.failErr != nil {
		return fmt.Errorf("%s: cannot rebuild onto member %d: %w", a.cfg.Name, i, a.failErr)
	}
	if a.state[i] != failedState {
		return fmt.Errorf("%w: %s: member %d is not failed", models.ErrInvalid, a.cfg.Name, i)
	}
	if dev == nil || dev.Capacity() < a.used[i] {
		var c int64
		if dev != nil {
			c = dev.Capacity()
		}
		return fmt.Errorf("%w: %s: replacement for member %d has %d bytes, the array uses %d", models.ErrConfig, a.cfg.Name, i, c, a.used[i])
	}
	a.members[i] = dev
	a.state[i] = rebuildingState
	a.free[i] = 0
	a.rb.waiting = append(a.rb.waiting, i)
	if a.rb.member < 0 {
		a.startNextRebuild(at)
	}
	return nil
}

// rates returns the rebuild rates in bytes per second: while foreground
// I/O is in flight and while the array is otherwise idle.
func (a *Array) rates() (busy, idle float64) {
	if a.cfg.RebuildRate > 0 {
		r := a.cfg.RebuildRate * 1e6
		return r, r
	}
	return DefaultRebuildMinKiBps * 1024, DefaultRebuildMaxKiBps * 1024
}

// nextStepTime returns when the next rebuild step may be issued, as far
// as is known when a request arrives at time at: foreground requests are
// known up to at, so the array is known to be busy from before the paced
// step time until at when fgBusy ≥ at, and known to have gone idle at
// fgBusy when fgBusy < at.
func (a *Array) nextStepTime(at time.Duration) time.Duration {
	r := &a.rb
	if r.prevLen == 0 {
		return r.started
	}
	busyRate, idleRate := a.rates()
	paced := func(rate float64) time.Duration {
		return r.prevIssue + time.Duration(float64(r.prevLen)/rate*float64(time.Second))
	}
	earliest := max(paced(idleRate), r.prevReads)
	if earliest >= a.fgBusy {
		return earliest // idle: full speed
	}
	// Foreground I/O is in flight at earliest: md throttles to its slow
	// pace until the array goes idle.
	slow := max(earliest, paced(busyRate))
	if a.fgBusy < at {
		return min(slow, a.fgBusy)
	}
	return slow
}

// advance issues the rebuild steps due by time at.
func (a *Array) advance(at time.Duration) {
	for a.rb.member >= 0 && a.failErr == nil {
		t := a.nextStepTime(at)
		if t > at {
			return
		}
		if err := a.rebuildStep(t); err != nil {
			// A member that fails a rebuild I/O is failed, as md does: a
			// failed source may fail the array, a failed replacement
			// stops its rebuild and the next waiting one starts. Any
			// other refusal stops the rebuild: it cannot go on.
			var me *memberError
			if !errors.As(err, &me) || !errors.Is(err, models.ErrFailed) || a.state[me.member] == failedState {
				a.rb.member = -1
				return
			}
			a.markFailed(t, me.member)
		}
	}
}

// rebuildStep copies one step's bytes onto the member being rebuilt.
func (a *Array) rebuildStep(t time.Duration) error {
	r := &a.rb
	m := r.member
	if r.pos >= r.total {
		a.finishRebuild(t, t)
		return nil
	}
	var s *segment
	for i := range a.segs {
		sg := &a.segs[i]
		if r.pos >= sg.base && r.pos < sg.base+sg.height && slices.Contains(sg.members, m) {
			s = sg
			break
		}
	}
	if s == nil { // space no segment uses: nothing to copy
		r.pos = r.total
		a.finishRebuild(t, t)
		return nil
	}
	step := (rebuildStep + s.chunk - 1) / s.chunk * s.chunk
	n := min(step, s.base+s.height-r.pos)
	readsDone := t
	read := func(src int) error {
		d, err := a.submitMember(src, models.Read, r.pos, n, t)
		readsDone = max(readsDone, d)
		return err
	}
	switch s.level {
	case RAID1:
		src := a.pickCopy(s, t, m, r.pos, n)
		if src < 0 {
			return a.lostErr()
		}
		if err := read(src); err != nil {
			return err
		}
	case RAID10:
		l := slices.Index(s.members, m)
		src := s.members[l^1]
		if !a.inSync(src, r.pos, n) {
			return a.lostErr()
		}
		if err := read(src); err != nil {
			return err
		}
	default: // RAID5, RAID6: every surviving member of the rows
		for _, src := range s.members {
			if src != m && a.inSync(src, r.pos, n) {
				if err := read(src); err != nil {
					return err
				}
			}
		}
	}
	wd, err := a.submitMember(m, models.Write, r.pos, n, readsDone)
	if err != nil {
		return err
	}
	r.prevIssue, r.prevReads, r.prevLen = t, readsDone, n
	r.pos += n
	a.c.rebuildBytes += n
	if r.pos >= r.total {
		a.finishRebuild(t, wd)
	}
	return nil
}

// finishRebuild marks the member in sync and starts the next waiting one.
func (a *Array) finishRebuild(t, done time.Duration) {
	a.state[a.rb.member] = inSyncState
	a.rb.doneAt = done
	a.startNextRebuild(t)
}
