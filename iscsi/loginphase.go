package iscsi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/nasemu/nasemu/iscsi/pdu"
)

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
