package iscsi

import (
	"container/list"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nasemu/nasemu/iscsi/pdu"
	"github.com/nasemu/nasemu/iscsi/scsi"
	"github.com/nasemu/nasemu/models"
)

// DefaultIQN is the target name when none is configured.
const DefaultIQN = "iqn.2026-01.org.nasemu:lun"

// CHAP holds the one-way CHAP credentials an initiator must present.
type CHAP struct {
	User   string
	Secret string
}

// String never shows the secret.
func (c CHAP) String() string { return "CHAP(user=" + c.User + ")" }

// TargetConfig describes a target. The zero value of each field but LU
// means its default.
type TargetConfig struct {
	IQN   string // target name; "" means DefaultIQN
	Alias string // TargetAlias; may be empty
	// LU is LUN 0, the only logical unit.
	LU *scsi.LU
	// CHAP, when set, is required of every initiator.
	CHAP *CHAP
	// Logger gets warnings (refused logins, protocol errors); nil is quiet.
	Logger *slog.Logger
	// QueueDepth is the commands each session may have outstanding (the
	// CmdSN window); 0 means 128.
	QueueDepth int
	// MaxRecvDataSegment is the target's MaxRecvDataSegmentLength; 0
	// means 256 KiB.
	MaxRecvDataSegment int
	// MaxBurst and FirstBurst cap the negotiated burst lengths; 0 means
	// 1 MiB and 256 KiB.
	MaxBurst, FirstBurst int
	// MaxSessions bounds the sessions, and apart from them the logins in
	// progress; 0 means 64. MaxSessionsPerAddress and
	// MaxLoginsPerAddress bound those of one initiator address; 0 means
	// 16 and 8.
	MaxSessions, MaxSessionsPerAddress, MaxLoginsPerAddress int
	// MaxWaiting bounds the connections whose first Login PDU has not
	// come yet; one more evicts the oldest of them. 0 means 64.
	MaxWaiting int
	// LoginTimeout bounds a login from the connection to the full-feature
	// phase; 0 means 15 s.
	LoginTimeout time.Duration
	// NopInInterval is the silence after which the target pings a session
	// with a NOP-In, and NopInTimeout how long it then waits for any PDU
	// before it drops the session; 0 means 15 s and 30 s (LIO's
	// nopin_timeout and nopin_response_timeout).
	NopInInterval, NopInTimeout time.Duration
	// SessionBuffer bounds the bytes the commands of one session hold in
	// buffers (data-out being collected, data-in being sent, the device
	// server's own); 0 means 64 MiB: two commands of the largest transfer
	// (the block limits page's 32 MiB), or an ORWRITE of it.
	SessionBuffer int64
	// TargetBuffer bounds the same over all sessions; 0 means 512 MiB. A
	// command that does not fit in either is answered TASK SET FULL.
	TargetBuffer int64
	// DataOutTimeout drops a connection whose solicited (or unsolicited)
	// Data-Out does not arrive this long after the R2T (or command), so
	// that a command whose data never comes gives its buffer back; 0
	// means 20 s. Linux's LIO target waits 3 s (dataout_timeout) and
	// then retries the R2T; at ErrorRecoveryLevel 0 there is no retry.
	DataOutTimeout time.Duration
}

// Validate checks the configuration.
func (c TargetConfig) Validate() error {
	if c.LU == nil {
		return fmt.Errorf("%w: target without a logical unit", models.ErrConfig)
	}
	if c.IQN != "" && !validName(c.IQN) {
		return fmt.Errorf("%w: %q is not an iSCSI name (iqn.YYYY-MM.reversed.domain[:id])", models.ErrConfig, c.IQN)
	}
	if c.CHAP != nil && (c.CHAP.User == "" || len(c.CHAP.Secret) < 12 || len(c.CHAP.Secret) > 255) {
		return fmt.Errorf("%w: CHAP needs a user and a secret of 12 to 255 bytes", models.ErrConfig)
	}
	if c.QueueDepth < 0 || c.MaxRecvDataSegment < 0 || c.MaxBurst < 0 || c.FirstBurst < 0 || c.MaxSessions < 0 ||
		c.MaxSessionsPerAddress < 0 || c.MaxLoginsPerAddress < 0 || c.MaxWaiting < 0 || c.LoginTimeout < 0 ||
		c.NopInInterval < 0 || c.NopInTimeout < 0 || c.SessionBuffer < 0 || c.TargetBuffer < 0 || c.DataOutTimeout < 0 {
		return fmt.Errorf("%w: negative target limit", models.ErrConfig)
	}
	if c.MaxRecvDataSegment != 0 && (c.MaxRecvDataSegment < 512 || c.MaxRecvDataSegment > maxNegotiatedSegment) {
		return fmt.Errorf("%w: MaxRecvDataSegmentLength %d outside 512..16777215", models.ErrConfig, c.MaxRecvDataSegment)
	}
	return nil
}

func validName(s string) bool {
	if len(s) > 223 {
		return false
	}
	if len(s) > 4 && (s[:4] == "iqn." || s[:4] == "eui.") {
		return true
	}
	return len(s) > 4 && s[:4] == "naa."
}

