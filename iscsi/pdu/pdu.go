// Package pdu is the iSCSI protocol data unit codec of RFC 7143: the
// 48-byte basic header segment, additional header segments, the data
// segment with its padding, optional CRC32C header and data digests, and
// the text key=value format of login and text negotiation.
//
// The codec is shared by the target and the initiator of package iscsi. It
// never trusts a length it reads: a data segment longer than the reader's
// limit is refused before anything is allocated.
package pdu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
)

// Opcode is a PDU's operation code (the low six bits of byte 0).
type Opcode uint8

// Initiator opcodes (RFC 7143 section 11.1.1).
const (
	OpNopOut     Opcode = 0x00
	OpSCSICmd    Opcode = 0x01
	OpTaskMgmt   Opcode = 0x02
	OpLoginReq   Opcode = 0x03
	OpTextReq    Opcode = 0x04
	OpDataOut    Opcode = 0x05
	OpLogoutReq  Opcode = 0x06
	OpSNACKReq   Opcode = 0x10
	OpNopIn      Opcode = 0x20
	OpSCSIResp   Opcode = 0x21
	OpTaskResp   Opcode = 0x22
	OpLoginResp  Opcode = 0x23
	OpTextResp   Opcode = 0x24
	OpDataIn     Opcode = 0x25
	OpLogoutResp Opcode = 0x26
	OpR2T        Opcode = 0x31
	OpAsync      Opcode = 0x32
	OpReject     Opcode = 0x3f
)

var opNames = map[Opcode]string{
	OpNopOut: "NOP-Out", OpSCSICmd: "SCSI-Command", OpTaskMgmt: "Task-Management", OpLoginReq: "Login",
	OpTextReq: "Text", OpDataOut: "Data-Out", OpLogoutReq: "Logout", OpSNACKReq: "SNACK",
	OpNopIn: "NOP-In", OpSCSIResp: "SCSI-Response", OpTaskResp: "Task-Management-Response",
	OpLoginResp: "Login-Response", OpTextResp: "Text-Response", OpDataIn: "Data-In",
	OpLogoutResp: "Logout-Response", OpR2T: "R2T", OpAsync: "Async-Message", OpReject: "Reject",
}

func (o Opcode) String() string {
	if s, ok := opNames[o]; ok {
		return s
	}
	return fmt.Sprintf("opcode-0x%02x", uint8(o))
}

// HeaderLen is the length of the basic header segment.
const HeaderLen = 48

// Byte offsets of the header fields shared by most PDUs.
const (
	OffFlags     = 1  // F bit and opcode-specific flags
	OffAHSLen    = 4  // TotalAHSLength in 4-byte words
	OffDataLen   = 5  // DataSegmentLength, 3 bytes
	OffLUN       = 8  // LUN or opcode-specific, 8 bytes
	OffITT       = 16 // Initiator Task Tag
	OffTTT       = 20 // Target Transfer Tag, or EDTL of a SCSI command
	OffCmdSN     = 24 // CmdSN (requests) or StatSN (responses)
	OffExpStatSN = 28 // ExpStatSN (requests) or ExpCmdSN (responses)
	OffMaxCmdSN  = 32 // MaxCmdSN (responses)
	OffDataSN    = 36 // DataSN, R2TSN, ExpDataSN
	OffBufOff    = 40 // Buffer Offset
	OffResidual  = 44 // residual count, desired data transfer length
)

// Flag bits of byte 0 and byte 1.
const (
	FlagImmediate = 0x40 // byte 0: immediate delivery
	FlagFinal     = 0x80 // byte 1: last PDU of a sequence
)

// Reserved is the all-ones tag meaning "no tag".
const Reserved = 0xffffffff

// Errors of the codec.
var (
	// ErrHeaderDigest: the header digest does not match; the connection
	// cannot be trusted any more.
	ErrHeaderDigest = errors.New("iscsi: header digest error")
	// ErrDataDigest: the data digest does not match; the PDU's header
	// is sound and the PDU may be rejected.
	ErrDataDigest = errors.New("iscsi: data digest error")
	// ErrTooLong: a data segment exceeds the receiver's limit.
	ErrTooLong = errors.New("iscsi: data segment too long")
)

// PDU is one protocol data unit.
type PDU struct {
	Header [HeaderLen]byte
	AHS    []byte // additional header segments, a multiple of 4 bytes
	Data   []byte
}

// New returns a PDU with opcode op and the final bit set, as most PDUs have.
func New(op Opcode) *PDU {
	p := &PDU{}
	p.Header[0] = byte(op)
	p.Header[1] = FlagFinal
	return p
}

// Opcode returns the PDU's opcode.
func (p *PDU) Opcode() Opcode { return Opcode(p.Header[0] & 0x3f) }

// Immediate reports the I bit.
func (p *PDU) Immediate() bool { return p.Header[0]&FlagImmediate != 0 }

// SetImmediate sets the I bit.
func (p *PDU) SetImmediate() { p.Header[0] |= FlagImmediate }

// Final reports the F bit.
func (p *PDU) Final() bool { return p.Header[1]&FlagFinal != 0 }

// Flags returns byte 1.
func (p *PDU) Flags() byte { return p.Header[1] }

// U32 returns the big-endian 32-bit field at off.
func (p *PDU) U32(off int) uint32 { return binary.BigEndian.Uint32(p.Header[off:]) }

