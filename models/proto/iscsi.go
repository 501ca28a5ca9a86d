package proto

import (
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/link"
)

// iSCSI PDU sizes in bytes (RFC 7143 section 11).
const (
	iscsiBHS    = 48 // basic header segment of every PDU
	iscsiDigest = 4  // CRC32C header or data digest
	unmapParams = 24 // UNMAP parameter list with one block descriptor
)

// bhs returns the header bytes of one PDU.
func (d *Device) bhs() int64 {
	if d.cfg.HeaderDigest {
		return iscsiBHS + iscsiDigest
	}
	return iscsiBHS
}

// dataPDUs returns the bytes of n data bytes sent as Data-In or Data-Out
// PDUs of at most MaxRecvDataSegment each.
func (d *Device) dataPDUs(n int64) int64 {
	if n <= 0 {
		return 0
	}
	seg := int64(d.cfg.MaxRecvDataSegment)
	pdus := (n + seg - 1) / seg
	per := d.bhs()
	if d.cfg.DataDigest {
		per += iscsiDigest
	}
	return n + pdus*per
}

// iscsiCommand is one SCSI command: the command PDU (with immediate and
// unsolicited data of a write), one R2T round trip per burst of solicited
// data, the NAS's service of nasReq, and the Data-In PDUs and SCSI Response
// back. dataOut and dataIn are the bytes moved to and from the target.
//
// The target's work runs on the connection's core (session.conn), split
// as LIO splits it between the connection's threads: the receive thread
// parses the command PDU and sets the command up, receives each Data-Out
// PDU and runs a file-backed LUN's read or write (ServerWrite, ServerMiss);
// the transmit thread sends each R2T and, once the backend completes, the
// Data-In PDUs with the status (or the SCSI Response) and frees the
// command. So a write of more than FirstBurst pays an R2T and a Data-Out
// PDU per burst beyond what a read of the same size costs.
func (d *Device) iscsiCommand(t time.Duration, s *session, flow int, nasReq models.Request, dataOut, dataIn int64) (time.Duration, error) {
	start := s.slots.take(t, 1)
	dir := link.ToNAS
	if dataIn > 0 {
		dir = link.ToClient
	}
	lane := d.link.Lane(flow, dir, start)

	// Unsolicited data: immediate data in the command PDU (up to
	// FirstBurst and one data segment), and with InitialR2T=No further
	// Data-Out PDUs up to FirstBurst.
	var imm, unsolicited int64
	if *d.cfg.ImmediateData {
		imm = min(dataOut, int64(d.cfg.FirstBurst), int64(d.cfg.MaxRecvDataSegment))
	}
	unsolicited = imm
	if !*d.cfg.InitialR2T {
		unsolicited = min(dataOut, int64(d.cfg.FirstBurst))
	}
	cmd := d.bhs() + imm
	if imm > 0 && d.cfg.DataDigest {
		cmd += iscsiDigest
	}
	cmd += d.dataPDUs(unsolicited - imm)
	arrive := d.link.Send(start, lane, link.ToNAS, cmd)
	// Solicited data: the target asks for each burst with an R2T once the
	// previous data is in (MaxOutstandingR2T=1, the RFC default).
	var r2ts, pdus int64
	pdus = d.pdus(unsolicited - imm)
	for left := dataOut - unsolicited; left > 0; {
		burst := min(left, int64(d.cfg.MaxBurst))
		r2t := d.link.Send(arrive, lane, link.ToClient, d.bhs())
		arrive = d.link.Send(r2t, lane, link.ToNAS, d.dataPDUs(burst))
		left -= burst
		pdus += d.pdus(burst)
		r2ts++
		d.iscsiR2Ts++
		d.roundTrips++
	}

	if d.cpu != nil {
		// Both threads' work on the command, booked on the connection's
		// core when its data is in: the receive thread's (the command
		// PDU, each Data-Out PDU after it, and a file-backed LUN's write
		// or its buffered read's filling of missing pages) and the
		// transmit thread's (each R2T, the Data-In or Response PDU). On
		// the one core the two threads share, they add up per command
		// wherever they are booked, so they are booked together. (Booked
		// at the times they run, an R2T before its data and the response
		// after the backend, they once fragmented the calendars and idled
		// a one-core NAS ~10 % of the time; that was the cores booking
		// each piece of work whole, which they no longer do: nas.cpu.run.)
		cost := 2*d.iscsiSide() + time.Duration(r2ts+pdus)*d.iscsiPDU()
		if nasReq.Op == models.Write {
			cost += max(d.cfg.ServerWrite, 0)
		}
		if nasReq.Op == models.Read && d.probe != nil && d.cfg.ServerMiss > 0 {
			cost += time.Duration(d.probe.Uncached(nasReq)) * d.cfg.ServerMiss
		}
		arrive = d.onConn(s, arrive, cost)
	}
	done, err := d.nas.Submit(arrive, nasReq)
	if err != nil {
		s.slots.give(done, 1)
		return done, err
	}
	back := d.link.Send(done, lane, link.ToClient, d.dataPDUs(dataIn)+d.bhs())
	s.slots.give(back, 1)
	d.iscsiCommands++
	d.roundTrips++
	return back, nil
}