func (c TargetConfig) withDefaults() TargetConfig {
	if c.IQN == "" {
		c.IQN = DefaultIQN
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.QueueDepth == 0 {
		c.QueueDepth = 128
	}
	if c.MaxRecvDataSegment == 0 {
		c.MaxRecvDataSegment = 256 << 10
	}
	if c.MaxBurst == 0 {
		c.MaxBurst = 1 << 20
	}
	if c.FirstBurst == 0 {
		c.FirstBurst = 256 << 10
	}
	c.FirstBurst = min(c.FirstBurst, c.MaxBurst)
	if c.MaxSessions == 0 {
		c.MaxSessions = 64
	}
	if c.MaxSessionsPerAddress == 0 {
		c.MaxSessionsPerAddress = defaultSessionsPerAddress
	}
	if c.MaxLoginsPerAddress == 0 {
		c.MaxLoginsPerAddress = defaultLoginsPerAddress
	}
	if c.MaxWaiting == 0 {
		c.MaxWaiting = defaultMaxWaiting
	}
	if c.LoginTimeout == 0 {
		c.LoginTimeout = defaultLoginTimeout
	}
	if c.NopInInterval == 0 {
		c.NopInInterval = defaultNopInInterval
	}
	if c.NopInTimeout == 0 {
		c.NopInTimeout = defaultNopInTimeout
	}
	if c.SessionBuffer == 0 {
		c.SessionBuffer = 2 * maxTransfer
	}
	if c.TargetBuffer == 0 {
		c.TargetBuffer = 16 * maxTransfer
	}
	c.SessionBuffer = max(c.SessionBuffer, 2*maxTransfer)
	c.TargetBuffer = max(c.TargetBuffer, c.SessionBuffer)
	if c.DataOutTimeout == 0 {
		c.DataOutTimeout = 20 * time.Second
	}
	return c
}

// LUNID returns a stable identifier of a target's LUN, for scsi.Config.ID.
func LUNID(iqn string, lun int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s/%d", iqn, lun)
	return h.Sum64()
}

// maxTransfer bounds the data of one command the target buffers: the
// block limits VPD page's maximum transfer length at 512-byte blocks.
const maxTransfer = 32 << 20

// Target is an iSCSI target serving one LUN. It is safe for concurrent use.
type Target struct {
	cfg TargetConfig
	log *slog.Logger

	mu        sync.Mutex
	listeners map[net.Listener]struct{}
	conns     map[*conn]struct{}
	closed    bool
	wg        sync.WaitGroup
	tsih      atomic.Uint32
	logins    atomic.Int64
	refused   atomic.Int64
	buffers   *budget // TargetBuffer
	busy      atomic.Int64
	adm       admission // guarded by mu
	down      int       // power losses in progress; guarded by mu
	done      chan struct{}
}

// NewTarget returns a target; Serve puts it on a listener.
func NewTarget(cfg TargetConfig) (*Target, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	return &Target{cfg: cfg, log: cfg.Logger, listeners: map[net.Listener]struct{}{}, conns: map[*conn]struct{}{},
		buffers: newBudget(cfg.TargetBuffer), adm: newAdmission(), done: make(chan struct{})}, nil
}

// IQN returns the target's name.
func (t *Target) IQN() string { return t.cfg.IQN }

// ErrClosed is returned by Serve once the target is closed.
var ErrClosed = errors.New("iscsi: target closed")

// Serve accepts connections on l until the target is closed. The caller
// chooses the address: the target never listens anywhere else.
func (t *Target) Serve(l net.Listener) error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return ErrClosed
	}
	t.listeners[l] = struct{}{}
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		delete(t.listeners, l)
		t.mu.Unlock()
	}()
	for {
		nc, err := l.Accept()
		if err != nil {
			t.mu.Lock()
			closed := t.closed
			t.mu.Unlock()
			if closed {
				return ErrClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return fmt.Errorf("iscsi: accept on %s: %w", l.Addr(), err)
		}
		t.mu.Lock()
		if t.closed || t.down > 0 {
			t.mu.Unlock()
			nc.Close()
			continue
		}
		c := newConn(t, nc)
		evict := t.accepted(c)
		t.conns[c] = struct{}{}
		t.wg.Add(1)
		t.mu.Unlock()
		if evict != nil {
			// The longest-waiting connection that has not begun to log in
			// makes room (see admission.go).
			evict.nc.Close()
		}
		go func() {
			defer t.wg.Done()
			defer close(c.ended)
			c.serve()
			t.mu.Lock()
			t.leave(c)
			delete(t.conns, c)
			t.mu.Unlock()
		}()
	}
}

// Close stops the listeners, drops every connection and waits for their
// tasks to end.
func (t *Target) Close() error {
	t.mu.Lock()
	if !t.closed {
		close(t.done)
	}
	t.closed = true
	for l := range t.listeners {
		l.Close()
	}
	for c := range t.conns {
		c.nc.Close()
	}
	t.mu.Unlock()
	t.wg.Wait()
	return nil
}

// Sessions returns the number of open connections (one per session).
func (t *Target) Sessions() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.conns)
}

// TargetStats counts logins and commands turned away.
type TargetStats struct {
	Logins, Refused int64
	// Evicted counts connections closed before their first Login PDU
	// to make room for newer ones (TargetConfig.MaxWaiting).
	Evicted int64
	// Busy counts commands answered TASK SET FULL or BUSY: no room in
	// the session's buffers, the target's, or the session's task set.
	Busy int64
}

// Stats returns the target's counters.
func (t *Target) Stats() TargetStats {
	t.mu.Lock()
	evicted := t.adm.evicted
	t.mu.Unlock()
	return TargetStats{Logins: t.logins.Load(), Refused: t.refused.Load(), Busy: t.busy.Load(), Evicted: evicted}
}

// conn is one connection, and with MaxConnections=1 one session.
type conn struct {
	t   *Target
	nc  net.Conn
	log *slog.Logger
	p   params

	ctx    context.Context
	cancel context.CancelFunc
	ended  chan struct{} // closed when the connection and its tasks have ended

	wmu    sync.Mutex
	statSN uint32
	wlim   pdu.Limits

	expCmdSN atomic.Uint32
	maxCmdSN atomic.Uint32
	snMu     sync.Mutex // orders CmdSN acceptance

	tmu   sync.Mutex
	tasks map[uint32]*task
	twg   sync.WaitGroup

	buffers *budget // SessionBuffer

	addr       string // the initiator's address, for admission
	loginStart time.Time
	state      int           // admission state; guarded by t.mu
	elem       *list.Element // in t.adm.waiting while waiting

	discovery     bool
	initiatorName string
	nexus         string // initiator port name: name,i,0xISID
	isid          [6]byte
	tsih          uint16
	nextTTT       atomic.Uint32
}

