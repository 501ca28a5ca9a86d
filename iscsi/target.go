package iscsi

import (
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

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
