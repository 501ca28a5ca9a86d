package scsi

import (
	"sync"
	"sync/atomic"
)

// SensePowerOnReset is the unit attention a power on establishes: POWER
// ON, RESET, OR BUS DEVICE RESET OCCURRED (SPC-4 table 49, ASC/ASCQ
// 29h/00h).
var SensePowerOnReset = Sense{Key: KeyUnitAttention, ASC: 0x29}

// maxToldNexuses bounds the I_T nexuses a unit remembers as told of its
// last power on. Past it the condition is cleared for every nexus (none
// is told twice; the rest are not told): initiators choose their ISIDs,
// so the nexuses one address can present are not bounded otherwise.
const maxToldNexuses = 4096

// unitAttention holds the unit attention condition of a power on (SAM-5
// 5.14): established for every I_T nexus, those that connect after the
// power on too, and cleared for each nexus once it has been reported to
// it. UA_INTLCK_CTRL is 00b (the control mode page): reporting a unit
// attention clears it.
type unitAttention struct {
	pending atomic.Bool // powerOn, read without mu by every command
	mu      sync.Mutex
	powerOn bool                // a power on is pending for every nexus not in told
	told    map[string]struct{} // nexuses the power on was reported to
}

// raise establishes the power on condition for every nexus.
func (u *unitAttention) raise() {
	u.mu.Lock()
	u.powerOn, u.told = true, map[string]struct{}{}
	u.pending.Store(true)
	u.mu.Unlock()
}

// take returns the condition pending for nexus, and clears it. A command
// with no nexus (not from a transport) has none.
func (u *unitAttention) take(nexus string) (Sense, bool) {
	if nexus == "" || !u.pending.Load() {
		return Sense{}, false // the data path's case: no lock taken
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if !u.powerOn {
		return Sense{}, false
	}
	if _, ok := u.told[nexus]; ok {
		return Sense{}, false
	}
	if len(u.told) >= maxToldNexuses {
		u.powerOn, u.told = false, nil
		u.pending.Store(false)
		return SensePowerOnReset, true
	}
	u.told[nexus] = struct{}{}
	return SensePowerOnReset, true
}

// attention answers a command for which a unit attention condition is
// pending (SPC-4 5.14, SAM-5 5.14), or reports false to have it run.
// INQUIRY and REPORT LUNS run and leave the condition pending; REQUEST
// SENSE returns it as its parameter data, with GOOD status, and clears
// it; any other command is not run and is answered CHECK CONDITION with
// it, which clears it.
func (l *LU) attention(c Command) (Response, bool) {
	switch c.CDB[0] {
	case 0x12, 0xa0: // INQUIRY, REPORT LUNS
		return Response{}, false
	case 0x03: // REQUEST SENSE: a bad CDB is answered as such
		if c.CDB[1]&0x01 != 0 {
			return Response{}, false
		}
	}
	s, ok := l.ua.take(c.Nexus)
	if !ok {
		return Response{}, false
	}
	if c.CDB[0] == 0x03 {
		return good(trim(s.Bytes(), int(c.CDB[4]))), true
	}
	return check(s), true
}