type task struct {
	req    *pdu.PDU
	once   sync.Once
	state  atomic.Int32 // taskRunning, then taskResponding or taskAborted
	itt    uint32
	cmdSN  uint32
	ctx    context.Context
	cancel context.CancelFunc
	dataCh chan *pdu.PDU
	mem    reservation // buffers the task may hold
}

// Task states: a task is aborted, or answers, never both.
const (
	taskRunning = iota
	taskResponding
	taskAborted
)

// claim commits the task to answering; false when it was aborted.
func (tk *task) claim() bool { return tk.state.CompareAndSwap(taskRunning, taskResponding) }

// abort aborts a task that has not started answering, and reports
// whether it did.
func (tk *task) abort() bool {
	if tk.state.CompareAndSwap(taskRunning, taskAborted) {
		tk.cancel()
		return true
	}
	return false
}

func newConn(t *Target, nc net.Conn) *conn {
	ctx, cancel := context.WithCancel(context.Background())
	return &conn{t: t, nc: nc, ctx: ctx, cancel: cancel, ended: make(chan struct{}), tasks: map[uint32]*task{},
		buffers: newBudget(t.cfg.SessionBuffer), addr: addrKey(nc.RemoteAddr()), log: t.log.With("remote", nc.RemoteAddr().String())}
}

// serve runs the connection: login, then the full-feature phase.
func (c *conn) serve() {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("iscsi: connection handler panicked; connection dropped", "panic", fmt.Sprint(r))
		}
		c.cancel()
		c.nc.Close()
		c.twg.Wait()
		if c.nexus != "" {
			c.t.cfg.LU.NexusLost(c.nexus)
		}
	}()
	if !c.login() {
		return
	}
	c.t.logins.Add(1)
	c.nexus = fmt.Sprintf("%s,i,0x%x", c.initiatorName, c.isid)
	c.log = c.log.With("initiator", c.initiatorName)
	c.log.Info("iscsi: login", "discovery", c.discovery, "header_digest", c.p.HeaderDigest, "data_digest", c.p.DataDigest)
	if err := c.fullFeature(); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !errors.Is(err, errLogout) {
		c.log.Warn("iscsi: connection dropped", "err", err)
	}
}

var errLogout = errors.New("logout")

func (c *conn) readLimits() pdu.Limits {
	return pdu.Limits{HeaderDigest: c.p.HeaderDigest, DataDigest: c.p.DataDigest, MaxData: c.p.RecvSegment}
}

// login runs the login phase; it reports whether the full-feature phase
// follows.
func (c *conn) login() bool {
	cfg := &c.t.cfg
	neg := newNegotiator(cfg.IQN, cfg.Alias, cfg.CHAP, params{MaxBurst: cfg.MaxBurst, FirstBurst: cfg.FirstBurst, RecvSegment: cfg.MaxRecvDataSegment})
	stage := -1
	var pending []byte // keys of continued (C bit) requests
	lim := pdu.Limits{MaxData: max(cfg.MaxRecvDataSegment, defaultMaxRecvSeg)}
	c.loginStart = time.Now()
	c.nc.SetReadDeadline(time.Now().Add(cfg.LoginTimeout))
	defer c.nc.SetReadDeadline(time.Time{})
	first := true
	for {
		req, err := pdu.Read(c.nc, lim)
		if err != nil {
			var ne net.Error
			switch {
			case first && (errors.Is(err, net.ErrClosed) || errors.As(err, &ne) && ne.Timeout()):
				// Evicted or timed out before it spoke: not worth a line
				// each (a flood of idle connections would fill the log).
				c.log.Debug("iscsi: connection closed before login", "err", err)
			case !errors.Is(err, io.EOF):
				c.log.Warn("iscsi: login: bad PDU", "err", err)
			}
			return false
		}
		if first && !c.t.loggingIn(c) {
			c.log.Debug("iscsi: login refused: too many logins in progress", "address", c.addr)
			c.t.refused.Add(1)
			c.loginReply(req, nil, loginOutOfResources, 0, 0, false)
			return false
		}
		if req.Opcode() != pdu.OpLoginReq {
			c.log.Warn("iscsi: login: unexpected PDU before full-feature phase", "opcode", req.Opcode().String())
			c.loginReply(req, nil, loginInvalidRequest, stage, stage, false)
			return false
		}
		flags := req.Flags()
		transit, cont := flags&0x80 != 0, flags&0x40 != 0
		csg, nsg := int(flags>>2&3), int(flags&3)
		if first {
			first = false
			copy(c.isid[:], req.Header[8:14])
			if req.Header[3] > 0 { // VersionMin above 0: a later protocol
				c.loginReply(req, nil, loginUnsupportedVer, csg, nsg, false)
				return false
			}
			if binary.BigEndian.Uint16(req.Header[14:]) != 0 {
				// Adding a connection to, or reinstating, a session: one
				// connection per session here.
				c.loginReply(req, nil, loginNoSession, csg, nsg, false)
				return false
			}
			c.statSN = req.U32(pdu.OffExpStatSN)
			c.expCmdSN.Store(req.U32(pdu.OffCmdSN))
			c.maxCmdSN.Store(req.U32(pdu.OffCmdSN) + uint32(cfg.QueueDepth) - 1)
		}
		if (transit && cont) || csg == 2 || csg == stageFullFeature || (transit && (nsg == 2 || nsg <= csg)) || csg < stage {
			c.log.Warn("iscsi: login: invalid stage transition", "csg", csg, "nsg", nsg, "transit", transit)
			c.loginReply(req, nil, loginInitiatorError, csg, nsg, false)
			return false
		}
		stage = csg
		pending = append(pending, req.Data...)
		if len(pending) > 64<<10 {
			c.loginReply(req, nil, loginOutOfResources, csg, nsg, false)
			return false
		}
		if cont {
			c.loginReply(req, nil, loginSuccess, csg, nsg, false) // ask for the rest
			continue
		}
		keys, err := pdu.ParseText(pending)
		pending = pending[:0]
		if err != nil {
			c.log.Warn("iscsi: login: malformed keys", "err", err)
			c.loginReply(req, nil, loginInitiatorError, csg, nsg, false)
			return false
		}
		_, chapR := keys.Get("CHAP_R")
		chapR = chapR && cfg.CHAP != nil && csg == stageSecurity
		if chapR && !c.chapWait() {
			return false
		}
		resp, status, allowed := neg.login(csg, keys, transit)
		if chapR {
			log, n := c.t.chapResult(c.addr, status == loginSuccess, time.Now())
			if status == loginAuthFailed {
				c.t.refused.Add(1)
				if log {
					c.log.Warn("iscsi: login refused", "initiator", neg.initiatorName, "status", fmt.Sprintf("0x%04x", status),
						"reason", neg.failure, "failures_from_address", n)
				}
				c.loginReply(req, nil, status, csg, nsg, false)
				return false
			}
		}
		if status != loginSuccess {
			c.t.refused.Add(1)
			c.log.Warn("iscsi: login refused", "initiator", neg.initiatorName, "status", fmt.Sprintf("0x%04x", status), "reason", neg.failure)
			c.loginReply(req, nil, status, csg, nsg, false)
			return false
		}
		if allowed && nsg == stageFullFeature && !c.t.session(c) {
			c.t.refused.Add(1)
			c.log.Warn("iscsi: login refused: session limit", "initiator", neg.initiatorName,
				"limit", cfg.MaxSessions, "per_address", cfg.MaxSessionsPerAddress)
			c.loginReply(req, nil, loginOutOfResources, csg, nsg, false)
			return false
		}
		if allowed && nsg == stageFullFeature {
			c.tsih = uint16(c.t.tsih.Add(1))
			if c.tsih == 0 {
				c.tsih = uint16(c.t.tsih.Add(1))
			}
			if neg.alias != "" {
				resp.Add("TargetAlias", neg.alias)
			}
		}
		if err := c.loginReply(req, resp, loginSuccess, csg, nsg, allowed); err != nil {
			return false
		}
		if allowed {
			stage = nsg
		}
		if allowed && nsg == stageFullFeature {
			c.p = neg.p
			c.initiatorName = neg.initiatorName
			c.discovery = neg.sessionType == sessionDiscovery
			c.wlim = pdu.Limits{HeaderDigest: c.p.HeaderDigest, DataDigest: c.p.DataDigest}
			return true
		}
	}
}