// SetU32 sets the big-endian 32-bit field at off.
func (p *PDU) SetU32(off int, v uint32) { binary.BigEndian.PutUint32(p.Header[off:], v) }

// U64 returns the big-endian 64-bit field at off.
func (p *PDU) U64(off int) uint64 { return binary.BigEndian.Uint64(p.Header[off:]) }

// SetU64 sets the big-endian 64-bit field at off.
func (p *PDU) SetU64(off int, v uint64) { binary.BigEndian.PutUint64(p.Header[off:], v) }

// ITT returns the initiator task tag.
func (p *PDU) ITT() uint32 { return p.U32(OffITT) }

// DataLen returns the DataSegmentLength field of the header.
func (p *PDU) DataLen() int {
	return int(p.Header[OffDataLen])<<16 | int(p.Header[OffDataLen+1])<<8 | int(p.Header[OffDataLen+2])
}

// Limits say how a connection reads PDUs.
type Limits struct {
	HeaderDigest bool
	DataDigest   bool
	// MaxData is the longest data segment accepted; 0 means 16 MiB - 1,
	// the field's range.
	MaxData int
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// CRC32C returns the iSCSI digest of b.
func CRC32C(b ...[]byte) uint32 {
	var c uint32
	for _, x := range b {
		c = crc32.Update(c, castagnoli, x)
	}
	return c
}

var zeroPad [4]byte

func pad(n int) int { return (4 - n%4) % 4 }

// Read reads one PDU. On ErrDataDigest and ErrTooLong the returned PDU
// holds the valid header (the data of a too-long segment is not read:
// the caller must drop the connection); on other errors it is nil.
func Read(r io.Reader, lim Limits) (*PDU, error) {
	p := &PDU{}
	if _, err := io.ReadFull(r, p.Header[:]); err != nil {
		return nil, err
	}
	if n := int(p.Header[OffAHSLen]) * 4; n > 0 {
		p.AHS = make([]byte, n)
		if _, err := io.ReadFull(r, p.AHS); err != nil {
			return nil, unexpected(err)
		}
	}
	var d [4]byte
	if lim.HeaderDigest {
		if _, err := io.ReadFull(r, d[:]); err != nil {
			return nil, unexpected(err)
		}
		if binary.LittleEndian.Uint32(d[:]) != CRC32C(p.Header[:], p.AHS) {
			return nil, ErrHeaderDigest
		}
	}
	n := p.DataLen()
	max := lim.MaxData
	if max <= 0 {
		max = 1<<24 - 1
	}
	if n > max {
		return p, fmt.Errorf("%w: %s carries %d bytes, the limit is %d", ErrTooLong, p.Opcode(), n, max)
	}
	if n == 0 {
		return p, nil
	}
	buf := make([]byte, n+pad(n))
	if _, err := io.ReadFull(r, buf); err != nil {
		return nil, unexpected(err)
	}
	p.Data = buf[:n]
	if lim.DataDigest {
		if _, err := io.ReadFull(r, d[:]); err != nil {
			return nil, unexpected(err)
		}
		if binary.LittleEndian.Uint32(d[:]) != CRC32C(buf) {
			return p, ErrDataDigest
		}
	}
	return p, nil
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// Write writes p, setting its length fields from AHS and Data. Digests
// are added as lim says. It writes with one vectored write so that a
// PDU is never interleaved with another when the caller holds a lock.
func Write(w io.Writer, p *PDU, lim Limits) error {
	bufs, err := p.appendWire(nil, lim)
	if err != nil {
		return err
	}
	_, err = bufs.WriteTo(w)
	return err
}

// WriteAll writes several PDUs with one system call where the writer
// allows it (a TCP connection's writev): the Data-Out PDUs of a burst,
// which a target with small segments (tgtd's 8 KiB) makes numerous.
func WriteAll(w io.Writer, ps []*PDU, lim Limits) error {
	var bufs net.Buffers
	for _, p := range ps {
		var err error
		if bufs, err = p.appendWire(bufs, lim); err != nil {
			return err
		}
	}
	_, err := bufs.WriteTo(w)
	return err
}

// appendWire appends the PDU's wire form to bufs, filling its lengths.
func (p *PDU) appendWire(bufs net.Buffers, lim Limits) (net.Buffers, error) {
	if len(p.AHS)%4 != 0 || len(p.AHS) > 255*4 {
		return bufs, fmt.Errorf("iscsi: AHS of %d bytes", len(p.AHS))
	}
	n := len(p.Data)
	if n >= 1<<24 {
		return bufs, fmt.Errorf("%w: %d bytes", ErrTooLong, n)
	}
	p.Header[OffAHSLen] = byte(len(p.AHS) / 4)
	p.Header[OffDataLen], p.Header[OffDataLen+1], p.Header[OffDataLen+2] = byte(n>>16), byte(n>>8), byte(n)
	bufs = append(bufs, p.Header[:])
	if len(p.AHS) > 0 {
		bufs = append(bufs, p.AHS)
	}
	if lim.HeaderDigest {
		bufs = append(bufs, binary.LittleEndian.AppendUint32(nil, CRC32C(p.Header[:], p.AHS)))
	}
	if n > 0 {
		bufs = append(bufs, p.Data)
		if k := pad(n); k > 0 {
			bufs = append(bufs, zeroPad[:k])
		}
		if lim.DataDigest {
			bufs = append(bufs, binary.LittleEndian.AppendUint32(nil, CRC32C(p.Data, zeroPad[:pad(n)])))
		}
	}
	return bufs, nil
}
