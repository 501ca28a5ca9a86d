package raid

import (
	"time"

	"github.com/nasemu/nasemu/models"
)

// counters are the array's own figures; the members report theirs.
type counters struct {
	memberReads, memberWrites           int64
	memberBytesRead, memberBytesWritten int64
	// memberTicks and memberQueue are the members' time with the array's
	// requests in them, as /proc/diskstats counts a disk's: memberTicks
	// per direction (reads, writes) the sum of the requests' times from
	// issue to completion, memberQueue that of every request (flushes and
	// trims too), which is the integral over time of the number of
	// requests in flight at the members (in_queue).
	memberTicks       [2]time.Duration
	memberQueue       time.Duration
	readModifyWrites  int64 // partial-stripe writes done as RMW
	reconstructWrites int64 // partial-stripe writes done as RCW
	fullStripeWrites  int64 // rows written whole, with no reads
	degradedReads     int64 // chunk pieces reconstructed from the rest of their row
	rebuildBytes      int64 // bytes written to replacements
}

// Counters implements models.Observer. Member I/Os include rebuild I/O.
// member_read_ns, member_write_ns and member_queue_ns are the members'
// busy time in nanoseconds summed over the members (see counters).
// rebuild_progress_pct is that of the running rebuild, 0 while a failed
// member awaits replacement and 100 otherwise; failed_members counts
// members failed and not yet replaced.
func (a *Array) Counters() []models.Counter {
	failed := 0
	for _, s := range a.state {
		if s == failedState {
			failed++
		}
	}
	pct := 100.0
	switch {
	case a.rb.member >= 0:
		pct = 100 * a.rb.progress()
	case failed > 0:
		pct = 0
	}
	return []models.Counter{
		{Name: "member_reads", Value: float64(a.c.memberReads)},
		{Name: "member_writes", Value: float64(a.c.memberWrites)},
		{Name: "member_bytes_read", Value: float64(a.c.memberBytesRead)},
		{Name: "member_bytes_written", Value: float64(a.c.memberBytesWritten)},
		{Name: "member_read_ns", Value: float64(a.c.memberTicks[0])},
		{Name: "member_write_ns", Value: float64(a.c.memberTicks[1])},
		{Name: "member_queue_ns", Value: float64(a.c.memberQueue)},
		{Name: "read_modify_writes", Value: float64(a.c.readModifyWrites)},
		{Name: "reconstruct_writes", Value: float64(a.c.reconstructWrites)},
		{Name: "full_stripe_writes", Value: float64(a.c.fullStripeWrites)},
		{Name: "degraded_reads", Value: float64(a.c.degradedReads)},
		{Name: "rebuild_progress_pct", Value: pct},
		{Name: "rebuild_bytes", Value: float64(a.c.rebuildBytes)},
		{Name: "failed_members", Value: float64(failed)},
	}
}
