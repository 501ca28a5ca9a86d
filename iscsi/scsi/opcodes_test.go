package scsi

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// The REPORT SUPPORTED OPERATION CODES table and Execute agree: every
// operation code in the table is executed (not refused as an invalid
// operation code), every one outside it is refused, and each CDB usage
// datum is as long as its CDB.
func TestOpcodesTable(t *testing.T) {
	l, _ := newLU(t, 64)
	in := map[byte]bool{}
	for _, o := range opcodes {
		in[o.op] = true
		if n := cdbLen(o.op); len(o.usage) != n {
			t.Errorf("opcode 0x%02x: %d bytes of CDB usage data, CDB of %d", o.op, len(o.usage), n)
		}
	}
	for op := 0; op < 256; op++ {
		cdb := make([]byte, 16)
		cdb[0] = byte(op)
		for _, o := range opcodes {
			if o.op == byte(op) && o.hasSA {
				cdb[1] = byte(o.sa)
				break
			}
		}
		want, _ := l.DataOutLength(cdb)
		r := exec(l, cdb, make([]byte, want))
		k, asc := senseOf(r)
		refused := k == KeyIllegalRequest && asc == SenseInvalidOpcode.ASC
		if refused == in[byte(op)] {
			t.Errorf("opcode 0x%02x: in the table %v, refused as invalid %v", op, in[byte(op)], refused)
		}
	}
}

func rsoc(rctd bool, options, op byte, sa uint16) []byte {
	c := make([]byte, 12)
	c[0], c[1], c[2], c[3] = 0xa3, 0x0c, options, op
	if rctd {
		c[2] |= 0x80
	}
	binary.BigEndian.PutUint16(c[4:], sa)
	binary.BigEndian.PutUint32(c[6:], 65535)
	return c
}

func TestReportSupportedOpcodes(t *testing.T) {
	l, _ := newLU(t, 64)
	for _, rctd := range []bool{false, true} {
		r := exec(l, rsoc(rctd, 0, 0, 0), nil)
		if r.Status != StatusGood {
			t.Fatalf("all commands: status 0x%x", r.Status)
		}
		d := r.Data[4:]
		if n := binary.BigEndian.Uint32(r.Data); int(n) != len(d) {
			t.Fatalf("command data length %d, %d bytes follow", n, len(d))
		}
		size := 8
		if rctd {
			size = 20
		}
		if len(d) != size*len(opcodes) {
			t.Fatalf("RCTD %v: %d bytes for %d commands", rctd, len(d), len(opcodes))
		}
		for i := 0; i < len(d); i += size {
			servactv, ctdp := d[i+5]&1 != 0, d[i+5]&2 != 0
			if ctdp != rctd || (!servactv && binary.BigEndian.Uint16(d[i+2:]) != 0) {
				t.Errorf("descriptor % x", d[i:i+size])
			}
			if rctd && binary.BigEndian.Uint16(d[i+8:]) != 0x0a {
				t.Errorf("timeouts descriptor % x", d[i+8:i+20])
			}
		}
	}
	// One command: READ(16) without a service action; PERSISTENT RESERVE
	// IN with one; each format refused for the other kind.
	r := exec(l, rsoc(true, 1, 0x88, 0), nil)
	if r.Status != StatusGood || r.Data[1] != 0x83 || binary.BigEndian.Uint16(r.Data[2:]) != 16 || r.Data[4] != 0x88 {
		t.Errorf("READ(16): % x", r.Data)
	}
	if k, asc := senseOf(exec(l, rsoc(false, 2, 0x88, 0), nil)); k != KeyIllegalRequest || asc != 0x24 {
		t.Error("READ(16) with a service action accepted")
	}
	if k, asc := senseOf(exec(l, rsoc(false, 1, 0x5e, 1), nil)); k != KeyIllegalRequest || asc != 0x24 {
		t.Error("PERSISTENT RESERVE IN without its service action accepted")
	}
	r = exec(l, rsoc(false, 2, 0x5e, 1), nil)
	if r.Status != StatusGood || r.Data[1] != 0x03 || !bytes.Equal(r.Data[4:6], []byte{0x5e, 0x1f}) {
		t.Errorf("PERSISTENT RESERVE IN/READ RESERVATION: % x", r.Data)
	}
	r = exec(l, rsoc(false, 1, 0x15, 0), nil) // MODE SELECT(6)
	if r.Status != StatusGood || r.Data[1] != 0x01 {
		t.Errorf("MODE SELECT(6) reported as % x, want not supported", r.Data)
	}
}

func getLBAStatus(l *LU, lba uint64, alloc uint32) Response {
	c := cdb16(0x9e, lba, alloc)
	c[1] = 0x12
	return exec(l, c, nil)
}

// GET LBA STATUS reports written blocks mapped and unmapped ones
// deallocated, in runs from the starting LBA.
func TestGetLBAStatus(t *testing.T) {
	l, _ := newLU(t, 64)
	data := bytes.Repeat([]byte{'A'}, 16*bs)
	if r := exec(l, cdb16(0x8a, 8, 16), data); r.Status != StatusGood {
		t.Fatal("write")
	}
	if r := unmapOne(l, 12, 4); r.Status != StatusGood {
		t.Fatal("unmap")
	}
	r := getLBAStatus(l, 4, 1024)
	if r.Status != StatusGood {
		t.Fatalf("status 0x%x sense % x", r.Status, r.Sense)
	}
	type desc struct {
		lba    uint64
		n      uint32
		status byte
	}
	var got []desc
	for d := r.Data[8:]; len(d) >= 16; d = d[16:] {
		got = append(got, desc{binary.BigEndian.Uint64(d), binary.BigEndian.Uint32(d[8:]), d[12]})
	}
	want := []desc{{4, 4, lbaDeallocated}, {8, 4, lbaMapped}, {12, 4, lbaDeallocated}, {16, 8, lbaMapped}, {24, 40, lbaDeallocated}}
	if len(got) != len(want) {
		t.Fatalf("descriptors %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("descriptor %d: %v, want %v", i, got[i], want[i])
		}
	}
	if n := binary.BigEndian.Uint32(r.Data); n != uint32(len(r.Data)-4) {
		t.Errorf("parameter data length %d of %d bytes", n, len(r.Data))
	}
	if k, asc := senseOf(getLBAStatus(l, 64, 24)); k != KeyIllegalRequest || asc != 0x21 {
		t.Error("GET LBA STATUS beyond the end accepted")
	}
	if r := getLBAStatus(l, 8, 24); r.Status != StatusGood || len(r.Data) != 24 || r.Data[20] != lbaMapped {
		t.Errorf("one descriptor: % x", r.Data)
	}
}
