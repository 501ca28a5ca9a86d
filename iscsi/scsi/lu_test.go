package scsi

import (
	"bytes"
	"context"
	"encoding/binary"
	"testing"

	"github.com/nasemu/nasemu/emu"
)

const bs = 512

type syncCounter struct {
	*emu.MemStore
	syncs int
}

func (s *syncCounter) Sync() error { s.syncs++; return s.MemStore.Sync() }

func newLU(t *testing.T, blocks int) (*LU, *syncCounter) {
	t.Helper()
	st := &syncCounter{MemStore: emu.NewMemStore(int64(blocks) * bs)}
	l, err := New(st, Config{})
	if err != nil {
		t.Fatal(err)
	}
	return l, st
}

func cdb16(op byte, lba uint64, n uint32) []byte {
	c := make([]byte, 16)
	c[0] = op
	binary.BigEndian.PutUint64(c[2:], lba)
	binary.BigEndian.PutUint32(c[10:], n)
	return c
}

func exec(l *LU, cdb, data []byte) Response {
	return l.Execute(context.Background(), Command{CDB: cdb, Data: data})
}

func senseOf(r Response) (byte, byte) {
	if r.Status != StatusCheckCondition || len(r.Sense) < 14 {
		return 0xff, 0xff
	}
	return r.Sense[2] & 0x0f, r.Sense[12]
}

func read(t *testing.T, l *LU, lba uint64, n uint32) []byte {
	t.Helper()
	r := exec(l, cdb16(0x88, lba, n), nil)
	if r.Status != StatusGood {
		t.Fatalf("READ(16) %d+%d: status %#x sense % x", lba, n, r.Status, r.Sense)
	}
	return r.Data
}

// WRITE SAME writes its block to every block of the range (gotgt's
// returned GOOD and wrote nothing); with UNMAP and a zero block it may
// unmap, with a non-zero block it must write.
func TestWriteSameWrites(t *testing.T) {
	l, _ := newLU(t, 4096)
	block := bytes.Repeat([]byte{0xab}, bs)
	for _, op := range []byte{0x41, 0x93} {
		for _, unmap := range []bool{false, true} {
			var c []byte
			if op == 0x41 {
				c = make([]byte, 10)
				c[0] = op
				binary.BigEndian.PutUint32(c[2:], 100)
				binary.BigEndian.PutUint16(c[7:], 3000)
			} else {
				c = cdb16(op, 100, 3000)
			}
			if unmap {
				c[1] |= 0x08
			}
			if r := exec(l, c, block); r.Status != StatusGood {
				t.Fatalf("WRITE SAME %#x unmap=%v: sense % x", op, unmap, r.Sense)
			}
			got := read(t, l, 100, 3000)
			if !bytes.Equal(got, bytes.Repeat(block, 3000)) {
				t.Errorf("WRITE SAME %#x unmap=%v returned GOOD but did not write every block", op, unmap)
			}
			// A zero block with UNMAP leaves zeros.
			c[1] |= 0x08
			if r := exec(l, c, make([]byte, bs)); r.Status != StatusGood {
				t.Fatal(r.Sense)
			}
			if got := read(t, l, 100, 3000); !bytes.Equal(got, make([]byte, 3000*bs)) {
				t.Errorf("WRITE SAME %#x with UNMAP of zeros left data", op)
			}
		}
	}
	// Zero blocks (WSNZ) and beyond the end are refused.
	if k, asc := senseOf(exec(l, cdb16(0x93, 0, 0), block)); k != KeyIllegalRequest || asc != 0x24 {
		t.Errorf("WRITE SAME of 0 blocks: %x/%x", k, asc)
	}
	if k, asc := senseOf(exec(l, cdb16(0x93, 4000, 200), block)); k != KeyIllegalRequest || asc != 0x21 {
		t.Errorf("WRITE SAME beyond the end: %x/%x", k, asc)
	}
}

func TestOrWriteCompareAndWrite(t *testing.T) {
	l, _ := newLU(t, 64)
	exec(l, cdb16(0x8a, 0, 2), bytes.Repeat([]byte{0x0f}, 2*bs))
	if r := exec(l, cdb16(0x8b, 0, 2), bytes.Repeat([]byte{0xf0}, 2*bs)); r.Status != StatusGood {
		t.Fatal(r.Sense)
	}
	if got := read(t, l, 0, 2); !bytes.Equal(got, bytes.Repeat([]byte{0xff}, 2*bs)) {
		t.Error("ORWRITE did not OR")
	}
	caw := make([]byte, 16)
	caw[0] = 0x89
	caw[13] = 1
	data := append(bytes.Repeat([]byte{0xff}, bs), bytes.Repeat([]byte{0x11}, bs)...)
	if r := exec(l, caw, data); r.Status != StatusGood {
		t.Fatalf("COMPARE AND WRITE that matches: % x", r.Sense)
	}
	if got := read(t, l, 0, 1); !bytes.Equal(got, data[bs:]) {
		t.Error("COMPARE AND WRITE did not write")
	}
	r := exec(l, caw, data) // compares 0xff with 0x11 now
	if k, asc := senseOf(r); k != KeyMiscompare || asc != 0x1d {
		t.Errorf("miscompare: %x/%x", k, asc)
	}
	if got := read(t, l, 0, 1); !bytes.Equal(got, data[bs:]) {
		t.Error("COMPARE AND WRITE wrote after a miscompare")
	}
}