// chapWait waits for the address's turn to have a CHAP response checked
// (see admission.go); false when the target closes or the login times
// out first.
func (c *conn) chapWait() bool {
	at := c.t.chapTurn(c.addr, time.Now())
	d := time.Until(at)
	if d <= 0 {
		return true
	}
	if dl, ok := c.loginDeadline(); ok && at.After(dl) {
		return false
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-tm.C:
		return true
	case <-c.t.done:
		return false
	}
}

func (c *conn) loginDeadline() (time.Time, bool) {
	return c.loginStart.Add(c.t.cfg.LoginTimeout), !c.loginStart.IsZero()
}

func (c *conn) loginReply(req *pdu.PDU, keys pdu.Text, status, csg, nsg int, transit bool) error {
	p := pdu.New(pdu.OpLoginResp)
	p.Header[1] = byte(csg&3) << 2
	if transit {
		p.Header[1] |= 0x80 | byte(nsg&3)
	}
	p.Header[2], p.Header[3] = 0, 0 // VersionMax, VersionActive
	copy(p.Header[8:14], req.Header[8:14])
	if transit && nsg == stageFullFeature {
		binary.BigEndian.PutUint16(p.Header[14:], c.tsih)
	}
	p.SetU32(pdu.OffITT, req.ITT())
	p.SetU32(pdu.OffCmdSN, c.statSN)
	c.statSN++
	p.SetU32(pdu.OffExpStatSN, c.expCmdSN.Load())
	p.SetU32(pdu.OffMaxCmdSN, c.maxCmdSN.Load())
	p.Header[36], p.Header[37] = byte(status>>8), byte(status)
	p.Data = keys.Encode()
	c.nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
	defer c.nc.SetWriteDeadline(time.Time{})
	return pdu.Write(c.nc, p, pdu.Limits{})
}

// send writes a response. status PDUs take the next StatSN; every PDU
// carries the current ExpCmdSN and MaxCmdSN.
func (c *conn) send(p *pdu.PDU, status bool) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if status {
		p.SetU32(pdu.OffCmdSN, c.statSN)
		c.statSN++
	} else if p.Opcode() != pdu.OpDataIn {
		p.SetU32(pdu.OffCmdSN, c.statSN)
	}
	p.SetU32(pdu.OffExpStatSN, c.expCmdSN.Load())
	p.SetU32(pdu.OffMaxCmdSN, c.maxCmdSN.Load())
	c.nc.SetWriteDeadline(time.Now().Add(30 * time.Second))
	err := pdu.Write(c.nc, p, c.wlim)
	if err != nil {
		c.nc.Close() // a half-written PDU leaves the stream unusable
	}
	return err
}

// Reject reasons (RFC 7143 section 11.17.1).
const (
	rejectDataDigest   = 0x02
	rejectProtocol     = 0x04
	rejectNotSupported = 0x05
	rejectInvalidField = 0x09
	rejectWaitLogout   = 0x0b
)

func (c *conn) reject(req *pdu.PDU, reason byte) error {
	p := pdu.New(pdu.OpReject)
	p.Header[2] = reason
	p.SetU32(pdu.OffITT, pdu.Reserved)
	p.Data = append([]byte(nil), req.Header[:]...)
	return c.send(p, true)
}

