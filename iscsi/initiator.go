package iscsi

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/nasemu/nasemu/iscsi/pdu"
	"github.com/nasemu/nasemu/iscsi/scsi"
	"github.com/nasemu/nasemu/models"
)

// DefaultInitiatorIQN is the initiator name when none is configured.
const DefaultInitiatorIQN = "iqn.2026-01.org.nasemu:initiator"

// SessionConfig describes an initiator session. The zero value of each
// field but Addr and Target means its default.
type SessionConfig struct {
	Addr      string // host:port of the portal
	Target    string // target IQN; empty for a discovery session
	Initiator string // initiator IQN; "" means DefaultInitiatorIQN
	CHAP      *CHAP  // credentials, when the target asks for CHAP
	// HeaderDigest and DataDigest offer CRC32C digests.
	HeaderDigest, DataDigest bool
	// MaxRecvDataSegment is the initiator's MaxRecvDataSegmentLength; 0
	// means 256 KiB.
	MaxRecvDataSegment int
	// DialTimeout bounds connecting and logging in; 0 means 10 s.
	DialTimeout time.Duration
	// ISID's low bytes distinguish sessions of one initiator; Dial picks
	// a random one when zero.
	ISID uint32
	// Logger receives protocol warnings; nil is quiet.
	Logger *slog.Logger
}

// Errors of the initiator.
var (
	// ErrLogin: the target refused the login for a reason of the
	// initiator's (status class 2: authentication failed, target not
	// found, ...); the message has the status. Bad input, as far as the
	// user is concerned.
	ErrLogin = errors.New("iscsi: login refused")
	// ErrSession: the session could not be set up or failed — the portal
	// cannot be reached, the connection was lost, a protocol error, a
	// login refused for a reason of the target's (status class 3: out of
	// resources, service unavailable). The network error, when there is
	// one, is wrapped too.
	ErrSession = errors.New("iscsi: session failed")
)

// Result is a SCSI command's outcome.
type Result struct {
	Status   byte
	Sense    []byte // fixed or descriptor format sense data
	Residual int    // >0 underflow, <0 overflow
	Rejected bool   // the target rejected the command PDU
}

// SenseKey returns the sense key, ASC and ASCQ of the result's sense.
func (r Result) SenseKey() (key, asc, ascq byte) {
	s := r.Sense
	if len(s) < 1 {
		return 0, 0, 0
	}
	if s[0]&0x7f >= 0x72 && len(s) >= 4 { // descriptor format
		return s[1] & 0x0f, s[2], s[3]
	}
	if len(s) >= 14 {
		return s[2] & 0x0f, s[12], s[13]
	}
	return 0, 0, 0
}

// StatusError is a command that ended with a status other than GOOD.
type StatusError struct {
	Op     string
	Result Result
}

func (e *StatusError) Error() string {
	if e.Result.Status == scsi.StatusCheckCondition && len(e.Result.Sense) > 0 {
		k, asc, ascq := e.Result.SenseKey()
		return fmt.Sprintf("%s: CHECK CONDITION: %s", e.Op, scsi.SenseText(k, asc, ascq))
	}
	return fmt.Sprintf("%s: %s (SCSI status 0x%02x)", e.Op, scsi.StatusName(e.Result.Status), e.Result.Status)
}

// Is makes a StatusError match ErrLUNotSupported when its sense says
// LOGICAL UNIT NOT SUPPORTED, and models.ErrOutOfRange when it says
// LOGICAL BLOCK ADDRESS OUT OF RANGE (a command past the LUN's end).
func (e *StatusError) Is(target error) bool {
	k, asc, ascq := e.Result.SenseKey()
	if e.Result.Status != scsi.StatusCheckCondition || k != scsi.KeyIllegalRequest || ascq != 0 {
		return false
	}
	switch target {
	case ErrLUNotSupported:
		return asc == 0x25
	case models.ErrOutOfRange:
		return asc == 0x21
	}
	return false
}

