package iscsi

import (
	"bytes"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/iscsi/scsi"
	"github.com/nasemu/nasemu/models/fixed"
)

// TestRobustTargetPowerLoss: a power loss drops every session at once,
// cuts the paced wait of a write in flight short, and undoes what was not
// made durable (SYNCHRONIZE CACHE or FUA); an initiator that logs in again
// reads the synced and FUA data and zeros where the rest was. No command
// of the old session reaches the store after the loss. Each I_T nexus's
// first command after it is answered with a unit attention, once.
func TestRobustTargetPowerLoss(t *testing.T) {
	const size = 16 << 20
	// 512 KiB/s: a 4 KiB write takes 8 ms, the 1 MiB write in flight
	// across the loss 2 s, and is still waiting when the power goes.
	m, err := fixed.New(fixed.Config{Capacity: size, Units: 64, BytesPerSecond: 512 << 10})
	if err != nil {
		t.Fatal(err)
	}
	clock := NewStopClock(emu.NewWallClock(1, -1))
	store := emu.NewUndoStore(emu.NewMemStore(size), 0, clock)
	vol, err := emu.NewVolume(m, store, emu.Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer vol.Close()
	lu, err := scsi.New(vol, scsi.Config{ID: LUNID(testIQN, 0)})
	if err != nil {
		t.Fatal(err)
	}
	tg, err := NewTarget(TargetConfig{IQN: testIQN, LU: lu, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- tg.Serve(l) }()
	defer func() { tg.Close(); <-served }()
	tt := &testTarget{addr: l.Addr().String(), tg: tg, vol: vol}

	ctx := ctxT(t, 60*time.Second)
	const isid = 0x5eed
	s := tt.dial(t, SessionConfig{ISID: isid})
	block := func(c byte) []byte { return bytes.Repeat([]byte{c}, 4096) }
	if err := s.Write16(ctx, 0, 0, 512, block('s')); err != nil { // synced below
		t.Fatal(err)
	}
	if err := s.SyncCache(ctx, 0); err != nil {
		t.Fatal(err)
	}
	fua := make([]byte, 16)
	fua[0], fua[1], fua[13] = 0x8a, 0x08, 8 // WRITE(16) FUA of 8 blocks at LBA 8
	fua[9] = 8
	if _, err := s.Command(ctx, 0, fua, block('f'), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Write16(ctx, 0, 16, 512, block('u')); err != nil { // acknowledged, never synced
		t.Fatal(err)
	}
	inFlight := make(chan error, 1)
	go func() { inFlight <- s.Write16(ctx, 0, 24, 512, bytes.Repeat(block('i'), 256)) }()
	// The power goes while the write waits out its 2 s, its data stored.
	for deadline := time.Now().Add(10 * time.Second); store.Unsynced() < 4096+1<<20; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the 1 MiB write did not reach the store: %d bytes unsynced", store.Unsynced())
		}
	}
	start := time.Now()
	release := clock.Hold()
	var lost int64
	dropped := tg.PowerLoss(func() { lost = vol.PowerLoss() })
	release()
	d := time.Since(start)
	t.Logf("power loss: %v, %d connections dropped, %d bytes undone", d, dropped, lost)
	if d > time.Second {
		t.Errorf("the power loss took %v: it waited for paced commands", d)
	}
	if dropped != 1 {
		t.Errorf("the power loss dropped %d connections, want 1", dropped)
	}
	if lost != 4096+1<<20 {
		t.Errorf("lost %d bytes, want the unsynced and the in-flight write (4 KiB + 1 MiB)", lost)
	}
	if err := <-inFlight; err == nil {
		t.Error("a write in flight across the power loss was acknowledged")
	}
	if err := s.TestUnitReady(ctx, 0); err == nil {
		t.Error("the session from before the power loss still answers")
	}

	// The same I_T nexus logs in again: its first command is answered
	// with the power on's unit attention, once (SPC-4 5.14).
	again := tt.dial(t, SessionConfig{ISID: isid})
	tur := make([]byte, 6)
	for i, want := range []byte{scsi.StatusCheckCondition, scsi.StatusGood} {
		r, err := again.Command(ctx, 0, tur, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		k, asc, ascq := r.SenseKey()
		if r.Status != want || want == scsi.StatusCheckCondition && (k != scsi.KeyUnitAttention || asc != 0x29 || ascq != 0) {
			t.Errorf("TEST UNIT READY %d after the power loss: status %#x sense %#x/%#x/%#x, want status %#x (UNIT ATTENTION 29h/00h first)",
				i, r.Status, k, asc, ascq, want)
		}
	}
	// A new nexus has the condition pending too: the initiator's READ
	// retries it, as Linux does.
	s2 := tt.dial(t, SessionConfig{})
	got := make([]byte, 32*512) // the in-flight write's first 4 KiB
	if err := s2.Read16(ctx, 0, 0, 512, got); err != nil {
		t.Fatal(err)
	}
	want := append(append(block('s'), block('f')...), make([]byte, 8192)...)
	for i := 0; i < len(got); i += 4096 {
		if !bytes.Equal(got[i:i+4096], want[i:i+4096]) {
			t.Errorf("LBA %d after the power loss: %q..., want %q...", i/512, got[i:i+8], want[i:i+8])
		}
	}
}