// acceptCmdSN applies the CmdSN rules to a request. It reports false
// for a non-immediate request outside the window, which is ignored.
func (c *conn) acceptCmdSN(req *pdu.PDU) bool {
	if req.Immediate() {
		return true
	}
	sn := req.U32(pdu.OffCmdSN)
	c.snMu.Lock()
	defer c.snMu.Unlock()
	exp, mx := c.expCmdSN.Load(), c.maxCmdSN.Load()
	if int32(sn-exp) < 0 || int32(sn-mx) > 0 {
		c.log.Debug("iscsi: CmdSN outside the window: ignored", "cmdsn", sn, "exp", exp, "max", mx)
		return false
	}
	c.expCmdSN.Store(sn + 1)
	return true
}

// done opens the window by one when a non-immediate request finishes. It
// is called before the request's status is sent, so that the status
// carries the new MaxCmdSN.
func (c *conn) done(req *pdu.PDU) {
	if !req.Immediate() {
		c.maxCmdSN.Add(1)
	}
}

// finish is done for a task, once.
func (c *conn) finish(tk *task) { tk.once.Do(func() { c.done(tk.req) }) }

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (r *countingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.n += int64(n)
	return n, err
}

// fullFeature reads and dispatches requests until the connection ends.
// A session silent for NopInInterval is pinged with a NOP-In; one that
// then sends nothing for NopInTimeout — or stops in the middle of a PDU
// for NopInInterval — is dropped, which frees its slot and buffers.
func (c *conn) fullFeature() error {
	in := &countingReader{r: c.nc}
	pinged := false
	for {
		wait := c.t.cfg.NopInInterval
		if pinged {
			wait = c.t.cfg.NopInTimeout
		}
		c.nc.SetReadDeadline(time.Now().Add(wait))
		before := in.n
		req, err := pdu.Read(in, c.readLimits())
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() && in.n == before && !pinged {
				pinged = true
				if err := c.ping(); err != nil {
					return err
				}
				continue
			}
			if errors.As(err, &ne) && ne.Timeout() {
				return fmt.Errorf("no answer to a NOP-In for %v: %w", c.t.cfg.NopInTimeout, err)
			}
			if errors.Is(err, pdu.ErrDataDigest) && req != nil {
				c.reject(req, rejectDataDigest)
				continue
			}
			return err
		}
		pinged = false
		if err := c.dispatch(req); err != nil {
			return err
		}
	}
}

// ping sends a NOP-In that asks for a NOP-Out (RFC 7143 11.19): its
// target transfer tag is not the reserved one, its StatSN is not
// advanced.
func (c *conn) ping() error {
	p := pdu.New(pdu.OpNopIn)
	p.Header[1] = pdu.FlagFinal
	p.SetU32(pdu.OffITT, pdu.Reserved)
	ttt := c.nextTTT.Add(1)
	if ttt == pdu.Reserved {
		ttt = c.nextTTT.Add(1)
	}
	p.SetU32(pdu.OffTTT, ttt)
	return c.send(p, false)
}

func (c *conn) dispatch(req *pdu.PDU) error {
	op := req.Opcode()
	if c.discovery {
		switch op {
		case pdu.OpTextReq, pdu.OpLogoutReq, pdu.OpNopOut:
		default:
			c.log.Warn("iscsi: discovery session sent a command", "opcode", op.String())
			return c.reject(req, rejectProtocol)
		}
	}
	switch op {
	case pdu.OpNopOut:
		return c.nopOut(req)
	case pdu.OpSCSICmd:
		return c.scsiCommand(req)
	case pdu.OpDataOut:
		return c.dataOut(req)
	case pdu.OpTaskMgmt:
		return c.taskMgmt(req)
	case pdu.OpTextReq:
		return c.text(req)
	case pdu.OpLogoutReq:
		return c.logout(req)
	case pdu.OpLoginReq:
		c.log.Warn("iscsi: login request in the full-feature phase")
		c.reject(req, rejectProtocol)
		return errors.New("login request in the full-feature phase")
	case pdu.OpSNACKReq:
		return c.reject(req, rejectNotSupported) // ErrorRecoveryLevel 0
	}
	c.log.Warn("iscsi: unknown opcode", "opcode", op.String())
	return c.reject(req, rejectNotSupported)
}

func (c *conn) nopOut(req *pdu.PDU) error {
	if !c.acceptCmdSN(req) {
		return nil
	}
	c.done(req)
	if req.ITT() == pdu.Reserved {
		return nil // a ping answer or a CmdSN carrier: no reply
	}
	p := pdu.New(pdu.OpNopIn)
	copy(p.Header[8:16], req.Header[8:16])
	p.SetU32(pdu.OffITT, req.ITT())
	p.SetU32(pdu.OffTTT, pdu.Reserved)
	if len(req.Data) <= c.p.SendSegment {
		p.Data = req.Data
	}
	return c.send(p, true)
}

func (c *conn) text(req *pdu.PDU) error {
	if !c.acceptCmdSN(req) {
		return nil
	}
	c.done(req)
	if req.Flags()&0x40 != 0 {
		return c.reject(req, rejectNotSupported) // continued text: our answers are short
	}
	keys, err := pdu.ParseText(req.Data)
	var resp pdu.Text
	if err != nil {
		return c.reject(req, rejectInvalidField)
	}
	for _, kv := range keys {
		if kv.Key != "SendTargets" {
			resp.Add(kv.Key, "NotUnderstood")
			continue
		}
		if kv.Value == "All" && !c.discovery {
			resp.Add(kv.Key, "Reject")
			continue
		}
		if kv.Value == "All" || kv.Value == "" || kv.Value == c.t.cfg.IQN {
			resp.Add("TargetName", c.t.cfg.IQN)
			resp.Add("TargetAddress", portal(c.nc.LocalAddr())+",1")
		}
	}
	p := pdu.New(pdu.OpTextResp)
	p.SetU32(pdu.OffITT, req.ITT())
	p.SetU32(pdu.OffTTT, pdu.Reserved)
	p.Data = resp.Encode()
	return c.send(p, true)
}

