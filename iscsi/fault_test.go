package iscsi

import (
	"encoding/binary"
	"errors"
	"testing"
	"time"

	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/iscsi/scsi"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fault"
	"github.com/nasemu/nasemu/models/fixed"
	"github.com/nasemu/nasemu/models/raid"
)

// injected wraps dev with an injector of the rules written as text.
func injected(t testing.TB, dev models.Device, rules ...string) *fault.Device {
	t.Helper()
	f, err := fault.New(dev, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range rules {
		r, err := fault.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// chosen returns how many requests the injector f, a part of the target's
// model, has chosen, read under the volume's lock.
func chosen(tt *testTarget, f *fault.Device) (n int) {
	tt.vol.WithModel(func(models.Device, time.Duration) { n = len(f.Events()) })
	return n
}

// senseOf returns the sense key, ASC and INFORMATION field (fixed format)
// of a command's error.
func senseOf(t *testing.T, err error) (key, asc byte, info uint32) {
	t.Helper()
	var se *StatusError
	if !errors.As(err, &se) {
		t.Fatalf("want a CHECK CONDITION, got %v", err)
	}
	key, asc, _ = se.Result.SenseKey()
	if s := se.Result.Sense; len(s) >= 7 && s[0]&0x80 != 0 {
		info = binary.BigEndian.Uint32(s[3:7])
	}
	return key, asc, info
}

// An unreadable range of the LUN's device reaches the initiator as
// MEDIUM ERROR, UNRECOVERED READ ERROR naming the command's LBA; writes
// there and reads elsewhere succeed; a dead device fails writes with
// MEDIUM ERROR, WRITE ERROR.
func TestInjectedFaultsAreSense(t *testing.T) {
	const size = 4 << 20
	f := injected(t, freeModel(t, size), "read range=1MiB:1052672 fail", "write start=1h dead")
	tt := startTarget(t, f, emu.NewMemStore(size), TargetConfig{})
	s := tt.dial(t, SessionConfig{})
	buf := make([]byte, 8*512)
	if err := s.Read16(ctxT(t, 5*time.Second), 0, 0, 512, buf); err != nil {
		t.Fatalf("read of a good range: %v", err)
	}
	if err := s.Write16(ctxT(t, 5*time.Second), 0, 2048, 512, buf); err != nil {
		t.Fatalf("write of the unreadable range: %v", err)
	}
	k, asc, info := senseOf(t, s.Read16(ctxT(t, 5*time.Second), 0, 2044, 512, buf))
	if k != scsi.KeyMediumError || asc != 0x11 || info != 2044 {
		t.Errorf("read over the bad range: sense %#x/%#x info %d, want MEDIUM ERROR / UNRECOVERED READ ERROR at 2044", k, asc, info)
	}
	// The injector is the volume's model: the test reads and arms it under
	// the volume's lock, as a control plane does, not while it serves.
	if n := chosen(tt, f); n != 1 {
		t.Errorf("%d requests chosen, want 1", n)
	}
	// The device dies (its Start passes: the rule is armed afresh at 0).
	tt.vol.WithModel(func(models.Device, time.Duration) {
		f.Clear()
		if err := f.Add(fault.Rule{Ops: fault.Writes, Dead: true}); err != nil {
			t.Error(err)
		}
	})
	k, asc, _ = senseOf(t, s.Write16(ctxT(t, 5*time.Second), 0, 0, 512, buf))
	if k != scsi.KeyMediumError || asc != 0x0c {
		t.Errorf("write to a dead device: sense %#x/%#x, want MEDIUM ERROR / WRITE ERROR", k, asc)
	}
}

// A RAID 5 LUN hides a member's unreadable sectors: the array fails the
// member and reconstructs the data, so the initiator reads the bytes it
// wrote and the array reports itself degraded. A latency spike of a
// member shows in the wall time of the command that met it.
func TestInjectedFaultsBehindRAID(t *testing.T) {
	const member = 16 << 20
	ms := make([]models.Device, 4)
	for i := range ms {
		d, err := fixed.New(fixed.Config{Capacity: member, Units: 4})
		if err != nil {
			t.Fatal(err)
		}
		ms[i] = d
	}
	// Chunk 64 KiB: LUN bytes [0, 192 KiB) are chunks 0-2 of row 0, on
	// members 0-2 (parity on 3); member 1 holds LUN [64 KiB, 128 KiB).
	bad := injected(t, ms[1], "read range=0:65536 fail")
	slow := injected(t, ms[0])
	ms[0], ms[1] = slow, bad
	a, err := raid.New(raid.Config{Level: raid.RAID5, Chunk: 64 << 10}, ms)
	if err != nil {
		t.Fatal(err)
	}
	size := a.Capacity()
	tt := startTarget(t, a, emu.NewMemStore(size), TargetConfig{})
	s := tt.dial(t, SessionConfig{})
	want := make([]byte, 192<<10)
	for i := range want {
		want[i] = byte(i * 7)
	}
	if err := s.Write16(ctxT(t, 5*time.Second), 0, 0, 512, want); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(want))
	if err := s.Read16(ctxT(t, 5*time.Second), 0, 0, 512, got); err != nil {
		t.Fatalf("read over a member's bad sectors: %v", err)
	}
	if string(got) != string(want) {
		t.Error("read back differs from what was written")
	}
	tt.vol.WithModel(func(m models.Device, now time.Duration) {
		st := m.(*raid.Array).Status(now)
		if st.State != raid.Degraded || len(st.Failed) != 1 || st.Failed[0] != 1 {
			t.Errorf("array after the read error: %+v, want degraded with member 1 failed", st)
		}
	})
	if chosen(tt, bad) == 0 {
		t.Error("the bad sectors were never read")
	}
	// A spike armed while the LUN serves (under the volume's lock, as a
	// control plane arms it) meets the next read of member 0.
	tt.vol.WithModel(func(models.Device, time.Duration) {
		if err := slow.Add(fault.Rule{Ops: fault.Reads, Count: 1, Delay: 150 * time.Millisecond}); err != nil {
			t.Error(err)
		}
	})
	start := time.Now()
	if err := s.Read16(ctxT(t, 5*time.Second), 0, 0, 512, got); err != nil {
		t.Fatal(err)
	}
	if el, n := time.Since(start), chosen(tt, slow); el < 150*time.Millisecond || n != 1 {
		t.Errorf("read that met a 150 ms spike took %v (%d spikes)", el, n)
	}
}
