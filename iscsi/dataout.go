package iscsi

import (
	"errors"
	"fmt"
	"time"

	"github.com/nasemu/nasemu/iscsi/pdu"
	"github.com/nasemu/nasemu/iscsi/scsi"
)

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