func portal(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return net.JoinHostPort(ta.IP.String(), fmt.Sprint(ta.Port))
	}
	return a.String()
}

func (c *conn) logout(req *pdu.PDU) error {
	if !c.acceptCmdSN(req) {
		return nil
	}
	c.done(req)
	reason := req.Flags() & 0x7f
	p := pdu.New(pdu.OpLogoutResp)
	p.SetU32(pdu.OffITT, req.ITT())
	if reason > 2 {
		p.Header[2] = 3 // cleanup failed
	} else if reason == 2 {
		p.Header[2] = 2 // recovery not supported (ErrorRecoveryLevel 0)
	}
	c.abortAll()
	c.twg.Wait()
	c.send(p, true)
	return errLogout
}

// Task management functions and responses (RFC 7143 section 11.5).
const (
	tmfAbortTask        = 1
	tmfAbortTaskSet     = 2
	tmfClearACA         = 3
	tmfClearTaskSet     = 4
	tmfLUNReset         = 5
	tmfTargetWarmReset  = 6
	tmfTargetColdReset  = 7
	tmfTaskReassign     = 8
	tmfComplete         = 0
	tmfNoTask           = 1
	tmfNotSupported     = 5
	tmfFunctionRejected = 255
)

func (c *conn) taskMgmt(req *pdu.PDU) error {
	if !c.acceptCmdSN(req) {
		return nil
	}
	c.done(req)
	fn := req.Flags() & 0x7f
	resp := byte(tmfComplete)
	switch fn {
	case tmfAbortTask:
		rtt := req.U32(pdu.OffTTT)
		c.tmu.Lock()
		tk := c.tasks[rtt]
		c.tmu.Unlock()
		switch {
		case tk != nil && tk.abort():
		case tk != nil:
			resp = tmfNoTask // its response is on the way
		default:
			// Done and answered, or never received: a RefCmdSN the
			// session has passed names a finished task; one still ahead
			// is considered received and aborted (RFC 7143 11.5.1).
			if ref := req.U32(pdu.OffMaxCmdSN); int32(ref-c.expCmdSN.Load()) < 0 {
				resp = tmfNoTask
			}
		}
	case tmfAbortTaskSet, tmfClearTaskSet, tmfLUNReset, tmfTargetWarmReset:
		if req.U64(pdu.OffLUN)>>48 != 0 && fn != tmfTargetWarmReset {
			resp = 2 // LUN does not exist
			break
		}
		c.abortAll()
		if fn == tmfLUNReset || fn == tmfTargetWarmReset {
			c.t.cfg.LU.Reset()
		}
	case tmfTargetColdReset:
		c.abortAll()
		c.t.cfg.LU.Reset()
		p := c.tmfResponse(req, tmfComplete)
		c.send(p, true)
		return errors.New("target cold reset")
	case tmfClearACA, tmfTaskReassign:
		resp = tmfNotSupported
	default:
		resp = tmfFunctionRejected
	}
	return c.send(c.tmfResponse(req, resp), true)
}

func (c *conn) tmfResponse(req *pdu.PDU, resp byte) *pdu.PDU {
	p := pdu.New(pdu.OpTaskResp)
	p.Header[2] = resp
	p.SetU32(pdu.OffITT, req.ITT())
	return p
}

func (c *conn) abortAll() {
	c.tmu.Lock()
	for _, tk := range c.tasks {
		tk.abort()
	}
	c.tmu.Unlock()
}

func (c *conn) dataOut(req *pdu.PDU) error {
	c.tmu.Lock()
	tk := c.tasks[req.ITT()]
	c.tmu.Unlock()
	if tk == nil {
		return nil // data of a finished or aborted task
	}
	select {
	case tk.dataCh <- req:
	case <-tk.ctx.Done():
	}
	return nil
}

func (c *conn) scsiCommand(req *pdu.PDU) error {
	if !c.acceptCmdSN(req) {
		return nil
	}
	itt := req.ITT()
	c.tmu.Lock()
	if _, dup := c.tasks[itt]; dup {
		c.tmu.Unlock()
		c.done(req)
		return c.reject(req, rejectProtocol)
	}
	// An immediate command counts against the window as the others do
	// (RFC 7143 4.2.2.1 asks a target to take at least one beyond it):
	// the session's task set holds at most QueueDepth+1 commands.
	full := req.Immediate() && len(c.tasks) > c.t.cfg.QueueDepth
	var mem reservation
	if !full {
		mem, full = c.reserve(req)
		full = !full
	}
	if full {
		none := len(c.tasks) == 0
		c.tmu.Unlock()
		return c.busy(req, none)
	}
	ctx, cancel := context.WithCancel(c.ctx)
	tk := &task{req: req, itt: itt, cmdSN: req.U32(pdu.OffCmdSN), ctx: ctx, cancel: cancel, dataCh: make(chan *pdu.PDU, 16), mem: mem}
	c.tasks[itt] = tk
	c.twg.Add(1)
	c.tmu.Unlock()
	go func() {
		defer c.twg.Done()
		defer func() {
			if r := recover(); r != nil {
				c.log.Error("iscsi: task panicked", "panic", fmt.Sprint(r), "cdb", fmt.Sprintf("% x", req.Header[32:48]))
				c.nc.Close()
			}
		}()
		c.runTask(tk, req)
		c.tmu.Lock()
		delete(c.tasks, itt)
		c.tmu.Unlock()
		cancel()
		c.finish(tk)
		tk.mem.release()
	}()
	return nil
}

