package scsi

import (
	"encoding/binary"
	"sort"
	"sync"
)

// Persistent reservation types (SPC-4 table 168).
const (
	prWriteExclusive          = 1
	prExclusiveAccess         = 3
	prWriteExclusiveRegOnly   = 5
	prExclusiveAccessRegOnly  = 6
	prWriteExclusiveAllRegs   = 7
	prExclusiveAccessAllRegs  = 8
	prServiceRegister         = 0
	prServiceReserve          = 1
	prServiceRelease          = 2
	prServiceClear            = 3
	prServicePreempt          = 4
	prServicePreemptAbort     = 5
	prServiceRegisterIgnore   = 6
	prInReadKeys              = 0
	prInReadReservation       = 1
	prInReportCapabilities    = 2
	prInReadFullStatus        = 3
	prParamLen                = 24
	statusReservationConflict = StatusReservationConflict
)

// prState is a logical unit's persistent reservations, held in memory
// (APTPL, persistence through power loss, is not offered). Registrations
// are per I_T nexus: the transport's initiator port identifier.
type prState struct {
	mu         sync.Mutex
	generation uint32
	keys       map[string]uint64 // nexus → reservation key
	holder     string            // nexus holding the reservation; "" none
	typ        byte
}

func (p *prState) allRegistrants() bool {
	return p.typ == prWriteExclusiveAllRegs || p.typ == prExclusiveAccessAllRegs
}

// isHolder reports whether nexus holds the reservation (every registrant
// does for the all-registrants types).
func (p *prState) isHolder(nexus string) bool {
	if p.holder == "" {
		return false
	}
	if p.allRegistrants() {
		_, ok := p.keys[nexus]
		return ok
	}
	return p.holder == nexus
}

// access kinds of commands, for conflict checks (SPC-4 5.13.1).
const (
	accessNone = iota // always allowed
	accessRead
	accessWrite
)

func accessOf(op byte) int {
	switch op {
	case 0x08, 0x28, 0xa8, 0x88, 0x2f, 0xaf, 0x8f, 0x34, 0x90:
		return accessRead
	case 0x0a, 0x2a, 0xaa, 0x8a, 0x2e, 0xae, 0x8e, 0x41, 0x93, 0x42, 0x89, 0x8b, 0x35, 0x91, 0x1b, 0x15, 0x55:
		return accessWrite
	}
	return accessNone
}