// ErrLUNotSupported matches a command refused because its LUN does not
// exist (errors.Is on a *StatusError).
var ErrLUNotSupported = errors.New("iscsi: logical unit not supported")

// Session is an initiator's iSCSI session on one connection. Its methods
// are safe for concurrent use: many commands may be outstanding, up to the
// target's CmdSN window.
type Session struct {
	cfg SessionConfig
	nc  net.Conn
	log *slog.Logger
	p   params
	lim pdu.Limits

	wmu sync.Mutex // one PDU at a time on the wire

	mu        sync.Mutex
	window    *sync.Cond
	cmdSN     uint32 // next CmdSN to hand out
	sentSN    uint32 // next CmdSN to put on the wire
	expStatSN uint32
	maxCmdSN  uint32
	nextITT   uint32
	calls     map[uint32]*call
	err       error // set when the session has failed
	closed    chan struct{}
}

type call struct {
	dataIn  []byte
	dataOut []byte
	lun     [8]byte
	res     Result
	got     int // data-in bytes received
	done    chan struct{}
	text    []byte // text/NOP responses
	err     error
}

// Dial connects to a portal and logs in.
func Dial(ctx context.Context, cfg SessionConfig) (*Session, error) {
	if cfg.Initiator == "" {
		cfg.Initiator = DefaultInitiatorIQN
	}
	if cfg.MaxRecvDataSegment == 0 {
		cfg.MaxRecvDataSegment = 256 << 10
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = 10 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.ISID == 0 {
		var b [4]byte
		randRead(b[:])
		cfg.ISID = binary.BigEndian.Uint32(b[:]) | 1
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("%w: dial %s: %w", ErrSession, cfg.Addr, err)
	}
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
	}
	s := &Session{cfg: cfg, nc: nc, log: cfg.Logger, calls: map[uint32]*call{}, closed: make(chan struct{}), nextITT: 1}
	s.window = sync.NewCond(&s.mu)
	if err := s.login(); err != nil {
		nc.Close()
		return nil, fmt.Errorf("%s at %s: %w", cfg.Target, cfg.Addr, err)
	}
	nc.SetDeadline(time.Time{})
	s.lim = pdu.Limits{HeaderDigest: s.p.HeaderDigest, DataDigest: s.p.DataDigest, MaxData: cfg.MaxRecvDataSegment}
	go s.reader()
	return s, nil
}

func (s *Session) isid() [6]byte {
	var b [6]byte
	b[0] = 0x80 // random ISID format
	binary.BigEndian.PutUint32(b[2:], s.cfg.ISID)
	return b
}