// reserve takes from the session's and the target's buffer budgets what
// a command may hold: its data-out buffer (the expected data transfer
// length) and what the device server allocates for it. It reports false
// when either has no room.
func (c *conn) reserve(req *pdu.PDU) (reservation, bool) {
	var n, edtl int64
	if req.Flags()&cmdWrite != 0 {
		edtl = int64(req.U32(pdu.OffTTT))
		if edtl > maxTransfer {
			return reservation{}, true // refused before any data is taken
		}
		n = int64(scsi.BufferCap(int(edtl)))
	}
	n += int64(c.t.cfg.LU.WorkBytes(req.Header[32:48], int(edtl)))
	return reserve(c.buffers, c.t.buffers, n)
}

// busy answers a command the session or target has no room for: TASK
// SET FULL when the session has commands of its own in the task set
// (one of them completing makes room), BUSY when it has none (SAM-5
// 5.3.1). Initiators retry either. Data-Out that follows the command is
// dropped as a stray.
func (c *conn) busy(req *pdu.PDU, none bool) error {
	c.t.busy.Add(1)
	st := byte(scsi.StatusTaskSetFull)
	if none {
		st = scsi.StatusBusy
	}
	tk := &task{req: req, itt: req.ITT(), cancel: func() {}}
	want := 0
	if req.Flags()&cmdWrite != 0 {
		want = int(req.U32(pdu.OffTTT))
	}
	c.respond(tk, req, scsi.Response{Status: st, Want: want}, 0)
	return nil
}

var (
	errProtocol = errors.New("iscsi: protocol error")
	// errDataSN is a Data-Out out of sequence: the command fails (ABORTED
	// COMMAND, DATA PHASE ERROR) and the connection stays; its other
	// Data-Out PDUs are dropped as strays.
	errDataSN = errors.New("iscsi: Data-Out out of sequence")
)

// collect gathers a write's data: immediate data, unsolicited Data-Out
// and solicited bursts (one R2T outstanding at a time).
func (c *conn) collect(tk *task, req *pdu.PDU, edtl int) ([]byte, error) {
	buf := scsi.Buffer(edtl)
	got := copy(buf, req.Data)
	if len(req.Data) > edtl || (len(req.Data) > 0 && !c.p.ImmediateData) || len(req.Data) > c.p.FirstBurst {
		return nil, fmt.Errorf("%w: immediate data of %d bytes (EDTL %d)", errProtocol, len(req.Data), edtl)
	}
	// Unsolicited Data-Out follows unless the command has the F bit.
	if !req.Final() {
		if c.p.InitialR2T {
			return nil, fmt.Errorf("%w: unsolicited data with InitialR2T=Yes", errProtocol)
		}
		limit := min(c.p.FirstBurst, edtl)
		n, err := c.receive(tk, buf, pdu.Reserved, got, limit-got)
		if err != nil {
			return nil, err
		}
		got += n
	}
	var r2tsn uint32
	for got < edtl {
		n := min(c.p.MaxBurst, edtl-got)
		ttt := c.nextTTT.Add(1)
		if ttt == pdu.Reserved {
			ttt = c.nextTTT.Add(1)
		}
		r := pdu.New(pdu.OpR2T)
		copy(r.Header[8:16], req.Header[8:16])
		r.SetU32(pdu.OffITT, tk.itt)
		r.SetU32(pdu.OffTTT, ttt)
		r.SetU32(pdu.OffDataSN, r2tsn)
		r.SetU32(pdu.OffBufOff, uint32(got))
		r.SetU32(pdu.OffResidual, uint32(n))
		r2tsn++
		if err := c.send(r, false); err != nil {
			return nil, err
		}
		k, err := c.receive(tk, buf, ttt, got, n)
		if err != nil {
			return nil, err
		}
		got += k
	}
	return buf, nil
}

// receive reads Data-Out PDUs of one sequence (tagged ttt) into buf at
// [off, off+n), until the PDU with the F bit.
func (c *conn) receive(tk *task, buf []byte, ttt uint32, off, n int) (int, error) {
	var dataSN uint32
	got := 0
	// The sequence must arrive within the Data-Out timeout: a command
	// whose data never comes must not hold its buffer for ever.
	timeout := time.NewTimer(c.t.cfg.DataOutTimeout)
	defer timeout.Stop()
	for {
		var p *pdu.PDU
		select {
		case p = <-tk.dataCh:
		case <-tk.ctx.Done():
			return got, tk.ctx.Err()
		case <-timeout.C:
			return got, fmt.Errorf("%w: no Data-Out for %v", errProtocol, c.t.cfg.DataOutTimeout)
		}
		if p.U32(pdu.OffTTT) != ttt {
			return got, fmt.Errorf("%w: Data-Out with TTT 0x%x, want 0x%x", errProtocol, p.U32(pdu.OffTTT), ttt)
		}
		if sn := p.U32(pdu.OffDataSN); sn != dataSN {
			return got, fmt.Errorf("%w: DataSN %d, want %d", errDataSN, sn, dataSN)
		}
		dataSN++
		bo := int(p.U32(pdu.OffBufOff))
		if bo != off+got || bo+len(p.Data) > off+n || bo+len(p.Data) > len(buf) {
			return got, fmt.Errorf("%w: Data-Out at offset %d+%d outside the sequence [%d,%d)", errProtocol, bo, len(p.Data), off, off+n)
		}
		copy(buf[bo:], p.Data)
		got += len(p.Data)
		if p.Final() {
			if got != n {
				return got, fmt.Errorf("%w: sequence of %d bytes ended after %d", errProtocol, n, got)
			}
			return got, nil
		}
	}
}

// SCSI command flags (byte 1).
const (
	cmdRead  = 0x40
	cmdWrite = 0x20
)

