package scsi

import (
	"context"
	"fmt"
	"testing"
)

// TestPowerOnUnitAttention: after a power on each I_T nexus's next
// command is answered once with UNIT ATTENTION, POWER ON, RESET, OR BUS
// DEVICE RESET OCCURRED and not run; INQUIRY and REPORT LUNS run and leave
// it pending; REQUEST SENSE returns it as data and clears it (SPC-4 5.14).
func TestPowerOnUnitAttention(t *testing.T) {
	l, _ := newLU(t, 64)
	as := func(nexus string, cdb []byte) Response {
		return l.Execute(context.Background(), Command{CDB: cdb, Nexus: nexus})
	}
	tur := make([]byte, 6)
	inquiry := []byte{0x12, 0, 0, 0, 36, 0}
	reportLUNs := []byte{0xa0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0}
	requestSense := []byte{0x03, 0, 0, 0, 18, 0}
	isUA := func(sense []byte) bool {
		return len(sense) >= 14 && sense[2]&0x0f == KeyUnitAttention && sense[12] == 0x29 && sense[13] == 0
	}
	if r := as("a", tur); r.Status != StatusGood {
		t.Fatalf("TEST UNIT READY before any power on: status %#x sense % x", r.Status, r.Sense)
	}
	l.PowerOn()
	for _, cdb := range [][]byte{inquiry, reportLUNs, inquiry} {
		if r := as("a", cdb); r.Status != StatusGood {
			t.Errorf("opcode %#x under a pending unit attention: status %#x sense % x", cdb[0], r.Status, r.Sense)
		}
	}
	if r := as("a", cdb16(0x88, 0, 1)); r.Status != StatusCheckCondition || !isUA(r.Sense) || r.Data != nil {
		t.Errorf("READ(16) after the power on: status %#x sense % x, want UNIT ATTENTION 29h/00h", r.Status, r.Sense)
	}
	if r := as("a", tur); r.Status != StatusGood {
		t.Errorf("TEST UNIT READY after the unit attention was reported: status %#x sense % x", r.Status, r.Sense)
	}
	// Another nexus has its own condition; REQUEST SENSE reports it.
	if r := as("b", requestSense); r.Status != StatusGood || !isUA(r.Data) {
		t.Errorf("REQUEST SENSE after the power on: status %#x data % x, want GOOD with UNIT ATTENTION 29h/00h", r.Status, r.Data)
	}
	if r := as("b", requestSense); r.Status != StatusGood || r.Data[2] != KeyNoSense {
		t.Errorf("REQUEST SENSE after it reported the unit attention: data % x, want NO SENSE", r.Data)
	}
	// A write under a pending unit attention is not run (its data-out is
	// what the CDB asked for: the transport reports no residual).
	blk := make([]byte, bs)
	blk[0] = 'w'
	r := l.Execute(context.Background(), Command{CDB: cdb16(0x8a, 1, 1), Data: blk, Nexus: "c"})
	if r.Status != StatusCheckCondition || !isUA(r.Sense) || r.Want != bs {
		t.Errorf("WRITE(16) after the power on: status %#x sense % x want %d", r.Status, r.Sense, r.Want)
	}
	if got := read(t, l, 1, 1); got[0] != 0 {
		t.Error("a write answered with a unit attention was written")
	}
	// A second power on is reported again.
	l.PowerOn()
	if r := as("a", tur); !isUA(r.Sense) {
		t.Errorf("TEST UNIT READY after a second power on: status %#x sense % x", r.Status, r.Sense)
	}
}

// TestPowerOnUnitAttentionBounded: the nexuses told of a power on are
// remembered up to maxToldNexuses; past it the condition is cleared for
// all and none is told twice.
func TestPowerOnUnitAttentionBounded(t *testing.T) {
	l, _ := newLU(t, 8)
	tur := make([]byte, 6)
	l.PowerOn()
	for i := range maxToldNexuses + 1 {
		r := l.Execute(context.Background(), Command{CDB: tur, Nexus: fmt.Sprint("n", i)})
		if r.Status != StatusCheckCondition {
			t.Fatalf("nexus %d: status %#x, want the unit attention", i, r.Status)
		}
	}
	if l.ua.told != nil {
		t.Errorf("%d nexuses remembered past the bound", len(l.ua.told))
	}
	for _, n := range []string{"n0", "n1", "new"} {
		if r := l.Execute(context.Background(), Command{CDB: tur, Nexus: n}); r.Status != StatusGood {
			t.Errorf("nexus %s after the bound: status %#x", n, r.Status)
		}
	}
}