// login runs the login phase.
func (s *Session) login() error {
	stage := stageSecurity
	auth := "None"
	if s.cfg.CHAP != nil {
		auth = "CHAP,None"
	}
	var keys pdu.Text
	keys.Add("InitiatorName", s.cfg.Initiator)
	if s.cfg.Target != "" {
		keys.Add("TargetName", s.cfg.Target)
		keys.Add("SessionType", sessionNormal)
	} else {
		keys.Add("SessionType", sessionDiscovery)
	}
	keys.Add("AuthMethod", auth)
	s.p = defaultParams(s.cfg.MaxRecvDataSegment)
	opKeys := func() pdu.Text {
		var k pdu.Text
		digest := func(on bool) string {
			if on {
				return "CRC32C,None"
			}
			return "None"
		}
		k.Add("HeaderDigest", digest(s.cfg.HeaderDigest))
		k.Add("DataDigest", digest(s.cfg.DataDigest))
		k.Add("MaxRecvDataSegmentLength", strconv.Itoa(s.cfg.MaxRecvDataSegment))
		if s.cfg.Target != "" {
			k.Add("InitialR2T", "Yes")
			k.Add("ImmediateData", "Yes")
			k.Add("MaxBurstLength", strconv.Itoa(1<<20))
			k.Add("FirstBurstLength", strconv.Itoa(256<<10))
			k.Add("MaxOutstandingR2T", "1")
			k.Add("MaxConnections", "1")
			k.Add("DataPDUInOrder", "Yes")
			k.Add("DataSequenceInOrder", "Yes")
			k.Add("DefaultTime2Wait", "0")
			k.Add("DefaultTime2Retain", "0")
		}
		k.Add("ErrorRecoveryLevel", "0")
		return k
	}
	var statSN uint32
	chapSent := false
	for round := 0; round < 16; round++ {
		nsg := stageOperational
		if stage == stageOperational {
			nsg = stageFullFeature
		}
		transit := true
		req := pdu.New(pdu.OpLoginReq)
		req.SetImmediate()
		req.Header[1] = byte(stage) << 2
		if transit {
			req.Header[1] |= 0x80 | byte(nsg)
		}
		isid := s.isid()
		copy(req.Header[8:14], isid[:])
		req.SetU32(pdu.OffITT, 0)
		req.SetU32(pdu.OffCmdSN, s.cmdSN)
		req.SetU32(pdu.OffExpStatSN, statSN)
		req.Data = keys.Encode()
		if err := pdu.Write(s.nc, req, pdu.Limits{}); err != nil {
			return err
		}
		resp, err := pdu.Read(s.nc, pdu.Limits{MaxData: 1 << 20})
		if err != nil {
			return fmt.Errorf("%w: login: %w", ErrSession, err)
		}
		if resp.Opcode() != pdu.OpLoginResp {
			return fmt.Errorf("%w: login answered with %s", ErrSession, resp.Opcode())
		}
		if st := int(resp.Header[36])<<8 | int(resp.Header[37]); st != 0 {
			sentinel := ErrLogin
			if st>>8 != 2 {
				sentinel = ErrSession // the target's trouble (class 3), or a redirection
			}
			return fmt.Errorf("%w: status 0x%04x (%s)", sentinel, st, loginStatusText(st))
		}
		statSN = resp.U32(pdu.OffCmdSN) + 1
		s.expStatSN = statSN
		s.maxCmdSN = resp.U32(pdu.OffMaxCmdSN)
		got, err := pdu.ParseText(resp.Data)
		if err != nil {
			return err
		}
		keys = nil
		for _, kv := range got {
			s.apply(kv)
		}
		if c, ok := got.Get("CHAP_C"); ok && stage == stageSecurity {
			if s.cfg.CHAP == nil {
				return fmt.Errorf("%w: the target wants CHAP and no credentials are configured", ErrLogin)
			}
			id, _ := got.Get("CHAP_I")
			idn, err := strconv.Atoi(id)
			ch, err2 := decodeBinary(c)
			if err != nil || err2 != nil || idn < 0 || idn > 255 {
				return fmt.Errorf("%w: malformed CHAP challenge", ErrSession)
			}
			r := chapResponse(byte(idn), s.cfg.CHAP.Secret, ch)
			keys.Add("CHAP_N", s.cfg.CHAP.User)
			keys.Add("CHAP_R", "0x"+hex.EncodeToString(r[:]))
			chapSent = true
			continue
		}
		if a, ok := got.Get("AuthMethod"); ok && a == "CHAP" && stage == stageSecurity && !chapSent {
			if s.cfg.CHAP == nil {
				return fmt.Errorf("%w: the target wants CHAP and no credentials are configured", ErrLogin)
			}
			keys.Add("CHAP_A", "5")
			continue
		}
		if resp.Header[1]&0x80 != 0 {
			stage = int(resp.Header[1] & 3)
			if stage == stageFullFeature {
				s.cmdSN = resp.U32(pdu.OffExpStatSN)
				s.sentSN = s.cmdSN
				return nil
			}
			if stage == stageOperational {
				keys = opKeys()
			}
		}
	}
	return fmt.Errorf("%w: login did not finish in 16 rounds", ErrSession)
}