// unmapOne runs an UNMAP of n blocks at lba.
func unmapOne(l *LU, lba uint64, n uint32) Response {
	param := make([]byte, 24)
	binary.BigEndian.PutUint16(param, 22)
	binary.BigEndian.PutUint16(param[2:], 16)
	binary.BigEndian.PutUint64(param[8:], lba)
	binary.BigEndian.PutUint32(param[16:], n)
	c := make([]byte, 10)
	c[0] = 0x42
	binary.BigEndian.PutUint16(c[7:], 24)
	return exec(l, c, param)
}

func TestUnmapAndVerify(t *testing.T) {
	l, _ := newLU(t, 1<<16)
	exec(l, cdb16(0x8a, 0, 16), bytes.Repeat([]byte{1}, 16*bs))
	if r := unmapOne(l, 4, 8); r.Status != StatusGood {
		t.Fatal(r.Sense)
	}
	got := read(t, l, 0, 16)
	if !bytes.Equal(got[4*bs:12*bs], make([]byte, 8*bs)) || got[0] != 1 || got[12*bs] != 1 {
		t.Error("UNMAP did not zero exactly its range")
	}
	// A descriptor past the end refuses the whole list, before anything.
	if k, asc := senseOf(unmapOne(l, 1<<16-2, 8)); k != KeyIllegalRequest || asc != 0x21 {
		t.Errorf("UNMAP beyond the end: %x/%x", k, asc)
	}
	// VERIFY with BYTCHK: equal passes, different is a miscompare.
	v := cdb16(0x8f, 0, 4)
	v[1] = 0x02
	if r := exec(l, v, bytes.Repeat([]byte{1}, 4*bs)); r.Status != StatusGood {
		t.Errorf("VERIFY equal: % x", r.Sense)
	}
	if k, _ := senseOf(exec(l, v, make([]byte, 4*bs))); k != KeyMiscompare {
		t.Errorf("VERIFY different: key %x", k)
	}
}

// Commands the device server does not implement are refused with
// INVALID COMMAND OPERATION CODE, never GOOD.
func TestUnimplementedRefused(t *testing.T) {
	l, _ := newLU(t, 64)
	for _, op := range []byte{0x83, 0x84, 0x48, 0x9c, 0x37, 0xb7, 0x04, 0x07} {
		c := make([]byte, 16)
		c[0] = op
		if k, asc := senseOf(exec(l, c, nil)); k != KeyIllegalRequest || asc != 0x20 {
			t.Errorf("opcode %#x: sense %x/%x, want ILLEGAL REQUEST / INVALID COMMAND OPERATION CODE", op, k, asc)
		}
	}
}

func TestFUAAndStop(t *testing.T) {
	l, st := newLU(t, 64)
	w := cdb16(0x8a, 0, 1)
	w[1] = 0x08 // FUA
	exec(l, w, make([]byte, bs))
	if st.syncs != 1 {
		t.Errorf("FUA write synced %d times, want 1", st.syncs)
	}
	ssu := make([]byte, 6)
	ssu[0] = 0x1b // START=0: stop
	exec(l, ssu, nil)
	if k, _ := senseOf(exec(l, cdb16(0x88, 0, 1), nil)); k != KeyNotReady {
		t.Errorf("read of a stopped unit: key %x", k)
	}
	ssu[4] = 1
	exec(l, ssu, nil)
	read(t, l, 0, 1)
}

// A write whose transport length is short of the CDB's writes what came
// and keeps the rest of the block (FCP-4 a).
func TestShortWrite(t *testing.T) {
	l, _ := newLU(t, 64)
	exec(l, cdb16(0x8a, 0, 2), bytes.Repeat([]byte{'a'}, 2*bs))
	r := exec(l, cdb16(0x8a, 0, 2), bytes.Repeat([]byte{'b'}, 200))
	if r.Status != StatusGood || r.Want != 2*bs {
		t.Fatalf("short write: %#x want %d", r.Status, r.Want)
	}
	got := read(t, l, 0, 2)
	if !bytes.Equal(got[:200], bytes.Repeat([]byte{'b'}, 200)) || !bytes.Equal(got[200:], bytes.Repeat([]byte{'a'}, 2*bs-200)) {
		t.Error("short write changed more or less than it carried")
	}
}

