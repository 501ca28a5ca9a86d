// Package scsi is the SCSI block command set (SBC-3/SPC-4) of nasemu's
// iSCSI target: a device server for one logical unit over any block
// backend (an emu.Volume).
//
// It is written here rather than taken from gostor/gotgt because gotgt's
// SCSI layer returns GOOD for WRITE SAME without writing anything, panics
// on ORWRITE, overflows UNMAP lengths at 4 GiB and logs through a global
// logger; patching around that costs more than this small, tested command
// set. Every command either does its work or fails with sense data: a
// command the device server does not implement is answered with ILLEGAL
// REQUEST / INVALID COMMAND OPERATION CODE, never GOOD.
//
// Commands: TEST UNIT READY, REQUEST SENSE, INQUIRY (standard data and VPD
// pages 0x00, 0x80, 0x83, 0xB0, 0xB1, 0xB2), READ CAPACITY(10/16), REPORT
// LUNS, REPORT SUPPORTED OPERATION CODES (all, one command, with timeouts;
// the table in opcodes.go), GET LBA STATUS (from a Provisioner backend,
// else by scanning a chunk: zeros read as deallocated under LBPRZ),
// MODE SENSE(6/10) (caching and control pages), START STOP UNIT,
// READ(6/10/12/16), WRITE(6/10/12/16), WRITE AND VERIFY(10/12/16),
// VERIFY(10/12/16) with BYTCHK 0, 1 and 3, COMPARE AND WRITE, ORWRITE(16),
// WRITE SAME(10/16) with UNMAP and NDOB, UNMAP, PRE-FETCH(10/16),
// SYNCHRONIZE CACHE(10/16), PERSISTENT RESERVE IN/OUT, RESERVE(6) and
// RELEASE(6). FUA, and the verification of WRITE AND VERIFY, sync the
// backend before GOOD. Not implemented (refused): MODE SELECT, EXTENDED
// COPY, SANITIZE,
// WRITE ATOMIC, READ DEFECT DATA, protection information (a non-zero
// RDPROTECT/WRPROTECT/VRPROTECT is an invalid field).
//
// A power on (PowerOn) is a unit attention condition for every I_T nexus,
// reported once to each as SPC-4 5.14 says (ua.go).
//
// Backend errors become sense data here: a model's models.ErrFailed is a
// MEDIUM ERROR (unrecovered read error, write error), ErrOutOfRange LBA OUT
// OF RANGE, ErrNoSpace a DATA PROTECT space allocation failure, anything
// else a HARDWARE ERROR (internal target failure).
package scsi

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/nasemu/nasemu/models"
)

// Backend is the block storage under a logical unit. emu.Volume is one.
type Backend interface {
	ReadAt(p []byte, off int64) (int, error)
	WriteAt(p []byte, off int64) (int, error)
	Sync() error
	Trim(off, n int64) error
	Size() int64
}

// Config describes a logical unit. The zero value of each field means its
// default.
type Config struct {
	BlockSize int    // bytes per logical block; 0 means 512
	Vendor    string // T10 vendor identification; "" means "NASEMU"
	Product   string // "" means "EMULATED LUN"
	Serial    string // unit serial number; "" derives one from ID
	// ID makes the NAA designator unique per LUN (a hash of the target
	// name and LUN is a good choice).
	ID uint64
	// ReadOnly makes the unit write protected.
	ReadOnly bool
	// RotationRate goes into the block device characteristics VPD page:
	// 1 for non-rotating media, else revolutions per minute, 0 unknown.
	RotationRate uint16
	// Logger receives backend failures; nil is quiet.
	Logger *slog.Logger
}

// Limits of the device server, reported in the block limits VPD page.
const (
	maxXferBytes       = 32 << 20 // largest READ or WRITE: the transport buffers it
	maxUnmapBlocks     = 1 << 20  // iscsi-test-cu wants at most 1 Mi blocks
	maxUnmapDescs      = 256
	maxWriteSameBlocks = 1 << 22
	maxCAWBlocks       = 255
	ioChunk            = 1 << 20
)