func loginStatusText(st int) string {
	switch st {
	case loginAuthFailed:
		return "authentication failed"
	case 0x0202:
		return "authorization failure"
	case loginNotFound:
		return "target not found"
	case loginMissingParam:
		return "missing parameter"
	case loginUnsupportedVer:
		return "unsupported version"
	case loginNoSession:
		return "session does not exist"
	case loginOutOfResources:
		return "target out of resources"
	case 0x0301:
		return "service unavailable"
	}
	switch st >> 8 {
	case 1:
		return "redirection"
	case 3:
		return "target error"
	}
	return "initiator error"
}

// apply takes the target's answer to one key.
func (s *Session) apply(kv pdu.KV) {
	n, _ := pdu.ParseNumber(kv.Value)
	switch kv.Key {
	case "HeaderDigest":
		s.p.HeaderDigest = kv.Value == "CRC32C"
	case "DataDigest":
		s.p.DataDigest = kv.Value == "CRC32C"
	case "MaxRecvDataSegmentLength":
		if n >= 512 {
			s.p.SendSegment = int(min(n, maxNegotiatedSegment))
		}
	case "MaxBurstLength":
		if n >= 512 {
			s.p.MaxBurst = int(n)
		}
	case "FirstBurstLength":
		if n >= 512 {
			s.p.FirstBurst = int(n)
		}
	case "ImmediateData":
		s.p.ImmediateData = kv.Value == "Yes"
	case "InitialR2T":
		s.p.InitialR2T = kv.Value != "No"
	}
}

// fail ends the session with err and wakes every caller.
func (s *Session) fail(err error) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
		close(s.closed)
	}
	calls := s.calls
	s.calls = map[uint32]*call{}
	s.window.Broadcast()
	s.mu.Unlock()
	for _, c := range calls {
		c.err = err
		close(c.done)
	}
	s.nc.Close()
}

func (s *Session) reader() {
	for {
		p, err := pdu.Read(s.nc, s.lim)
		if err != nil {
			s.fail(fmt.Errorf("%w: %w", ErrSession, err))
			return
		}
		if err := s.handle(p); err != nil {
			s.fail(fmt.Errorf("%w: %w", ErrSession, err))
			return
		}
	}
}

func sna(a, b uint32) bool { return int32(a-b) > 0 } // a after b

