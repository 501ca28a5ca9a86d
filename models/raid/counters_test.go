package raid

import (
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fixed"
)

// TestMemberTicks: the members' ticks are what /proc/diskstats would
// count for them, checked against queueing done by hand. On RAID 0 of two
// fixed-cost members (one unit, 100 µs a request), four reads issued at
// once into the first chunk queue on member 0 and complete after 1, 2, 3
// and 4 service times: their ticks sum to 10 service times, and in_queue,
// the time integral of the requests in flight, is the same. A write into
// the second chunk, issued at once too, has member 1 to itself: one
// service time of write ticks. A flush to both members (20 µs each, behind
// the queued requests on each) adds its time to in_queue alone.
func TestMemberTicks(t *testing.T) {
	const svc, other = 100 * time.Microsecond, 20 * time.Microsecond
	a := mustNew(t, Config{Level: RAID0, Chunk: 64 << 10}, fixedMembers(t, 2, fixed.Config{Capacity: 1 << 30, Read: svc, Write: svc, Other: other}))
	for i := range 4 {
		if _, err := a.Submit(0, models.Request{Op: models.Read, Offset: int64(i) * 4096, Length: 4096}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.Submit(0, models.Request{Op: models.Write, Offset: 64 << 10, Length: 4096}); err != nil {
		t.Fatal(err)
	}
	if r, w := counter(a, "member_read_ns"), counter(a, "member_write_ns"); r != float64(10*svc) || w != float64(svc) {
		t.Errorf("member ticks: read %v ns, write %v ns; want %v, %v", r, w, float64(10*svc), float64(svc))
	}
	if q := counter(a, "member_queue_ns"); q != float64(11*svc) {
		t.Errorf("member in_queue %v ns, want %v", q, float64(11*svc))
	}
	// The flush at 0 waits on member 0 behind 4 reads and on member 1
	// behind the write (a unit serves in order of submission where there
	// is no idle gap to fill).
	if _, err := a.Submit(0, models.Request{Op: models.Flush}); err != nil {
		t.Fatal(err)
	}
	want := 11*svc + (4*svc + other) + (svc + other)
	if q := counter(a, "member_queue_ns"); q != float64(want) {
		t.Errorf("member in_queue after the flush %v ns, want %v", q, float64(want))
	}
	if r := counter(a, "member_read_ns"); r != float64(10*svc) {
		t.Errorf("a flush changed the read ticks: %v ns", r)
	}
}