// LU is a logical unit: a device server over a backend. It is safe for
// concurrent use by every session of a target.
type LU struct {
	cfg     Config
	dev     Backend
	blocks  uint64
	bs      int
	log     *slog.Logger
	atomic  sync.RWMutex // COMPARE AND WRITE and ORWRITE exclude writes
	stopped atomic.Bool  // START STOP UNIT with START=0
	pr      prState
	res6    reserve6
	ua      unitAttention
}

// New returns a logical unit over dev.
func New(dev Backend, cfg Config) (*LU, error) {
	if cfg.BlockSize == 0 {
		cfg.BlockSize = 512
	}
	if cfg.BlockSize < 512 || cfg.BlockSize > 65536 || cfg.BlockSize&(cfg.BlockSize-1) != 0 {
		return nil, fmt.Errorf("%w: block size %d", models.ErrConfig, cfg.BlockSize)
	}
	if cfg.Vendor == "" {
		cfg.Vendor = "NASEMU"
	}
	if cfg.Product == "" {
		cfg.Product = "EMULATED LUN"
	}
	if cfg.Serial == "" {
		cfg.Serial = fmt.Sprintf("%016x", cfg.ID)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	blocks := uint64(dev.Size()) / uint64(cfg.BlockSize)
	if blocks == 0 {
		return nil, fmt.Errorf("%w: backend of %d bytes holds no %d-byte block", models.ErrConfig, dev.Size(), cfg.BlockSize)
	}
	return &LU{cfg: cfg, dev: dev, blocks: blocks, bs: cfg.BlockSize, log: cfg.Logger}, nil
}

// maxXfer is the maximum transfer length in blocks.
func (l *LU) maxXfer() uint32 { return uint32(maxXferBytes / l.bs) }

// Blocks returns the number of logical blocks.
func (l *LU) Blocks() uint64 { return l.blocks }

// BlockSize returns the logical block size in bytes.
func (l *LU) BlockSize() int { return l.bs }

// Command is one SCSI command as the transport delivers it.
type Command struct {
	CDB []byte
	// Data is the data-out buffer the initiator sent (its length is the
	// transport's expected data transfer length of a write).
	Data []byte
	// Nexus identifies the I_T nexus (initiator port) that sent the
	// command, for persistent reservations: iSCSI uses the initiator
	// name and ISID.
	Nexus string
}

// Response is the outcome of a command.
type Response struct {
	Status byte
	Sense  []byte // fixed-format sense data with CHECK CONDITION
	// Data is the data-in the command produced; the transport truncates
	// it to the expected length and reports the residual.
	Data []byte
	// Want is, for a command with data-out, the bytes the CDB asks for
	// (SPDTL); the transport reports the residual against its EDTL.
	Want int
	// Pooled says Data came from Buffer: the transport recycles it once
	// sent.
	Pooled bool
}

func check(s Sense) Response {
	return Response{Status: StatusCheckCondition, Sense: s.Bytes()}
}

func good(data []byte) Response { return Response{Status: StatusGood, Data: data} }

// DataOutLength returns the bytes of data-out the CDB asks for, and false
// when the command moves no data to the target. The transport uses it to
// solicit data and compute residuals.
func (l *LU) DataOutLength(cdb []byte) (int, bool) {
	if len(cdb) == 0 {
		return 0, false
	}
	if n := cdbLen(cdb[0]); n > 0 && len(cdb) > n {
		cdb = cdb[:n]
	}
	bs := l.bs
	switch cdb[0] {
	case 0x0a: // WRITE(6)
		if len(cdb) < 6 {
			return 0, false
		}
		n := int(cdb[4])
		if n == 0 {
			n = 256
		}
		return n * bs, true
	case 0x2a, 0x2e: // WRITE(10), WRITE AND VERIFY(10)
		if len(cdb) < 10 {
			return 0, false
		}
		return int(binary.BigEndian.Uint16(cdb[7:])) * bs, true
	case 0x2f: // VERIFY(10)
		if len(cdb) < 10 || cdb[1]&0x06 == 0 {
			return 0, false
		}
		return int(binary.BigEndian.Uint16(cdb[7:])) * bs, true
	case 0xaa, 0xae: // WRITE(12), WRITE AND VERIFY(12)
		if len(cdb) < 12 {
			return 0, false
		}
		return int(binary.BigEndian.Uint32(cdb[6:])) * bs, true
	case 0xaf:
		if len(cdb) < 12 || cdb[1]&0x06 == 0 {
			return 0, false
		}
		return int(binary.BigEndian.Uint32(cdb[6:])) * bs, true
	case 0x8a, 0x8e, 0x8b: // WRITE(16), WRITE AND VERIFY(16), ORWRITE(16)
		if len(cdb) < 16 {
			return 0, false
		}
		return int(binary.BigEndian.Uint32(cdb[10:])) * bs, true
	case 0x8f:
		if len(cdb) < 16 || cdb[1]&0x06 == 0 {
			return 0, false
		}
		return int(binary.BigEndian.Uint32(cdb[10:])) * bs, true
	case 0x89: // COMPARE AND WRITE
		if len(cdb) < 16 {
			return 0, false
		}
		return 2 * int(cdb[13]) * bs, true
	case 0x41, 0x93: // WRITE SAME
		if cdb[1]&0x01 != 0 { // NDOB
			return 0, false
		}
		return bs, true
	case 0x42: // UNMAP
		if len(cdb) < 10 {
			return 0, false
		}
		return int(binary.BigEndian.Uint16(cdb[7:])), true
	case 0x15: // MODE SELECT(6)
		if len(cdb) < 6 {
			return 0, false
		}
		return int(cdb[4]), true
	case 0x55: // MODE SELECT(10)
		if len(cdb) < 10 {
			return 0, false
		}
		return int(binary.BigEndian.Uint16(cdb[7:])), true
	case 0x5f: // PERSISTENT RESERVE OUT
		if len(cdb) < 10 {
			return 0, false
		}
		return int(binary.BigEndian.Uint32(cdb[5:])), true
	}
	return 0, false
}

// WorkBytes returns an upper bound of the memory the device server
// allocates to run the command, apart from the dataOut bytes of data-out
// the transport hands it: the data-in of a read, the old contents that
// COMPARE AND WRITE and ORWRITE read, the blocks a partly transferred
// write reads back, the chunk WRITE SAME and VERIFY work in. The
// transport reserves it (with the data-out) before the command runs, so
// that memory stays bounded whatever the initiators send.
func (l *LU) WorkBytes(cdb []byte, dataOut int) int {
	if len(cdb) == 0 || cdbLen(cdb[0]) == 0 || len(cdb) < cdbLen(cdb[0]) {
		return 0
	}
	cdb = cdb[:cdbLen(cdb[0])]
	var blocks uint64
	switch cdb[0] {
	case 0x08: // READ(6)
		blocks = uint64(cdb[4])
		if blocks == 0 {
			blocks = 256
		}
	case 0x28, 0xa8, 0x88, 0x8b: // READ, ORWRITE
		_, n := lbaLen(cdb)
		blocks = uint64(n)
	case 0x0a, 0x2a, 0xaa, 0x8a, 0x2e, 0xae, 0x8e: // a write: read back when partly transferred
		if want, _ := l.DataOutLength(cdb); want == dataOut {
			return 0
		}
		return BufferCap(dataOut + l.bs)
	case 0x89: // COMPARE AND WRITE
		blocks = uint64(cdb[13])
	case 0x41, 0x93, 0x2f, 0xaf, 0x8f: // WRITE SAME, VERIFY: one chunk
		return ioChunk
	case 0x9e: // GET LBA STATUS scans a chunk
		if cdb[1]&0x1f == 0x12 {
			return lbaStatusScan
		}
		return 0
	default:
		return 0
	}
	if blocks > uint64(l.maxXfer()) {
		return 0 // refused before anything is allocated
	}
	return BufferCap(int(blocks) * l.bs)
}

// cdbLen returns the length of a CDB by its group code, or 0 when unknown.
func cdbLen(op byte) int {
	switch op >> 5 {
	case 0:
		return 6
	case 1, 2:
		return 10
	case 4:
		return 16
	case 5:
		return 12
	}
	return 0
}

// Execute runs one command. ctx is cancelled when the task is aborted; a
// long command stops between chunks.
func (l *LU) Execute(ctx context.Context, c Command) Response {
	cdb := c.CDB
	if len(cdb) == 0 {
		return check(SenseInvalidOpcode)
	}
	n := cdbLen(cdb[0])
	if n == 0 || len(cdb) < n {
		return check(SenseInvalidOpcode)
	}
	cdb = cdb[:n]
	c.CDB = cdb
	if cdb[n-1]&0x04 != 0 { // NACA
		return check(SenseInvalidFieldInCDB)
	}
	if r, ok := l.attention(c); ok {
		if want, ok := l.DataOutLength(cdb); ok {
			r.Want = want
		}
		return r
	}
	if l.stopped.Load() && mediumAccess(cdb[0]) {
		return check(SenseNotReadyStopped)
	}
	if l.pr.conflict(c.Nexus, cdb[0]) || l.res6.conflict(c.Nexus, cdb[0]) {
		r := conflictResponse
		if want, ok := l.DataOutLength(cdb); ok {
			r.Want = want
		}
		return r
	}
	if want, ok := l.DataOutLength(cdb); ok && want != len(c.Data) {
		r := l.mismatch(ctx, c, want)
		r.Want = want
		return r
	}
	r := l.execute(ctx, c)
	if want, ok := l.DataOutLength(cdb); ok {
		r.Want = want
	}
	return r
}

// mismatch handles a command whose data-out length (the transport's
// expected data transfer length) differs from what its CDB asks for. A
// plain write is processed as FCP-4 prescribes: only the data that was
// transferred is written, the rest of the blocks keep their contents, and
// the transport reports the residual. Other commands move nothing.
func (l *LU) mismatch(ctx context.Context, c Command, want int) Response {
	switch c.CDB[0] {
	case 0x0a, 0x2a, 0xaa, 0x8a, 0x2e, 0xae, 0x8e:
	case 0x89:
		return check(SenseInvalidFieldInCDB)
	default:
		return check(SenseInvalidFieldInIU)
	}
	if len(c.Data) > want {
		c.Data = c.Data[:want]
		return l.execute(ctx, c)
	}
	lba, n := lbaLen(c.CDB)
	if c.CDB[0] == 0x0a {
		lba = uint64(binary.BigEndian.Uint32(c.CDB[0:]) & 0x1fffff)
	}
	if r, ok := l.checkRange(lba, n); !ok {
		return r
	}
	if l.cfg.ReadOnly {
		return check(SenseWriteProtected)
	}
	if len(c.Data) == 0 {
		return good(nil)
	}
	// Read-modify-write of the partly transferred blocks.
	nb := (len(c.Data) + l.bs - 1) / l.bs
	buf := make([]byte, nb*l.bs)
	off := int64(lba) * int64(l.bs)
	l.atomic.Lock()
	defer l.atomic.Unlock()
	if _, err := l.dev.ReadAt(buf, off); err != nil {
		return l.ioError(err, false, lba)
	}
	copy(buf, c.Data)
	if _, err := l.dev.WriteAt(buf, off); err != nil {
		return l.ioError(err, true, lba)
	}
	return good(nil)
}

func mediumAccess(op byte) bool {
	switch op {
	case 0x08, 0x0a, 0x28, 0x2a, 0x2e, 0x2f, 0xa8, 0xaa, 0xae, 0xaf, 0x88, 0x8a, 0x8e, 0x8f,
		0x89, 0x8b, 0x41, 0x93, 0x42, 0x34, 0x90, 0x35, 0x91:
		return true
	}
	return false
}

func (l *LU) execute(ctx context.Context, c Command) Response {
	cdb := c.CDB
	be := binary.BigEndian
	switch cdb[0] {
	case 0x00: // TEST UNIT READY
		if l.stopped.Load() {
			return check(SenseNotReadyStopped)
		}
		return good(nil)
	case 0x03: // REQUEST SENSE: sense is returned with each command (autosense)
		if cdb[1]&0x01 != 0 {
			return check(SenseInvalidFieldInCDB)
		}
		s := SenseNoSense
		if l.stopped.Load() {
			s = SenseNotReadyStopped
		}
		return good(trim(s.Bytes(), int(cdb[4])))
	case 0x12:
		return l.inquiry(cdb)
	case 0x1a: // MODE SENSE(6)
		return l.modeSense(cdb, false)
	case 0x5a:
		return l.modeSense(cdb, true)
	case 0x16: // RESERVE(6)
		return l.reserve(c.Nexus, cdb)
	case 0x17: // RELEASE(6)
		return l.release(c.Nexus)
	case 0x5e:
		return l.persistentReserveIn(cdb)
	case 0x5f:
		return l.persistentReserveOut(cdb, c.Data, c.Nexus)
	case 0x1b:
		return l.startStop(cdb)
	case 0x25: // READ CAPACITY(10)
		if cdb[8]&0x01 == 0 && be.Uint32(cdb[2:]) != 0 {
			return check(SenseInvalidFieldInCDB)
		}
		b := make([]byte, 8)
		last := l.blocks - 1
		if last > 0xffffffff {
			last = 0xffffffff
		}
		be.PutUint32(b, uint32(last))
		be.PutUint32(b[4:], uint32(l.bs))
		return good(b)
	case 0x9e:
		if cdb[1]&0x1f == 0x12 {
			return l.getLBAStatus(cdb)
		}
		if cdb[1]&0x1f == 0x10 { // READ CAPACITY(16)
			b := make([]byte, 32)
			be.PutUint64(b, l.blocks-1)
			be.PutUint32(b[8:], uint32(l.bs))
			b[14] = 0x80 | 0x40 // LBPME, LBPRZ: unmapped blocks read as zeros
			return good(trim(b, int(be.Uint32(cdb[10:]))))
		}
		return check(SenseInvalidFieldInCDB)
	case 0xa0:
		return l.reportLUNs(cdb)
	case 0xa3: // MAINTENANCE IN
		if cdb[1]&0x1f == 0x0c {
			return l.reportOpcodes(cdb)
		}
		return check(SenseInvalidFieldInCDB)
	case 0x08: // READ(6)
		lba := uint64(be.Uint32(cdb[0:]) & 0x1fffff)
		n := uint32(cdb[4])
		if n == 0 {
			n = 256
		}
		return l.read(ctx, lba, n)
	case 0x28, 0xa8, 0x88:
		lba, n := lbaLen(cdb)
		if cdb[1]&0xe0 != 0 { // RDPROTECT without protection information
			return check(SenseInvalidFieldInCDB)
		}
		return l.read(ctx, lba, n)
	case 0x0a: // WRITE(6)
		lba := uint64(be.Uint32(cdb[0:]) & 0x1fffff)
		n := uint32(cdb[4])
		if n == 0 {
			n = 256
		}
		return l.write(ctx, lba, n, c.Data, false)
	case 0x2a, 0xaa, 0x8a, 0x2e, 0xae, 0x8e:
		lba, n := lbaLen(cdb)
		if cdb[1]&0xe0 != 0 {
			return check(SenseInvalidFieldInCDB)
		}
		// FUA, and WRITE AND VERIFY's verification, make the data durable
		// before GOOD: the backend's Sync is the medium write.
		fua := cdb[1]&0x08 != 0 || cdb[0] == 0x2e || cdb[0] == 0xae || cdb[0] == 0x8e
		return l.write(ctx, lba, n, c.Data, fua)
	case 0x2f, 0xaf, 0x8f:
		return l.verify(ctx, cdb, c.Data)
	case 0x89:
		return l.compareAndWrite(ctx, cdb, c.Data)
	case 0x8b:
		return l.orWrite(ctx, cdb, c.Data)
	case 0x41, 0x93:
		return l.writeSame(ctx, cdb, c.Data)
	case 0x42:
		return l.unmap(ctx, cdb, c.Data)
	case 0x34, 0x90: // PRE-FETCH: the range is checked; the hint has no effect
		lba, n := lbaLen(cdb)
		if r, ok := l.checkRange(lba, n); !ok {
			return r
		}
		return good(nil)
	case 0x35, 0x91: // SYNCHRONIZE CACHE
		lba, n := lbaLen(cdb)
		if r, ok := l.checkRange(lba, n); !ok {
			return r
		}
		if err := l.dev.Sync(); err != nil {
			return l.ioError(err, false, lba)
		}
		return good(nil)
	}
	return check(SenseInvalidOpcode)
}

// lbaLen decodes the LBA and transfer length of 10-, 12- and 16-byte CDBs.
func lbaLen(cdb []byte) (uint64, uint32) {
	be := binary.BigEndian
	switch len(cdb) {
	case 10:
		return uint64(be.Uint32(cdb[2:])), uint32(be.Uint16(cdb[7:]))
	case 12:
		return uint64(be.Uint32(cdb[2:])), be.Uint32(cdb[6:])
	}
	if cdbLen(cdb[0]) == 10 {
		return uint64(be.Uint32(cdb[2:])), uint32(be.Uint16(cdb[7:]))
	}
	if cdbLen(cdb[0]) == 12 {
		return uint64(be.Uint32(cdb[2:])), be.Uint32(cdb[6:])
	}
	return be.Uint64(cdb[2:]), be.Uint32(cdb[10:])
}

func trim(b []byte, n int) []byte {
	if n < len(b) {
		return b[:n]
	}
	return b
}

// checkRange answers LBA OUT OF RANGE for [lba, lba+n) beyond the medium.
func (l *LU) checkRange(lba uint64, n uint32) (Response, bool) {
	if lba > l.blocks || uint64(n) > l.blocks-lba {
		return check(SenseLBAOutOfRange), false
	}
	return Response{}, true
}

// ioError maps a backend error to sense data: a model's failure to a
// medium error, anything else to a hardware error.
func (l *LU) ioError(err error, write bool, lba uint64) Response {
	var s Sense
	switch {
	case errors.Is(err, models.ErrOutOfRange):
		s = SenseLBAOutOfRange
	case errors.Is(err, models.ErrFailed) && write:
		s = SenseWriteError
	case errors.Is(err, models.ErrFailed):
		s = SenseReadError
	case errors.Is(err, models.ErrNoSpace):
		s = Sense{Key: KeyDataProtect, ASC: 0x27, ASCQ: 0x07} // space allocation failed write protect
	case errors.Is(err, context.Canceled):
		s = Sense{Key: KeyAbortedCommand}
	default:
		s = SenseInternalFailure
	}
	if s.Key == KeyMediumError {
		s.Info, s.InfoValid = lba, true
	}
	l.log.Warn("scsi: backend error", "lba", lba, "write", write, "err", err)
	return check(s)
}

func (l *LU) read(ctx context.Context, lba uint64, n uint32) Response {
	if r, ok := l.checkRange(lba, n); !ok {
		return r
	}
	if n > l.maxXfer() {
		return check(SenseInvalidFieldInCDB)
	}
	if n == 0 {
		return good(nil)
	}
	buf := Buffer(int(n) * l.bs)
	if _, err := l.dev.ReadAt(buf, int64(lba)*int64(l.bs)); err != nil {
		Recycle(buf)
		return l.ioError(err, false, lba)
	}
	r := good(buf)
	r.Pooled = true
	return r
}

func (l *LU) write(ctx context.Context, lba uint64, n uint32, data []byte, fua bool) Response {
	if r, ok := l.checkRange(lba, n); !ok {
		return r
	}
	if l.cfg.ReadOnly {
		return check(SenseWriteProtected)
	}
	if n == 0 {
		return good(nil)
	}
	l.atomic.RLock()
	_, err := l.dev.WriteAt(data, int64(lba)*int64(l.bs))
	l.atomic.RUnlock()
	if err == nil && fua {
		err = l.dev.Sync()
	}
	if err != nil {
		return l.ioError(err, true, lba)
	}
	return good(nil)
}

func (l *LU) verify(ctx context.Context, cdb, data []byte) Response {
	lba, n := lbaLen(cdb)
	if cdb[1]&0xe0 != 0 { // VRPROTECT
		return check(SenseInvalidFieldInCDB)
	}
	if r, ok := l.checkRange(lba, n); !ok {
		return r
	}
	bytchk := cdb[1] >> 1 & 0x03
	if bytchk == 2 { // reserved in SBC-3
		return check(SenseInvalidFieldInCDB)
	}
	if n == 0 {
		return good(nil)
	}
	if n > l.maxXfer() {
		return check(SenseInvalidFieldInCDB)
	}
	// Verification reads the medium, a chunk at a time; with BYTCHK it
	// compares too.
	total := int(n) * l.bs
	buf := make([]byte, min(ioChunk, total))
	for done := 0; done < total; {
		if ctx.Err() != nil {
			return l.ioError(ctx.Err(), false, lba)
		}
		k := min(len(buf), total-done)
		if _, err := l.dev.ReadAt(buf[:k], int64(lba)*int64(l.bs)+int64(done)); err != nil {
			return l.ioError(err, false, lba+uint64(done/l.bs))
		}
		switch bytchk {
		case 3: // one block compared with each
			for i := 0; i < k; i += l.bs {
				if !bytes.Equal(buf[i:i+l.bs], data[:l.bs]) {
					s := SenseMiscompareVerify
					s.Info, s.InfoValid = uint64(done+i), true
					return check(s)
				}
			}
		case 1:
			if i := firstDiff(buf[:k], data[done:done+k]); i >= 0 {
				s := SenseMiscompareVerify
				s.Info, s.InfoValid = uint64(done+i), true
				return check(s)
			}
		}
		done += k
	}
	return good(nil)
}

func firstDiff(a, b []byte) int {
	for i := range a {
		if i >= len(b) || a[i] != b[i] {
			return i
		}
	}
	return -1
}

func (l *LU) compareAndWrite(ctx context.Context, cdb, data []byte) Response {
	lba := binary.BigEndian.Uint64(cdb[2:])
	n := uint32(cdb[13])
	if cdb[1]&0xe0 != 0 {
		return check(SenseInvalidFieldInCDB)
	}
	if n > maxCAWBlocks {
		return check(SenseInvalidFieldInCDB)
	}
	if r, ok := l.checkRange(lba, n); !ok {
		return r
	}
	if l.cfg.ReadOnly {
		return check(SenseWriteProtected)
	}
	if n == 0 {
		return good(nil)
	}
	size := int(n) * l.bs
	off := int64(lba) * int64(l.bs)
	l.atomic.Lock()
	defer l.atomic.Unlock()
	buf := make([]byte, size)
	if _, err := l.dev.ReadAt(buf, off); err != nil {
		return l.ioError(err, false, lba)
	}
	if i := firstDiff(buf, data[:size]); i >= 0 {
		s := SenseMiscompareVerify
		s.Info, s.InfoValid = uint64(i), true
		return check(s)
	}
	return l.writeLocked(data[size:], off, lba, cdb[1]&0x08 != 0)
}

// writeLocked writes the blocks of an atomic command (COMPARE AND WRITE,
// ORWRITE) at off, lba, with l.atomic held, and when fua (the CDB's FUA
// bit) makes them durable before the command completes.
func (l *LU) writeLocked(buf []byte, off int64, lba uint64, fua bool) Response {
	if _, err := l.dev.WriteAt(buf, off); err != nil {
		return l.ioError(err, true, lba)
	}
	if fua {
		if err := l.dev.Sync(); err != nil {
			return l.ioError(err, true, lba)
		}
	}
	return good(nil)
}

func (l *LU) orWrite(ctx context.Context, cdb, data []byte) Response {
	lba, n := lbaLen(cdb)
	if cdb[1]&0xe0 != 0 {
		return check(SenseInvalidFieldInCDB)
	}
	if r, ok := l.checkRange(lba, n); !ok {
		return r
	}
	if l.cfg.ReadOnly {
		return check(SenseWriteProtected)
	}
	if n == 0 {
		return good(nil)
	}
	if n > l.maxXfer() {
		return check(SenseInvalidFieldInCDB)
	}
	off := int64(lba) * int64(l.bs)
	l.atomic.Lock()
	defer l.atomic.Unlock()
	buf := make([]byte, len(data))
	if _, err := l.dev.ReadAt(buf, off); err != nil {
		return l.ioError(err, false, lba)
	}
	for i := range buf {
		buf[i] |= data[i]
	}
	return l.writeLocked(buf, off, lba, cdb[1]&0x08 != 0)
}

func (l *LU) writeSame(ctx context.Context, cdb, data []byte) Response {
	lba, n := lbaLen(cdb)
	flags := cdb[1]
	if flags&0xe0 != 0 || flags&0x10 != 0 { // WRPROTECT, ANCHOR
		return check(SenseInvalidFieldInCDB)
	}
	ndob := cdb[0] == 0x93 && flags&0x01 != 0
	if cdb[0] == 0x41 && flags&0x01 != 0 {
		return check(SenseInvalidFieldInCDB)
	}
	unmapBit := flags&0x08 != 0
	if r, ok := l.checkRange(lba, n); !ok {
		return r
	}
	if n == 0 {
		// WSNZ is set in the block limits page: a zero length is refused.
		return check(SenseInvalidFieldInCDB)
	}
	if n > maxWriteSameBlocks {
		return check(SenseInvalidFieldInCDB)
	}
	if l.cfg.ReadOnly {
		return check(SenseWriteProtected)
	}
	block := make([]byte, l.bs)
	if !ndob {
		copy(block, data)
	}
	off := int64(lba) * int64(l.bs)
	total := int64(n) * int64(l.bs)
	if unmapBit && isZero(block) {
		// Unmapped blocks read as zeros (LBPRZ), which is what was asked.
		if err := l.dev.Trim(off, total); err != nil {
			return l.ioError(err, true, lba)
		}
		return good(nil)
	}
	chunk := make([]byte, min(int64(ioChunk), total))
	for i := 0; i < len(chunk); i += l.bs {
		copy(chunk[i:], block)
	}
	l.atomic.RLock()
	defer l.atomic.RUnlock()
	for done := int64(0); done < total; {
		if ctx.Err() != nil {
			return l.ioError(ctx.Err(), true, lba)
		}
		k := min(int64(len(chunk)), total-done)
		if _, err := l.dev.WriteAt(chunk[:k], off+done); err != nil {
			return l.ioError(err, true, lba+uint64(done)/uint64(l.bs))
		}
		done += k
	}
	return good(nil)
}

func isZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

func (l *LU) unmap(ctx context.Context, cdb, data []byte) Response {
	be := binary.BigEndian
	if cdb[1]&0x01 != 0 { // ANCHOR
		return check(SenseInvalidFieldInCDB)
	}
	if l.cfg.ReadOnly {
		return check(SenseWriteProtected)
	}
	if len(data) == 0 {
		return good(nil)
	}
	if len(data) < 8 {
		return check(SenseParamListLength)
	}
	dlen := int(be.Uint16(data[0:]))
	blen := int(be.Uint16(data[2:]))
	if dlen+2 > len(data) || blen+8 > len(data) || blen%16 != 0 {
		return check(SenseParamListLength)
	}
	descs := data[8 : 8+blen]
	if len(descs)/16 > maxUnmapDescs {
		return check(SenseInvalidFieldInParam)
	}
	// Check every descriptor before unmapping anything.
	for d := descs; len(d) >= 16; d = d[16:] {
		lba, n := be.Uint64(d), be.Uint32(d[8:])
		if r, ok := l.checkRange(lba, n); !ok {
			return r
		}
		if n > maxUnmapBlocks {
			return check(SenseInvalidFieldInParam)
		}
	}
	for d := descs; len(d) >= 16; d = d[16:] {
		lba, n := be.Uint64(d), be.Uint32(d[8:])
		if n == 0 {
			continue
		}
		if err := l.dev.Trim(int64(lba)*int64(l.bs), int64(n)*int64(l.bs)); err != nil {
			return l.ioError(err, true, lba)
		}
	}
	return good(nil)
}

func (l *LU) startStop(cdb []byte) Response {
	if cdb[4]&0xf0 != 0 { // power conditions: accepted, the unit stays as it is
		return good(nil)
	}
	if cdb[4]&0x02 != 0 { // LOEJ: the medium is not removable
		return check(Sense{Key: KeyIllegalRequest, ASC: 0x53, ASCQ: 0x02}) // medium removal prevented
	}
	l.stopped.Store(cdb[4]&0x01 == 0)
	return good(nil)
}

func (l *LU) reportLUNs(cdb []byte) Response {
	alloc := int(binary.BigEndian.Uint32(cdb[6:]))
	if alloc < 16 {
		return check(SenseInvalidFieldInCDB)
	}
	switch cdb[2] {
	case 0x00, 0x02, 0x10, 0x12: // LUN 0 is the only one, and it is addressable
	case 0x01, 0x11:
		return good(trim(make([]byte, 8), alloc))
	default:
		return check(SenseInvalidFieldInCDB)
	}
	b := make([]byte, 16)
	binary.BigEndian.PutUint32(b, 8)
	return good(trim(b, alloc))
}
