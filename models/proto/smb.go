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
		} else if nasReq.Op == models.Write {
			cost += max(d.cfg.ServerWrite, 0)
		}
		if cost > 0 {
			// On the session's smbd thread, after its earlier work.
			arrive = d.serve(s, arrive, cost, 0, 0)
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
		if !s.inFile || r.End() > s.file.End() || r.Direct || !*d.cfg.ClientCache {
			return d.smbData(at, s, r)
		}
		if i := s.aheadIndex(r); i >= 0 || r.Offset == s.seqEnd || s.seqEnd < 0 {
			return d.smbStream(at, s, r, i)
		}
		return d.smbData(at, s, r)
	case models.Flush:
		return meta(max(at, s.pendingWrite), models.Flush, smbFlushReq, smbFlushRsp)
	case models.Trim:
		return d.smbExchange(at, s, r.Flow, smbIoctlReq, smbIoctlResp, link.ToNAS, r)
	}
	return d.smbFileOp(at, s, r, meta)
}

// The Windows client caches a file opened buffered (Explorer's copy
// engine opens its files so): the cache manager reads ahead of a
// sequential reader and its lazy writer writes behind a sequential writer,
// so one stream keeps several requests on the wire while the application
// waits for one at a time. Since SMB 2.1 the server grants credits enough
// for that, and "a typical Windows to Windows flow will show 10 1MB I/Os on
// the wire at the same time" (winntfs.com, "Backup performance and SMB 3
// Multi Channel"); SMB 3 Multichannel spreads them over its channels,
// which a single large copy fills only with about as many requests in
// flight as it has links (four 1GbE links carried one Explorer copy at
// 465-471 MB/s both ways in docs/outside-checks.md's rows 14 and 15).
// A file opened unbuffered (FILE_FLAG_NO_BUFFERING: CrystalDiskMark,
// DiskSpd, fio's direct=1; Request.Direct) bypasses the cache: each of
// its requests goes to the wire when the application issues it.
const (
	// SMBReadAhead is how many requests of the reader's size the client
	// reads ahead of a sequential reader.
	SMBReadAhead = 10
	// SMBWriteBehind is how many writes of a sequential writer the client
	// has in flight before the writer waits.
	SMBWriteBehind = 10
)

// smbStream serves the next request of a sequential stream in an open
// file: a read is answered by the read-ahead when it covers it (s.ahead[i];
// i is -1 when none does), and the client keeps SMBReadAhead reads ahead
// of it; a write is issued at once and the writer goes on, unless
// SMBWriteBehind writes are already in flight.
func (d *Device) smbStream(at time.Duration, s *session, r models.Request, i int) (time.Duration, error) {
	s.seqEnd = r.End()
	if r.Op == models.Write {
		s.written = true
		k := s.pipeNext % SMBWriteBehind
		t := max(at, s.pipe[k])
		done, err := d.smbData(t, s, r)
		if err != nil {
			return done, err
		}
		s.pipe[k] = done
		s.pipeNext++
		s.pendingWrite = max(s.pendingWrite, done)
		return t, nil
	}
	var done time.Duration
	var err error
	if i >= 0 {
		// Read ahead already. A reader with several reads in flight (an
		// emulator's real client) may ask for them out of order.
		done = max(at, s.ahead[i].done)
		copy(s.ahead[i:s.aheadN], s.ahead[i+1:s.aheadN])
		s.aheadN--
	} else {
		s.aheadN = 0
		if done, err = d.smbData(at, s, r); err != nil {
			return done, err
		}
	}
	next := r.End()
	if s.aheadN > 0 {
		last := &s.ahead[s.aheadN-1]
		next = max(next, last.off+last.n)
	}
	for s.aheadN < SMBReadAhead && next+r.Length <= s.file.End() {
		t, err := d.smbData(at, s, models.Request{Op: models.Read, Offset: next, Length: r.Length, Flow: r.Flow})
		if err != nil {
			break
		}
		s.ahead[s.aheadN] = aheadRead{off: next, n: r.Length, done: t}
		s.aheadN++
		next += r.Length
	}
	return done, nil
}

// aheadIndex returns the index in s.ahead of the read r, or -1.
func (s *session) aheadIndex(r models.Request) int {
	if r.Op != models.Read {
		return -1
	}
	for i := range s.aheadN {
		if a := &s.ahead[i]; a.off == r.Offset && a.n == r.Length {
			return i
		}
	}
	return -1
}

// aheadRead is a read the client issued ahead of a sequential reader.
type aheadRead struct {
	off, n int64
	done   time.Duration
}

// openFile starts the client's cache state of a file.
func (s *session) openFile(r models.Request) {
	s.inFile, s.written = true, false
	s.file = r
	s.seqEnd, s.aheadN = -1, 0
}

// smbData moves a read or write as SMB READ or WRITE requests.
func (d *Device) smbData(at time.Duration, s *session, r models.Request) (time.Duration, error) {
	{
		// Large I/O is split into MaxIO requests, all sent at once as far
		// as the credit window allows.
		done, off := at, r.Offset
		for {
			n := min(d.maxIO, r.End()-off)
			sub := atServer(models.Request{Op: r.Op, Offset: off, Length: n, Flow: r.Flow, Direct: r.Direct, WriteThrough: r.WriteThrough})
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
	}
}

// smbFileOp serves a file operation the way Explorer's copy engine and
// the Windows SMB client do.
func (d *Device) smbFileOp(at time.Duration, s *session, r models.Request, meta func(time.Duration, models.Op, int64, int64) (time.Duration, error)) (time.Duration, error) {
	// File operations: the client's own work, then the requests Windows
	// sends, one after the other. Closing a file first flushes the
	// writes behind (the redirector flushes dirty data on cleanup).
	if r.Op == models.Close {
		at = max(at, s.pendingWrite)
	}
	t := at + max(d.cfg.ClientOp, 0)
	var err error
	switch r.Op {
	case models.Create:
		// Explorer's copy engine: CREATE to see whether the target exists
		// (it does not), CREATE that makes it, QUERY_INFO of the new
		// handle, SET_INFO of the end of file to the source's size.
		// The NAS has no "set info" op: it is charged as a metadata
		// lookup (Stat) on the file.
		s.openFile(r)
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
		// The copy engine reads the source's attributes (a compounded
		// CREATE+QUERY_INFO+CLOSE), then CopyFileEx opens it (CREATE),
		// queries its size and times (QUERY_INFO basic and standard
		// information) and its streams (QUERY_INFO stream information:
		// alternate data streams are copied too).
		s.openFile(r)
		if t, err = meta(t, models.Stat, smbCreateReq+smbQueryReq+smbCloseReq, smbCreateResp+smbQueryResp+smbCloseResp); err != nil {
			return t, err
		}
		if t, err = meta(t, models.Open, smbCreateReq, smbCreateResp); err != nil {
			return t, err
		}
		if t, err = meta(t, models.Stat, smbQueryReq, smbQueryResp); err != nil {
			return t, err
		}
		return meta(t, models.Stat, smbQueryReq, smbQueryResp)
	case models.Close:
		// A copy's target gets the source's times and attributes
		// (SET_INFO FileBasicInformation) before CLOSE.
		written := s.written
		s.inFile, s.written = false, false
		s.aheadN = 0
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