func (s *Session) handle(p *pdu.PDU) error {
	s.mu.Lock()
	if exp, mx := p.U32(pdu.OffExpStatSN), p.U32(pdu.OffMaxCmdSN); !sna(exp, mx+1) && sna(mx, s.maxCmdSN) {
		// A valid window (MaxCmdSN >= ExpCmdSN-1) that opens further.
		s.maxCmdSN = mx
		s.window.Broadcast()
	}
	status := p.Opcode() == pdu.OpSCSIResp || p.Opcode() == pdu.OpNopIn && p.ITT() != pdu.Reserved ||
		p.Opcode() == pdu.OpDataIn && p.Flags()&0x01 != 0 || p.Opcode() == pdu.OpTaskResp ||
		p.Opcode() == pdu.OpTextResp || p.Opcode() == pdu.OpLogoutResp || p.Opcode() == pdu.OpReject
	if status {
		if sn := p.U32(pdu.OffCmdSN); !sna(s.expStatSN, sn+1) {
			s.expStatSN = sn + 1
		}
	}
	c := s.calls[p.ITT()]
	s.mu.Unlock()
	switch p.Opcode() {
	case pdu.OpDataIn:
		if c == nil {
			return fmt.Errorf("Data-In for unknown task 0x%x", p.ITT())
		}
		off := int(p.U32(pdu.OffBufOff))
		if off < 0 || off+len(p.Data) > len(c.dataIn) {
			return fmt.Errorf("Data-In [%d,+%d) beyond the %d-byte buffer", off, len(p.Data), len(c.dataIn))
		}
		copy(c.dataIn[off:], p.Data)
		c.got += len(p.Data)
		if p.Flags()&0x01 != 0 {
			c.res.Status = p.Header[3]
			c.res.Residual = residualOf(p)
			s.complete(p.ITT(), c)
		}
	case pdu.OpSCSIResp:
		if c == nil {
			return fmt.Errorf("SCSI Response for unknown task 0x%x", p.ITT())
		}
		c.res.Status = p.Header[3]
		c.res.Residual = residualOf(p)
		if p.Header[2] != 0 {
			return fmt.Errorf("target failure response 0x%02x", p.Header[2])
		}
		if len(p.Data) >= 2 {
			n := int(binary.BigEndian.Uint16(p.Data))
			if n <= len(p.Data)-2 {
				c.res.Sense = append([]byte(nil), p.Data[2:2+n]...)
			}
		}
		s.complete(p.ITT(), c)
	case pdu.OpR2T:
		if c == nil {
			return fmt.Errorf("R2T for unknown task 0x%x", p.ITT())
		}
		off, n := int(p.U32(pdu.OffBufOff)), int(p.U32(pdu.OffResidual))
		if off < 0 || n < 0 || off+n > len(c.dataOut) {
			return fmt.Errorf("R2T for [%d,+%d) beyond the %d bytes of data", off, n, len(c.dataOut))
		}
		go s.sendData(p.ITT(), c, p.U32(pdu.OffTTT), off, n)
	case pdu.OpNopIn:
		if p.U32(pdu.OffTTT) != pdu.Reserved { // a ping: answer it
			r := pdu.New(pdu.OpNopOut)
			r.SetImmediate()
			copy(r.Header[8:16], p.Header[8:16])
			r.SetU32(pdu.OffITT, pdu.Reserved)
			r.SetU32(pdu.OffTTT, p.U32(pdu.OffTTT))
			r.Data = p.Data
			go s.write(r, true)
			return nil
		}
		if c != nil {
			c.text = p.Data
			s.complete(p.ITT(), c)
		}
	case pdu.OpTextResp, pdu.OpLogoutResp, pdu.OpTaskResp:
		if c != nil {
			c.text = p.Data
			c.res.Status = p.Header[2]
			s.complete(p.ITT(), c)
		}
	case pdu.OpReject:
		if len(p.Data) >= pdu.HeaderLen {
			itt := binary.BigEndian.Uint32(p.Data[pdu.OffITT:])
			s.mu.Lock()
			c := s.calls[itt]
			s.mu.Unlock()
			if c != nil {
				c.res.Rejected = true
				c.err = fmt.Errorf("%w: target rejected the PDU (reason 0x%02x)", ErrSession, p.Header[2])
				s.complete(itt, c)
			}
		}
	case pdu.OpAsync:
		if p.Header[36] == 1 || p.Header[36] == 2 || p.Header[36] == 3 { // logout requested, connection or session dropped
			return fmt.Errorf("target asks to log out (async event %d)", p.Header[36])
		}
	default:
		return fmt.Errorf("unexpected %s", p.Opcode())
	}
	return nil
}

func residualOf(p *pdu.PDU) int {
	n := int(p.U32(pdu.OffResidual))
	switch {
	case p.Flags()&0x02 != 0:
		return n
	case p.Flags()&0x04 != 0:
		return -n
	}
	return 0
}

func (s *Session) complete(itt uint32, c *call) {
	s.mu.Lock()
	_, ok := s.calls[itt]
	delete(s.calls, itt)
	s.mu.Unlock()
	if ok {
		close(c.done)
	}
}

// sendData answers an R2T with Data-Out PDUs, written together.
func (s *Session) sendData(itt uint32, c *call, ttt uint32, off, n int) {
	seg := s.p.SendSegment
	ps := make([]*pdu.PDU, 0, (n+seg-1)/seg)
	var sn uint32
	for done := 0; done < n; {
		k := min(seg, n-done)
		p := pdu.New(pdu.OpDataOut)
		if done+k < n {
			p.Header[1] = 0
		}
		copy(p.Header[8:16], c.lun[:])
		p.SetU32(pdu.OffITT, itt)
		p.SetU32(pdu.OffTTT, ttt)
		p.SetU32(pdu.OffDataSN, sn)
		p.SetU32(pdu.OffBufOff, uint32(off+done))
		p.Data = c.dataOut[off+done : off+done+k]
		ps = append(ps, p)
		sn++
		done += k
	}
	s.mu.Lock()
	for _, p := range ps {
		p.SetU32(pdu.OffExpStatSN, s.expStatSN)
	}
	s.mu.Unlock()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := pdu.WriteAll(s.nc, ps, s.lim); err != nil {
		s.fail(fmt.Errorf("%w: %w", ErrSession, err))
	}
}

