package proto

import (
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/link"
)

// SMB message sizes in bytes (MS-SMB2 section 2.2). Every message is a
// NetBIOS session header (4) and an SMB2 header (64) followed by the
// command's body; an encrypted message adds a transform header (52).
const (
	smbNetBIOS   = 4
	smbHeader    = 64
	smbTransform = 52
	smbMsg       = smbNetBIOS + smbHeader

	smbReadReq   = 49 // READ request body (StructureSize 49)
	smbReadResp  = 16 // READ response body before the data
	smbWriteReq  = 48 // WRITE request body before the data
	smbWriteResp = 16

	// CREATE: 56-byte body, a UTF-16 path of about 30 characters, and the
	// create contexts Windows sends (lease V2, maximal access, query on-disk
	// ID); the response: 88-byte body and the contexts' answers.
	smbCreateReq  = 56 + 64 + 104
	smbCreateResp = 88 + 96
	smbCloseReq   = 24
	smbCloseResp  = 60
	// QUERY_INFO for FileNetworkOpenInformation (56 bytes of answer).
	smbQueryReq  = 40
	smbQueryResp = 8 + 56
	// SET_INFO of FileEndOfFileInformation or FileBasicInformation (40).
	smbSetReq   = 32 + 40
	smbSetResp  = 2
	smbFlushReq = 24
	smbFlushRsp = 4
	// IOCTL FSCTL_FILE_LEVEL_TRIM with one range.
	smbIoctlReq  = 56 + 32
	smbIoctlResp = 48
)

// creditUnit is the data one SMB 2.1+ credit covers (MS-SMB2 3.1.5.2).
const creditUnit = 64 << 10

// creditCharge returns the credits a request moving n bytes costs.
func creditCharge(protocol string, n int64) int {
	if protocol == SMB2 || n <= creditUnit {
		return 1
	}
	return int((n + creditUnit - 1) / creditUnit)
}

// smbExchange is one SMB request and its response: the request (reqBody
// bytes after the header, written data included) crosses the link, smbd
// spends its ServerRequest (and ServerFileOp) on a NAS core, the NAS serves
// nasReq (signing or encryption charged on the session's server core), and
// the response (respBody bytes, read data included) crosses
// back on the same connection. It returns when the response has reached
// the client.
func (d *Device) smbExchange(t time.Duration, s *session, flow int, reqBody, respBody int64, data link.Dir, nasReq models.Request) (time.Duration, error) {
	charge := 1
	if nasReq.Op == models.Read || nasReq.Op == models.Write {
		charge = creditCharge(d.cfg.Protocol, nasReq.Length)
	}
	start := s.slots.take(t, charge)
	req, resp := smbMsg+reqBody, smbMsg+respBody
	if d.encrypted {
		req += smbTransform
		resp += smbTransform
	}
	lane := d.link.Lane(flow, data, start)
	arrive := d.link.Send(start, lane, link.ToNAS, req)
	arrive = d.crypto(arrive, s, req)
	if d.cpu != nil {
		cost := max(d.cfg.ServerRequest, 0)
		if nasReq.Op.IsFileOp() {
			cost += max(d.cfg.ServerFileOp, 0)
		}
		if cost > 0 {
			arrive = d.cpu.Compute(arrive, cost, 0, 0)
		}
	}
	done, err := d.nas.Submit(arrive, nasReq)
	if err != nil {
		s.slots.give(done, charge)
		return done, err
	}
	done = d.crypto(done, s, resp)
	back := d.link.Send(done, lane, link.ToClient, resp)
	s.slots.give(back, charge)
	d.smbRequests++
	d.roundTrips++
	return back, nil
}

// smb serves one request the way the Windows SMB client and Explorer's copy
// engine do.
func (d *Device) smb(at time.Duration, r models.Request) (time.Duration, error) {
	s := d.session(r.Flow)
	meta := func(t time.Duration, op models.Op, reqBody, respBody int64) (time.Duration, error) {
		return d.smbExchange(t, s, r.Flow, reqBody, respBody, link.ToClient, models.Request{Op: op, Offset: r.Offset, Length: r.Length, Flow: r.Flow})
	}
	switch r.Op {
	case models.Read, models.Write:
		// Large I/O is split into MaxIO requests, all sent at once as far
		// as the credit window allows.
		done, off := at, r.Offset
		for {
			n := min(d.maxIO, r.End()-off)
			sub := models.Request{Op: r.Op, Offset: off, Length: n, Flow: r.Flow}
			var t time.Duration
			var err error
			if r.Op == models.Read {
				t, err = d.smbExchange(at, s, r.Flow, smbReadReq, smbReadResp+n, link.ToClient, sub)
			} else {
				t, err = d.smbExchange(at, s, r.Flow, smbWriteReq+n, smbWriteResp, link.ToNAS, sub)
				s.written = true
			}
			if err != nil {
				return t, err
			}
			done = max(done, t)
			if off += n; off >= r.End() {
				return done, nil
			}
		}
	case models.Flush:
		return meta(at, models.Flush, smbFlushReq, smbFlushRsp)
	case models.Trim:
		return d.smbExchange(at, s, r.Flow, smbIoctlReq, smbIoctlResp, link.ToNAS, r)
	}

	// File operations: the client's own work, then the requests Windows
	// sends, one after the other.
	t := at + max(d.cfg.ClientOp, 0)
	var err error
	switch r.Op {
	case models.Create:
		// Explorer's copy engine: CREATE to see whether the target exists
		// (it does not), CREATE that makes it, QUERY_INFO of the new
		// handle, SET_INFO of the end of file to the source's size.
		// The NAS has no "set info" op: it is charged as a metadata
		// lookup (Stat) on the file.
		s.inFile, s.written = true, false
		if t, err = meta(t, models.Stat, smbCreateReq, smbCreateResp); err != nil {
			return t, err
		}
		if t, err = meta(t, models.Create, smbCreateReq, smbCreateResp); err != nil {
			return t, err
		}
		if t, err = meta(t, models.Stat, smbQueryReq, smbQueryResp); err != nil {
			return t, err
		}
		return meta(t, models.Stat, smbSetReq, smbSetResp)
	case models.Open:
		// CREATE of the existing file, QUERY_INFO of its size and times.
		s.inFile, s.written = true, false
		if t, err = meta(t, models.Open, smbCreateReq, smbCreateResp); err != nil {
			return t, err
		}
		return meta(t, models.Stat, smbQueryReq, smbQueryResp)
	case models.Close:
		// A copy's target gets the source's times and attributes
		// (SET_INFO FileBasicInformation) before CLOSE.
		written := s.written
		s.inFile, s.written = false, false
		if written {
			if t, err = meta(t, models.Stat, smbSetReq, smbSetResp); err != nil {
				return t, err
			}
		}
		return meta(t, models.Close, smbCloseReq, smbCloseResp)
	case models.Stat:
		// CREATE + QUERY_INFO + CLOSE compounded into one round trip.
		return meta(t, models.Stat, smbCreateReq+smbQueryReq+smbCloseReq, smbCreateResp+smbQueryResp+smbCloseResp)
	case models.Remove:
		// CREATE with delete-on-close + CLOSE, compounded.
		return meta(t, models.Remove, smbCreateReq+smbCloseReq, smbCreateResp+smbCloseResp)
	}
	return d.nas.Submit(at, r)
}