// conflict reports whether nexus may not run a command with opcode op
// under the current reservation.
func (p *prState) conflict(nexus string, op byte) bool {
	a := accessOf(op)
	if a == accessNone {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.holder == "" || p.isHolder(nexus) {
		return false
	}
	_, registered := p.keys[nexus]
	switch p.typ {
	case prWriteExclusive:
		return a == accessWrite
	case prExclusiveAccess:
		return true
	case prWriteExclusiveRegOnly, prWriteExclusiveAllRegs:
		return a == accessWrite && !registered
	case prExclusiveAccessRegOnly, prExclusiveAccessAllRegs:
		return !registered
	}
	return false
}

func validType(t byte) bool {
	switch t {
	case prWriteExclusive, prExclusiveAccess, prWriteExclusiveRegOnly, prExclusiveAccessRegOnly, prWriteExclusiveAllRegs, prExclusiveAccessAllRegs:
		return true
	}
	return false
}

var conflictResponse = Response{Status: statusReservationConflict}

func (l *LU) persistentReserveIn(cdb []byte) Response {
	p := &l.pr
	alloc := int(binary.BigEndian.Uint16(cdb[7:]))
	p.mu.Lock()
	defer p.mu.Unlock()
	var b []byte
	switch cdb[1] & 0x1f {
	case prInReadKeys:
		b = make([]byte, 8, 8+8*len(p.keys))
		binary.BigEndian.PutUint32(b, p.generation)
		for _, k := range p.sortedKeys() {
			b = binary.BigEndian.AppendUint64(b, k)
		}
		binary.BigEndian.PutUint32(b[4:], uint32(len(b)-8))
	case prInReadReservation:
		b = make([]byte, 8)
		binary.BigEndian.PutUint32(b, p.generation)
		if p.holder != "" {
			r := make([]byte, 16)
			if !p.allRegistrants() {
				binary.BigEndian.PutUint64(r, p.keys[p.holder])
			}
			r[13] = p.typ // scope LU (0)
			b = append(b, r...)
			binary.BigEndian.PutUint32(b[4:], 16)
		}
	case prInReadFullStatus:
		b = make([]byte, 8)
		binary.BigEndian.PutUint32(b, p.generation)
		nexi := make([]string, 0, len(p.keys))
		for n := range p.keys {
			nexi = append(nexi, n)
		}
		sort.Strings(nexi)
		for _, n := range nexi {
			d := make([]byte, 24)
			binary.BigEndian.PutUint64(d, p.keys[n])
			if p.isHolder(n) {
				d[12] = 0x01 // R_HOLDER
				d[13] = p.typ
			}
			tid := transportID(n)
			binary.BigEndian.PutUint32(d[20:], uint32(len(tid)))
			b = append(b, d...)
			b = append(b, tid...)
		}
		binary.BigEndian.PutUint32(b[4:], uint32(len(b)-8))
	case prInReportCapabilities:
		b = make([]byte, 8)
		binary.BigEndian.PutUint16(b, 8)
		b[3] = 0x80 // TMV: the type mask is valid
		b[4] = 0x80 | 0x40 | 0x20 | 0x08 | 0x02
		b[5] = 0x01
	default:
		return check(SenseInvalidFieldInCDB)
	}
	return good(trim(b, alloc))
}

func (p *prState) sortedKeys() []uint64 {
	nexi := make([]string, 0, len(p.keys))
	for n := range p.keys {
		nexi = append(nexi, n)
	}
	sort.Strings(nexi)
	out := make([]uint64, len(nexi))
	for i, n := range nexi {
		out[i] = p.keys[n]
	}
	return out
}

func (l *LU) persistentReserveOut(cdb, data []byte, nexus string) Response {
	p := &l.pr
	sa := cdb[1] & 0x1f
	scope, typ := cdb[2]>>4, cdb[2]&0x0f
	if int(binary.BigEndian.Uint32(cdb[5:])) != prParamLen || len(data) != prParamLen {
		return check(SenseParamListLength)
	}
	key := binary.BigEndian.Uint64(data)
	saKey := binary.BigEndian.Uint64(data[8:])
	flags := data[20]
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.keys == nil {
		p.keys = map[string]uint64{}
	}
	have, registered := p.keys[nexus]
	switch sa {
	case prServiceRegister, prServiceRegisterIgnore:
		if flags&0x01 != 0 || flags&0x08 != 0 { // APTPL, SPEC_I_PT: not offered
			return check(SenseInvalidFieldInParam)
		}
		if sa == prServiceRegister {
			if !registered && key != 0 || registered && key != have {
				return conflictResponse
			}
		}
		if !registered && saKey == 0 {
			return good(nil)
		}
		if saKey == 0 {
			p.unregister(nexus)
		} else {
			p.keys[nexus] = saKey
		}
		p.generation++
		return good(nil)
	}
	if !registered || key != have {
		return conflictResponse
	}
	if (sa == prServiceReserve || sa == prServiceRelease || sa == prServicePreempt || sa == prServicePreemptAbort) && (scope != 0 || !validType(typ)) {
		if !(sa == prServicePreempt || sa == prServicePreemptAbort) || scope != 0 || typ != 0 || p.holder != "" {
			return check(SenseInvalidFieldInCDB)
		}
	}
	switch sa {
	case prServiceReserve:
		if p.holder == "" {
			p.holder, p.typ = nexus, typ
			return good(nil)
		}
		if p.isHolder(nexus) && p.typ == typ {
			return good(nil)
		}
		return conflictResponse
	case prServiceRelease:
		if p.holder == "" || !p.isHolder(nexus) {
			return good(nil)
		}
		if p.typ != typ {
			return check(SenseInvalidReleaseOfPR)
		}
		p.holder, p.typ = "", 0
		return good(nil)
	case prServiceClear:
		p.keys = map[string]uint64{}
		p.holder, p.typ = "", 0
		p.generation++
		return good(nil)
	case prServicePreempt, prServicePreemptAbort:
		switch {
		case p.holder != "" && p.allRegistrants() && saKey == 0:
			for n := range p.keys {
				if n != nexus {
					delete(p.keys, n)
				}
			}
			p.holder, p.typ = nexus, typ
		case p.holder != "" && !p.allRegistrants() && p.keys[p.holder] == saKey:
			p.removeKey(saKey, nexus)
			p.holder, p.typ = nexus, typ
		default:
			if saKey == 0 {
				return check(SenseInvalidFieldInParam)
			}
			if !p.removeKey(saKey, nexus) {
				return conflictResponse
			}
		}
		p.generation++
		return good(nil)
	}
	return check(SenseInvalidFieldInCDB) // REGISTER AND MOVE and reserved actions
}

// unregister removes nexus's registration; a reservation it held goes
// (for all-registrants types, when it was the last registrant).
func (p *prState) unregister(nexus string) {
	delete(p.keys, nexus)
	if p.holder == "" {
		return
	}
	if p.allRegistrants() {
		if len(p.keys) == 0 {
			p.holder, p.typ = "", 0
		} else if p.holder == nexus {
			for n := range p.keys {
				p.holder = n
				break
			}
		}
		return
	}
	if p.holder == nexus {
		p.holder, p.typ = "", 0
	}
}

// removeKey removes the registrations with key (but not self's) and
// reports whether there were any.
func (p *prState) removeKey(key uint64, self string) bool {
	found := false
	for n, k := range p.keys {
		if k == key && n != self {
			delete(p.keys, n)
			found = true
			if n == p.holder && !p.allRegistrants() {
				p.holder, p.typ = "", 0
			}
		}
	}
	return found
}

// transportID is an iSCSI TransportID of format 01 (SPC-4 7.6.4.6): the
// initiator port name "NAME,i,0xISID", NUL-terminated and padded to a
// multiple of 4 bytes.
func transportID(nexus string) []byte {
	n := len(nexus) + 1
	n = (n + 3) / 4 * 4
	b := make([]byte, 4+n)
	b[0] = 0x40 | 0x05 // format 01, protocol iSCSI
	binary.BigEndian.PutUint16(b[2:], uint16(n))
	copy(b[4:], nexus)
	return b
}

// reserve6 is an SPC-2 RESERVE(6)/RELEASE(6) reservation: the whole unit
// for one I_T nexus, gone with the nexus, a logout or a reset.
type reserve6 struct {
	mu     sync.Mutex
	holder string
}

func (r *reserve6) conflict(nexus string, op byte) bool {
	switch op {
	case 0x12, 0xa0, 0x03, 0x17, 0x57: // INQUIRY, REPORT LUNS, REQUEST SENSE, RELEASE
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.holder != "" && r.holder != nexus
}

func (l *LU) reserve(nexus string, cdb []byte) Response {
	if cdb[1]&0x01 != 0 { // third-party and extent reservations are obsolete
		return check(SenseInvalidFieldInCDB)
	}
	r := &l.res6
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.holder != "" && r.holder != nexus {
		return conflictResponse
	}
	r.holder = nexus
	return good(nil)
}

func (l *LU) release(nexus string) Response {
	r := &l.res6
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.holder == nexus {
		r.holder = ""
	}
	return good(nil)
}

// NexusLost tells the unit that an I_T nexus is gone (its connection
// closed or logged out): its SPC-2 reservation is released. Persistent
// reservations stay, as they are meant to.
func (l *LU) NexusLost(nexus string) { l.release(nexus) }

// Reset is a LUN or target reset: SPC-2 reservations are released and a
// stopped unit starts again; persistent reservations stay.
func (l *LU) Reset() {
	l.res6.mu.Lock()
	l.res6.holder = ""
	l.res6.mu.Unlock()
}

// PowerOn puts the unit in its state after a power loss: reservations and
// registrations (persistent ones too: APTPL is not supported) are gone, a
// stopped unit is started, and every I_T nexus's next command but INQUIRY,
// REPORT LUNS and REQUEST SENSE is answered once with the unit attention
// SensePowerOnReset.
func (l *LU) PowerOn() {
	l.ua.raise()
	l.Reset()
	l.pr.mu.Lock()
	l.pr.generation, l.pr.holder, l.pr.typ = 0, "", 0
	clear(l.pr.keys)
	l.pr.mu.Unlock()
	l.stopped.Store(false)
}