// write sends one PDU, filling ExpStatSN (and CmdSN of immediate requests).
func (s *Session) write(p *pdu.PDU, immediate bool) error {
	s.mu.Lock()
	p.SetU32(pdu.OffExpStatSN, s.expStatSN)
	if immediate && p.Opcode() != pdu.OpDataOut {
		p.SetU32(pdu.OffCmdSN, s.cmdSN)
	}
	s.mu.Unlock()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := pdu.Write(s.nc, p, s.lim); err != nil {
		s.fail(fmt.Errorf("%w: %w", ErrSession, err))
		return err
	}
	return nil
}

// issue registers a call and sends its request PDU with the next CmdSN,
// waiting for room in the target's window. Requests go on the wire in
// CmdSN order: a target ignores a CmdSN below its ExpCmdSN.
func (s *Session) issue(ctx context.Context, p *pdu.PDU, c *call) error {
	s.mu.Lock()
	for s.err == nil && sna(s.cmdSN, s.maxCmdSN) {
		s.window.Wait()
	}
	if s.err != nil {
		err := s.err
		s.mu.Unlock()
		return err
	}
	itt := s.nextITT
	s.nextITT++
	if s.nextITT == pdu.Reserved {
		s.nextITT = 1
	}
	s.calls[itt] = c
	p.SetU32(pdu.OffITT, itt)
	sn := s.cmdSN
	s.cmdSN++
	for s.err == nil && s.sentSN != sn {
		s.window.Wait()
	}
	if s.err != nil {
		err := s.err
		s.mu.Unlock()
		return err
	}
	p.SetU32(pdu.OffCmdSN, sn)
	p.SetU32(pdu.OffExpStatSN, s.expStatSN)
	s.mu.Unlock()
	s.wmu.Lock()
	err := pdu.Write(s.nc, p, s.lim)
	s.wmu.Unlock()
	s.mu.Lock()
	s.sentSN++
	s.window.Broadcast()
	s.mu.Unlock()
	if err != nil {
		s.fail(fmt.Errorf("%w: %w", ErrSession, err))
		return err
	}
	select {
	case <-c.done:
		return c.err
	case <-ctx.Done():
		// The command stays outstanding at the target; the session is
		// not reusable with a task in an unknown state.
		s.fail(fmt.Errorf("%w: %w", ErrSession, ctx.Err()))
		return ctx.Err()
	}
}

// Command runs one SCSI command on lun: dataOut is sent to the target,
// dataIn receives data (its length is the expected transfer length).
func (s *Session) Command(ctx context.Context, lun uint64, cdb []byte, dataOut, dataIn []byte) (Result, error) {
	if len(cdb) > 16 {
		return Result{}, fmt.Errorf("iscsi: CDB of %d bytes", len(cdb))
	}
	p := pdu.New(pdu.OpSCSICmd)
	c := &call{dataIn: dataIn, dataOut: dataOut, done: make(chan struct{})}
	binary.BigEndian.PutUint64(c.lun[:], encodeLUN(lun))
	copy(p.Header[8:16], c.lun[:])
	p.Header[1] |= 0x01 // SIMPLE task attribute
	edtl := len(dataIn)
	if len(dataOut) > 0 {
		p.Header[1] |= cmdWrite
		edtl = len(dataOut)
		if s.p.ImmediateData {
			n := min(len(dataOut), s.p.FirstBurst, s.p.SendSegment)
			p.Data = dataOut[:n]
		}
		// InitialR2T=Yes: no unsolicited Data-Out follows (F bit stays).
	}
	if len(dataIn) > 0 {
		p.Header[1] |= cmdRead
	}
	p.SetU32(pdu.OffTTT, uint32(edtl))
	copy(p.Header[32:48], cdb)
	if err := s.issue(ctx, p, c); err != nil {
		return c.res, err
	}
	return c.res, nil
}

