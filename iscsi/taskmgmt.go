package iscsi

import (
	"errors"

	"github.com/nasemu/nasemu/iscsi/pdu"
)

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
