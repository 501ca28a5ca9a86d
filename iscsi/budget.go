package iscsi

import "sync"

// budget is a count of bytes that commands may hold in buffers: the data
// a write collects before it executes, the data-in a read holds until
// it is sent. A command reserves what it needs when it is received, all
// or nothing, and never waits for it: a command that does not fit is
// answered TASK SET FULL (or BUSY) at once, the status SCSI initiators
// retry after one of their commands completes. Never waiting means a
// command cannot hold a reservation while it waits for more, so no two
// commands can starve each other; an initiator that sends less data than
// it announced loses the reservation when the Data-Out timeout drops its
// connection.
type budget struct {
	mu   sync.Mutex
	free int64
}

func newBudget(n int64) *budget { return &budget{free: n} }

// take reserves n bytes and reports whether it could.
func (b *budget) take(n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if n > b.free {
		return false
	}
	b.free -= n
	return true
}

// give returns n bytes that take reserved.
func (b *budget) give(n int64) {
	b.mu.Lock()
	b.free += n
	b.mu.Unlock()
}

// reservation is n bytes taken from a session's budget and the target's.
type reservation struct {
	session, target *budget
	n               int64
}

// reserve takes n bytes from both budgets, or nothing.
func reserve(session, target *budget, n int64) (reservation, bool) {
	if n == 0 {
		return reservation{}, true
	}
	if !session.take(n) {
		return reservation{}, false
	}
	if !target.take(n) {
		session.give(n)
		return reservation{}, false
	}
	return reservation{session: session, target: target, n: n}, true
}

// release gives the bytes back; it may be called on a zero reservation.
func (r reservation) release() {
	if r.n > 0 {
		r.session.give(r.n)
		r.target.give(r.n)
	}
}