// encodeLUN encodes a LUN in SAM's single-level format.
func encodeLUN(lun uint64) uint64 {
	if lun < 256 {
		return lun << 48
	}
	return (0x4000 | lun&0x3fff) << 48 // flat space addressing
}

// busyPatience is how long run retries a command the target answers
// TASK SET FULL or BUSY.
const busyPatience = 30 * time.Second

// run runs a command and turns a status other than GOOD into a
// StatusError. A UNIT ATTENTION (a reset, a new session) is retried, as
// initiators do: it reports an event, not a failure of the command.
//
// TASK SET FULL and BUSY — the target has no room for the command now —
// are retried too, after a pause that doubles from a millisecond to
// 100 ms, for up to busyPatience: the command runs once the target's
// other commands have made room.
func (s *Session) run(ctx context.Context, op string, lun uint64, cdb, out, in []byte) error {
	pause, waited := time.Millisecond, time.Duration(0)
	for try := 0; ; try++ {
		r, err := s.Command(ctx, lun, cdb, out, in)
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		if k, _, _ := r.SenseKey(); r.Status == scsi.StatusCheckCondition && k == scsi.KeyUnitAttention && try < 4 {
			continue
		}
		if (r.Status == scsi.StatusTaskSetFull || r.Status == scsi.StatusBusy) && waited < busyPatience {
			t := time.NewTimer(pause)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return fmt.Errorf("%s: %w", op, ctx.Err())
			}
			waited += pause
			pause = min(2*pause, 100*time.Millisecond)
			continue
		}
		if r.Status != scsi.StatusGood {
			return &StatusError{Op: op, Result: r}
		}
		return nil
	}
}

// Read16 reads len(buf) bytes (whole blocks of bs bytes) at block lba.
func (s *Session) Read16(ctx context.Context, lun, lba uint64, bs int, buf []byte) error {
	cdb := make([]byte, 16)
	cdb[0] = 0x88
	binary.BigEndian.PutUint64(cdb[2:], lba)
	binary.BigEndian.PutUint32(cdb[10:], uint32(len(buf)/bs))
	return s.run(ctx, "READ(16)", lun, cdb, nil, buf)
}

// Write16 writes buf (whole blocks of bs bytes) at block lba.
func (s *Session) Write16(ctx context.Context, lun, lba uint64, bs int, buf []byte) error {
	cdb := make([]byte, 16)
	cdb[0] = 0x8a
	binary.BigEndian.PutUint64(cdb[2:], lba)
	binary.BigEndian.PutUint32(cdb[10:], uint32(len(buf)/bs))
	return s.run(ctx, "WRITE(16)", lun, cdb, buf, nil)
}

// SyncCache makes every written block of the LUN durable.
func (s *Session) SyncCache(ctx context.Context, lun uint64) error {
	cdb := make([]byte, 16)
	cdb[0] = 0x91
	return s.run(ctx, "SYNCHRONIZE CACHE(16)", lun, cdb, nil, nil)
}

// Unmap deallocates blocks [lba, lba+n).
func (s *Session) Unmap(ctx context.Context, lun, lba uint64, n uint32) error {
	param := make([]byte, 24)
	binary.BigEndian.PutUint16(param[0:], 22)
	binary.BigEndian.PutUint16(param[2:], 16)
	binary.BigEndian.PutUint64(param[8:], lba)
	binary.BigEndian.PutUint32(param[16:], n)
	cdb := make([]byte, 10)
	cdb[0] = 0x42
	binary.BigEndian.PutUint16(cdb[7:], uint16(len(param)))
	return s.run(ctx, "UNMAP", lun, cdb, param, nil)
}