func (c *conn) runTask(tk *task, req *pdu.PDU) {
	flags := req.Flags()
	edtl := int(req.U32(pdu.OffTTT))
	cdb := req.Header[32:48]
	lun := req.U64(pdu.OffLUN)
	var data []byte
	if flags&cmdWrite != 0 && edtl > 0 {
		if edtl > maxTransfer {
			// Larger than the block limits page allows: refused without
			// soliciting data (unsolicited Data-Out is dropped as strays).
			c.respond(tk, req, scsi.Response{Status: scsi.StatusCheckCondition, Sense: scsi.SenseInvalidFieldInCDB.Bytes()}, 0)
			return
		}
		var err error
		if data, err = c.collect(tk, req, edtl); err != nil {
			if errors.Is(err, context.Canceled) {
				return // aborted: no response
			}
			if errors.Is(err, errDataSN) {
				c.log.Warn("iscsi: command failed", "err", err)
				sense := scsi.Sense{Key: scsi.KeyAbortedCommand, ASC: 0x4b} // DATA PHASE ERROR
				c.respond(tk, req, scsi.Response{Status: scsi.StatusCheckCondition, Sense: sense.Bytes()}, 0)
				return
			}
			c.log.Warn("iscsi: dropping connection", "err", err)
			c.nc.Close()
			return
		}
	} else if flags&cmdWrite == 0 && len(req.Data) > 0 {
		c.log.Warn("iscsi: immediate data on a command without W bit")
		c.nc.Close()
		return
	}
	if flags&cmdWrite == 0 && flags&cmdRead == 0 && edtl != 0 {
		// No direction but a length: treat as no transfer.
		edtl = 0
	}
	var resp scsi.Response
	switch {
	case len(req.AHS) > 0:
		resp = scsi.Response{Status: scsi.StatusCheckCondition, Sense: scsi.SenseInvalidOpcode.Bytes()}
	case lun>>48 != 0:
		resp = c.otherLUN(cdb)
	default:
		resp = c.t.cfg.LU.Execute(tk.ctx, scsi.Command{CDB: cdb, Data: data, Nexus: c.nexus})
	}
	scsi.Recycle(data) // the backend has copied it
	inLen := 0
	if flags&cmdRead != 0 {
		inLen = edtl
	}
	c.respond(tk, req, resp, inLen)
	if resp.Pooled {
		scsi.Recycle(resp.Data) // every Data-In PDU has been written
	}
}

// otherLUN answers commands addressed to a LUN that does not exist.
func (c *conn) otherLUN(cdb []byte) scsi.Response {
	switch cdb[0] {
	case 0x12: // INQUIRY: peripheral qualifier 3, no device
		b := make([]byte, 36)
		b[0] = 0x7f
		b[2], b[3], b[4] = 0x06, 0x02, 31
		return scsi.Response{Data: b}
	case 0xa0, 0x03:
		return c.t.cfg.LU.Execute(context.Background(), scsi.Command{CDB: cdb})
	}
	return scsi.Response{Status: scsi.StatusCheckCondition, Sense: scsi.SenseLUNotSupported.Bytes()}
}

// respond sends the Data-In PDUs and the status of a command, with
// residuals computed against the expected data transfer length.
func (c *conn) respond(tk *task, req *pdu.PDU, r scsi.Response, inLen int) {
	if !tk.claim() {
		return // aborted by task management: no response
	}
	edtl := int(req.U32(pdu.OffTTT))
	var residual int // >0 underflow, <0 overflow
	data := r.Data
	if req.Flags()&cmdWrite != 0 || r.Want > 0 {
		if req.Flags()&cmdWrite == 0 {
			edtl = 0
		}
		if r.Want > 0 || edtl > 0 {
			residual = edtl - r.Want
		}
		data = nil
	} else {
		if req.Flags()&cmdRead == 0 {
			edtl = 0
		}
		if len(data) > inLen {
			residual = inLen - len(data)
			data = data[:inLen]
		} else {
			residual = edtl - len(data)
		}
	}
	seg := c.p.SendSegment
	var dataSN uint32
	inStatus := r.Status == scsi.StatusGood && len(data) > 0
	for off := 0; off < len(data); {
		n := min(seg, len(data)-off)
		p := pdu.New(pdu.OpDataIn)
		p.Header[1] = 0
		last := off+n == len(data)
		if last || (off+n)%c.p.MaxBurst == 0 {
			p.Header[1] |= pdu.FlagFinal
		}
		copy(p.Header[8:16], req.Header[8:16])
		p.SetU32(pdu.OffITT, tk.itt)
		p.SetU32(pdu.OffTTT, pdu.Reserved)
		p.SetU32(pdu.OffDataSN, dataSN)
		p.SetU32(pdu.OffBufOff, uint32(off))
		p.Data = data[off : off+n]
		dataSN++
		status := false
		if last && inStatus {
			c.finish(tk)
			p.Header[1] |= 0x01 | residualFlags(residual)
			p.Header[3] = r.Status
			p.SetU32(pdu.OffResidual, uint32(abs(residual)))
			status = true
		}
		if err := c.send(p, status); err != nil {
			return
		}
		off += n
	}
	if inStatus {
		return
	}
	p := pdu.New(pdu.OpSCSIResp)
	p.Header[1] = pdu.FlagFinal | residualFlags(residual)
	p.Header[2] = 0 // command completed at target
	p.Header[3] = r.Status
	p.SetU32(pdu.OffITT, tk.itt)
	p.SetU32(pdu.OffTTT, 0) // SNACK tag
	p.SetU32(pdu.OffDataSN, dataSN)
	p.SetU32(pdu.OffResidual, uint32(abs(residual)))
	if len(r.Sense) > 0 {
		p.Data = binary.BigEndian.AppendUint16(nil, uint16(len(r.Sense)))
		p.Data = append(p.Data, r.Sense...)
	}
	c.finish(tk)
	c.send(p, true)
}

func residualFlags(r int) byte {
	switch {
	case r > 0:
		return 0x02 // U
	case r < 0:
		return 0x04 // O
	}
	return 0
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}
