package iscsi

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/nasemu/nasemu/iscsi/pdu"
	"github.com/nasemu/nasemu/iscsi/scsi"
)

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
