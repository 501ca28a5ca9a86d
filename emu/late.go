package emu

import (
	"sync"
	"sync/atomic"
	"time"
)

// An emulator keeps its model's time only while the host keeps up: a
// request whose own work on the host (the data moved to or from the
// backing store, the time it took to reach the model) ends after the
// model's completion time is answered late, by that much, and the client
// measures the host instead of the modelled hardware. A setup faster than
// the host (an NVMe array behind 25GbE emulated on a small VM) or a host
// too loaded to serve it does that; so does a slow backing store. The
// volume counts such answers and their lateness, reports them in Stats,
// and says so in its log: at most once per LateLogInterval while answers
// are late, and in all at the end (LogLate).

// LateLogInterval is the shortest interval between two of the volume's
// log lines about late answers: often enough to show when a run fell
// behind, rarely enough not to flood the log of a run that always does.
const LateLogInterval = 10 * time.Second

// lateness accounts the volume's late answers.
type lateness struct {
	count atomic.Int64 // answers given after the model's completion time
	total atomic.Int64 // their lateness summed, model nanoseconds
	max   atomic.Int64 // the largest, model nanoseconds

	mu         sync.Mutex // guards the log's state
	logged     time.Time  // when the last line was written (wall)
	loggedN    int64      // count at that line
	loggedSum  int64      // total at that line
	loggedSeen int64      // answers (late or not) at that line
}

// add records an answer late by over (model time).
func (l *lateness) add(over time.Duration) {
	l.count.Add(1)
	l.total.Add(int64(over))
	for {
		m := l.max.Load()
		if int64(over) <= m || l.max.CompareAndSwap(m, int64(over)) {
			return
		}
	}
}

// Late is the account of a volume's late answers.
type Late struct {
	// Count is the number of answers given after the model's completion
	// time: the host's work for them ended later than the model allowed.
	Count int64
	// Total is their lateness summed, and Max the largest, in model time.
	Total, Max time.Duration
}

// Late returns the account of the volume's late answers so far.
func (v *Volume) Late() Late {
	return Late{Count: v.late.count.Load(), Total: time.Duration(v.late.total.Load()), Max: time.Duration(v.late.max.Load())}
}

// answered counts the answers the volume has given (late or not).
func (v *Volume) answered() int64 {
	var n int64
	for op := range v.stats {
		n += v.stats[op].count.Load()
	}
	return n
}

// checkLate records whether a request whose model completion time is done
// is late now that the host's work for it has ended, and logs the late
// answers of the last LateLogInterval when that has passed.
func (v *Volume) checkLate(done time.Duration) {
	over := v.clock.Now() - done
	if over <= 0 {
		return
	}
	v.late.add(over)
	l := &v.late
	if !l.mu.TryLock() {
		return // another request is logging
	}
	defer l.mu.Unlock()
	now := time.Now()
	if !l.logged.IsZero() && now.Sub(l.logged) < LateLogInterval {
		return
	}
	n, sum, seen := l.count.Load(), l.total.Load(), v.answered()
	v.log.Warn("answers later than the model: the host cannot keep up with the modelled hardware (slow it down with a larger time scale)",
		"late", n-l.loggedN, "of", max(n-l.loggedN, seen-l.loggedSeen), "late_by", time.Duration(sum-l.loggedSum), "max", time.Duration(l.max.Load()))
	l.logged, l.loggedN, l.loggedSum, l.loggedSeen = now, n, sum, seen
}

// LogLate writes the account of the late answers of the volume's whole
// life to its log, if any answer was late: what a run should say at its
// end.
func (v *Volume) LogLate() {
	if l := v.Late(); l.Count > 0 {
		v.log.Warn("answers later than the model in all: the host could not keep up with the modelled hardware",
			"late", l.Count, "of", v.answered(), "late_by", l.Total, "max", l.Max)
	}
}
