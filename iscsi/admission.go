package iscsi

import (
	"container/list"
	"net"
	"time"
)

// Admission: who gets a connection, a login and a session.
//
// A connection is first "waiting": accepted, its first Login PDU not yet
// complete. At most MaxWaiting connections wait; one more evicts the
// one that has waited longest, so connections that never speak (or
// speak too slowly) cannot keep an initiator that logs in at once out.
// Once its first Login PDU is in, a connection is "logging in", which
// at most MaxLoginsPerAddress connections of one address and MaxSessions
// in all may be at once, for at most LoginTimeout. A login that succeeds
// becomes a session: at most MaxSessions sessions, MaxSessionsPerAddress
// of one address. Slots are counted apart, so waiting connections never
// take a session's or a login's.
//
// Failed CHAP attempts slow their address down: each failure doubles the
// time the address's next CHAP response waits before it is checked (from
// chapBackoffMin up to chapBackoffMax), and those waits queue behind
// each other, so several connections of one address cannot guess in
// parallel; a success clears the record. One log line per address per
// failLogEvery says how many failures there were.

// Defaults of the admission limits (TargetConfig).
const (
	defaultMaxWaiting         = 64
	defaultLoginsPerAddress   = 8
	defaultSessionsPerAddress = 16
	defaultLoginTimeout       = 15 * time.Second
	// LIO's defaults: a NOP-In after 15 s of silence (nopin_timeout),
	// the connection dropped when its answer has not come 30 s later
	// (nopin_response_timeout).
	defaultNopInInterval = 15 * time.Second
	defaultNopInTimeout  = 30 * time.Second

	chapBackoffMin = 100 * time.Millisecond
	chapBackoffMax = 5 * time.Second
	// failForget is how long an address's failures are remembered
	// after its last one; maxFailRecords bounds the table.
	failForget     = 10 * time.Minute
	maxFailRecords = 4096
	failLogEvery   = 10 * time.Second
)

// addrKey is the address part of a remote address: the unit of the
// per-address limits.
func addrKey(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// Connection states for admission.
const (
	stateWaiting = iota
	stateLoggingIn
	stateSession
	stateGone
)

// admission holds the counts; the Target's mutex guards it.
type admission struct {
	waiting  *list.List // of *conn, oldest first
	logins   map[string]int
	sessions map[string]int
	nLogins  int
	nSession int
	fails    map[string]*failRecord
	evicted  int64
}

type failRecord struct {
	count    int
	next     time.Time // the next CHAP response of the address is checked then
	last     time.Time // the latest failure
	logged   time.Time // the latest log line
	unlogged int       // failures since that line
}

func newAdmission() admission {
	return admission{waiting: list.New(), logins: map[string]int{}, sessions: map[string]int{}, fails: map[string]*failRecord{}}
}

// accepted registers a new connection as waiting and returns the one it
// evicts, if any. The caller holds t.mu.
func (t *Target) accepted(c *conn) (evict *conn) {
	a := &t.adm
	if a.waiting.Len() >= t.cfg.MaxWaiting {
		e := a.waiting.Front()
		evict = e.Value.(*conn)
		a.waiting.Remove(e)
		evict.elem = nil
		evict.state = stateGone
		a.evicted++
	}
	c.state = stateWaiting
	c.elem = a.waiting.PushBack(c)
	return evict
}

// loggingIn moves a waiting connection whose first Login PDU is in to
// the logging-in state; false when it was evicted or its address (or the
// target) has too many logins in progress.
func (t *Target) loggingIn(c *conn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	a := &t.adm
	if c.state != stateWaiting {
		return false
	}
	a.waiting.Remove(c.elem)
	c.elem = nil
	if a.logins[c.addr] >= t.cfg.MaxLoginsPerAddress || a.nLogins >= t.cfg.MaxSessions {
		c.state = stateGone
		return false
	}
	a.logins[c.addr]++
	a.nLogins++
	c.state = stateLoggingIn
	return true
}

// session turns a login into a session; false when the target or the
// address has as many sessions as it may.
func (t *Target) session(c *conn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	a := &t.adm
	if c.state != stateLoggingIn || a.nSession >= t.cfg.MaxSessions || a.sessions[c.addr] >= t.cfg.MaxSessionsPerAddress {
		return false
	}
	t.leave(c)
	a.sessions[c.addr]++
	a.nSession++
	c.state = stateSession
	return true
}

// leave takes a connection out of the counts. The caller holds t.mu.
func (t *Target) leave(c *conn) {
	a := &t.adm
	switch c.state {
	case stateWaiting:
		a.waiting.Remove(c.elem)
		c.elem = nil
	case stateLoggingIn:
		a.nLogins--
		if a.logins[c.addr]--; a.logins[c.addr] <= 0 {
			delete(a.logins, c.addr)
		}
	case stateSession:
		a.nSession--
		if a.sessions[c.addr]--; a.sessions[c.addr] <= 0 {
			delete(a.sessions, c.addr)
		}
	}
	c.state = stateGone
}

// chapTurn returns when the address's next CHAP response may be checked,
// and books the turn after it: the backoff of its failures, one check
// at a time.
func (t *Target) chapTurn(addr string, now time.Time) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.adm.fails[addr]
	if r == nil {
		return now
	}
	at := r.next
	if at.Before(now) {
		at = now
	}
	r.next = at.Add(backoff(r.count))
	return at
}

func backoff(failures int) time.Duration {
	if failures <= 0 {
		return 0
	}
	d := chapBackoffMin << min(failures-1, 16)
	return min(d, chapBackoffMax)
}

// chapResult records the outcome of a CHAP check of addr; it reports
// whether a failure should be logged now, and how many failures the line
// covers.
func (t *Target) chapResult(addr string, ok bool, now time.Time) (log bool, failures int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	a := &t.adm
	if ok {
		delete(a.fails, addr)
		return false, 0
	}
	r := a.fails[addr]
	if r == nil {
		if len(a.fails) >= maxFailRecords {
			t.forgetFailures(now)
		}
		r = &failRecord{next: now}
		a.fails[addr] = r
	}
	r.count++
	r.last = now
	r.unlogged++
	if next := now.Add(backoff(r.count)); next.After(r.next) {
		r.next = next
	}
	if now.Sub(r.logged) < failLogEvery {
		return false, 0
	}
	n := r.unlogged
	r.logged, r.unlogged = now, 0
	return true, n
}

// forgetFailures drops old records, and the oldest half when all are
// recent (an attack from many addresses). The caller holds t.mu.
func (t *Target) forgetFailures(now time.Time) {
	a := &t.adm
	for k, r := range a.fails {
		if now.Sub(r.last) > failForget {
			delete(a.fails, k)
		}
	}
	for k := range a.fails {
		if len(a.fails) < maxFailRecords/2 {
			break
		}
		delete(a.fails, k)
	}
}
