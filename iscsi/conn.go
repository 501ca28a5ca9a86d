package iscsi

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nasemu/nasemu/iscsi/pdu"
)

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