// iscsiSide is the per-command work of each of a connection's two threads
// on the NAS's cores: ServerRequest, the class calibration of a command's
// target work (DefaultISCSIServerRequest), split in equal halves. Each
// thread makes one socket call for the command (the receive thread reads
// its command PDU, the transmit thread writes its Data-In or Response
// PDU) and does half of its bookkeeping (the receive thread allocates,
// parses and submits it, the transmit thread completes and frees it).
func (d *Device) iscsiSide() time.Duration { return max(d.cfg.ServerRequest, 0) / 2 }

// iscsiPDU is the work of one further PDU a command's data needs on
// either thread (an R2T sent, a Data-Out PDU received): the socket call
// and header handling without the command's bookkeeping, half of a
// side's share.
func (d *Device) iscsiPDU() time.Duration { return max(d.cfg.ServerRequest, 0) / 4 }

// pdus returns the Data-Out or Data-In PDUs that carry n bytes.
func (d *Device) pdus(n int64) int64 {
	if n <= 0 {
		return 0
	}
	seg := int64(d.cfg.MaxRecvDataSegment)
	return (n + seg - 1) / seg
}

// onConn runs cost of a connection's target threads on its core, no
// earlier than at, in the first gap of the connection's calendar long
// enough, and on one of the NAS's cores; it returns when the work is done.
func (d *Device) onConn(s *session, at, cost time.Duration) time.Duration {
	if cost <= 0 {
		return at
	}
	d.threadBusy += cost
	begin, end := s.conn.Reserve(at, cost)
	end = max(end, d.cpu.Compute(begin, cost, 0, 0))
	s.serverBusy = max(s.serverBusy, end)
	return end
}

// iscsiIO moves a block read or write, split into commands of at most
// MaxIO, all queued at t as far as the queue depth allows.
func (d *Device) iscsiIO(t time.Duration, s *session, r models.Request) (time.Duration, error) {
	done := t
	off := r.Offset
	for {
		n := min(d.maxIO, r.End()-off)
		sub := atServer(models.Request{Op: r.Op, Offset: off, Length: n, Flow: r.Flow, Direct: r.Direct, WriteThrough: r.WriteThrough})
		var end time.Duration
		var err error
		if r.Op == models.Read {
			end, err = d.iscsiCommand(t, s, r.Flow, sub, 0, n)
		} else {
			end, err = d.iscsiCommand(t, s, r.Flow, sub, n, 0)
		}
		if err != nil {
			return end, err
		}
		done = max(done, end)
		off += n
		if off >= r.End() {
			return done, nil
		}
	}
}

// iscsi serves one request: block requests become SCSI commands; file
// operations run in the client's own filesystem on the LUN (clientfs.go),
// or, for a job on the raw block device (client block), in none.
func (d *Device) iscsi(at time.Duration, r models.Request) (time.Duration, error) {
	s := d.session(r.Flow)
	if d.block {
		return d.iscsiBlock(at, s, r)
	}
	switch r.Op {
	case models.Read:
		if s.inFile {
			r = d.fs.clusters(r, d.nas.Capacity())
		}
		return d.iscsiIO(at, s, r)
	case models.Write:
		if s.inFile {
			return d.writeBehind(at, s, r)
		}
		return d.iscsiIO(at, s, r)
	case models.Flush:
		// Dirty file data and metadata go out first, then SYNCHRONIZE
		// CACHE makes the target's write cache durable.
		t := d.fs.writeback(d, at, s, r.Flow)
		t = max(t, s.lazyDone)
		return d.iscsiCommand(t, s, r.Flow, models.Request{Op: models.Flush, Flow: r.Flow}, 0, 0)
	case models.Trim:
		return d.iscsiCommand(at, s, r.Flow, r, unmapParams, 0)
	}
	return d.fs.fileOp(d, at, s, r)
}

// iscsiBlock serves one request of a job on the LUN's raw block device
// (Config.Client block; fio on a Linux initiator's /dev/sdX): there is no
// client filesystem, so a read or write goes to the target as SCSI
// commands when it is issued, and completes when they do, whatever the
// file it is said to be in; Flush is SYNCHRONIZE CACHE alone; and a file
// operation is a block device's open or close, which costs the client
// ClientOp (none by default) and the wire nothing. A buffered request is
// served as a direct one: the initiator's page cache is not modelled.
func (d *Device) iscsiBlock(at time.Duration, s *session, r models.Request) (time.Duration, error) {
	switch r.Op {
	case models.Read, models.Write:
		return d.iscsiIO(at, s, r)
	case models.Flush:
		return d.iscsiCommand(at, s, r.Flow, models.Request{Op: models.Flush, Flow: r.Flow}, 0, 0)
	case models.Trim:
		return d.iscsiCommand(at, s, r.Flow, r, unmapParams, 0)
	}
	return at + max(d.cfg.ClientOp, 0), nil
}