func prOut(l *LU, nexus string, sa, typ byte, key, saKey uint64) Response {
	c := make([]byte, 10)
	c[0], c[1], c[2] = 0x5f, sa, typ
	binary.BigEndian.PutUint32(c[5:], 24)
	p := make([]byte, 24)
	binary.BigEndian.PutUint64(p, key)
	binary.BigEndian.PutUint64(p[8:], saKey)
	return l.Execute(context.Background(), Command{CDB: c, Data: p, Nexus: nexus})
}

func TestPersistentReservations(t *testing.T) {
	l, _ := newLU(t, 64)
	as := func(nexus string, cdb, data []byte) byte {
		return l.Execute(context.Background(), Command{CDB: cdb, Data: data, Nexus: nexus}).Status
	}
	w, r := cdb16(0x8a, 0, 1), cdb16(0x88, 0, 1)
	blk := make([]byte, bs)
	if st := prOut(l, "a", 0, 0, 0, 0xaa).Status; st != StatusGood {
		t.Fatalf("register a: %#x", st)
	}
	if st := prOut(l, "b", 0, 0, 7, 0xbb).Status; st != StatusReservationConflict {
		t.Errorf("register b with a wrong key: %#x", st)
	}
	prOut(l, "b", 0, 0, 0, 0xbb)
	if st := prOut(l, "a", 1, prWriteExclusive, 0xaa, 0).Status; st != StatusGood {
		t.Fatalf("reserve: %#x", st)
	}
	if as("a", w, blk) != StatusGood || as("b", r, nil) != StatusGood || as("c", r, nil) != StatusGood {
		t.Error("Write Exclusive: the holder's write or others' reads refused")
	}
	if as("b", w, blk) != StatusReservationConflict || as("c", w, blk) != StatusReservationConflict {
		t.Error("Write Exclusive: another nexus wrote")
	}
	// A short write is no way around the reservation.
	if as("c", w, blk[:100]) != StatusReservationConflict {
		t.Error("a short write slipped past the reservation")
	}
	// READ RESERVATION names a's key and the type.
	in := make([]byte, 10)
	in[0], in[1] = 0x5e, 0x01
	binary.BigEndian.PutUint16(in[7:], 64)
	res := l.Execute(context.Background(), Command{CDB: in, Nexus: "c"})
	if len(res.Data) != 24 || binary.BigEndian.Uint64(res.Data[8:]) != 0xaa || res.Data[21] != prWriteExclusive {
		t.Errorf("READ RESERVATION % x", res.Data)
	}
	// b preempts a: a's registration and reservation go.
	if st := prOut(l, "b", 4, prExclusiveAccess, 0xbb, 0xaa).Status; st != StatusGood {
		t.Fatalf("preempt: %#x", st)
	}
	if as("a", r, nil) != StatusReservationConflict || as("b", w, blk) != StatusGood {
		t.Error("after PREEMPT to Exclusive Access: a still reads or b cannot write")
	}
	// Unregistering the holder releases the reservation.
	prOut(l, "b", 0, 0, 0xbb, 0)
	if as("a", w, blk) != StatusGood {
		t.Error("reservation outlived its holder's registration")
	}
	// RESERVE(6) is released when the nexus goes.
	if as("a", []byte{0x16, 0, 0, 0, 0, 0}, nil) != StatusGood || as("b", r, nil) != StatusReservationConflict {
		t.Error("RESERVE(6) does not exclude another nexus")
	}
	l.NexusLost("a")
	if as("b", r, nil) != StatusGood {
		t.Error("RESERVE(6) outlived its nexus")
	}
}

func TestBufferPool(t *testing.T) {
	for _, n := range []int{1, 511, 512, 4096, 65537, 1 << 20} {
		b := Buffer(n)
		if len(b) != n || cap(b)&(cap(b)-1) != 0 || cap(b) < n {
			t.Fatalf("Buffer(%d): len %d cap %d", n, len(b), cap(b))
		}
		Recycle(b)
	}
	Recycle(make([]byte, 100)) // not from the pool: ignored
	if b := Buffer(100); len(b) != 100 || cap(b) != 128 {
		t.Errorf("Buffer(100) after a foreign Recycle: len %d cap %d", len(b), cap(b))
	}
	if Buffer(0) != nil {
		t.Error("Buffer(0) is not nil")
	}
}