// Capacity is what READ CAPACITY(16) reports.
type Capacity struct {
	Blocks    uint64
	BlockSize int
	Thin      bool // LBPME: UNMAP works
}

// ReadCapacity16 returns the LUN's size.
func (s *Session) ReadCapacity16(ctx context.Context, lun uint64) (Capacity, error) {
	cdb := make([]byte, 16)
	cdb[0], cdb[1] = 0x9e, 0x10
	binary.BigEndian.PutUint32(cdb[10:], 32)
	buf := make([]byte, 32)
	if err := s.run(ctx, "READ CAPACITY(16)", lun, cdb, nil, buf); err != nil {
		return Capacity{}, err
	}
	return Capacity{Blocks: binary.BigEndian.Uint64(buf) + 1, BlockSize: int(binary.BigEndian.Uint32(buf[8:])), Thin: buf[14]&0x80 != 0}, nil
}

// Inquiry returns the vendor and product of a LUN.
func (s *Session) Inquiry(ctx context.Context, lun uint64) (vendor, product string, err error) {
	cdb := make([]byte, 6)
	cdb[0] = 0x12
	cdb[4] = 96
	buf := make([]byte, 96)
	if err := s.run(ctx, "INQUIRY", lun, cdb, nil, buf); err != nil {
		return "", "", err
	}
	return trimSpace(buf[8:16]), trimSpace(buf[16:32]), nil
}

func trimSpace(b []byte) string {
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == 0) {
		b = b[:len(b)-1]
	}
	return string(b)
}

// TestUnitReady reports whether the LUN is ready.
func (s *Session) TestUnitReady(ctx context.Context, lun uint64) error {
	return s.run(ctx, "TEST UNIT READY", lun, make([]byte, 6), nil, nil)
}

// Ping sends a NOP-Out and waits for the NOP-In.
func (s *Session) Ping(ctx context.Context) error {
	p := pdu.New(pdu.OpNopOut)
	p.SetImmediate()
	p.SetU32(pdu.OffTTT, pdu.Reserved)
	c := &call{done: make(chan struct{})}
	return s.issueImmediate(ctx, p, c)
}

func (s *Session) issueImmediate(ctx context.Context, p *pdu.PDU, c *call) error {
	s.mu.Lock()
	if s.err != nil {
		s.mu.Unlock()
		return s.err
	}
	itt := s.nextITT
	s.nextITT++
	s.calls[itt] = c
	p.SetU32(pdu.OffITT, itt)
	s.mu.Unlock()
	if err := s.write(p, true); err != nil {
		return err
	}
	select {
	case <-c.done:
		return c.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// SendTargets asks for the target names a portal offers (a discovery
// session, or a normal one for its own target).
func (s *Session) SendTargets(ctx context.Context) ([]string, error) {
	p := pdu.New(pdu.OpTextReq)
	p.SetImmediate()
	p.SetU32(pdu.OffTTT, pdu.Reserved)
	v := "All"
	if s.cfg.Target != "" {
		v = s.cfg.Target
	}
	p.Data = pdu.Text{{Key: "SendTargets", Value: v}}.Encode()
	c := &call{done: make(chan struct{})}
	if err := s.issueImmediate(ctx, p, c); err != nil {
		return nil, err
	}
	t, err := pdu.ParseText(c.text)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, kv := range t {
		if kv.Key == "TargetName" {
			names = append(names, kv.Value)
		}
	}
	return names, nil
}

// Close logs out and closes the connection.
func (s *Session) Close() error {
	s.mu.Lock()
	failed := s.err != nil
	s.mu.Unlock()
	if !failed {
		p := pdu.New(pdu.OpLogoutReq)
		p.SetImmediate()
		p.Header[1] = 0x80 // close the session
		c := &call{done: make(chan struct{})}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s.issueImmediate(ctx, p, c)
		cancel()
	}
	s.fail(net.ErrClosed)
	return nil
}

// Err returns why the session failed, or nil.
func (s *Session) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if errors.Is(s.err, net.ErrClosed) {
		return nil
	}
	return s.err
}
