package iscsi

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nasemu/nasemu/bench"
	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/models"
)

// The bench target reads the Block Limits and Logical Block Provisioning
// pages and keeps its commands within them: removing a 768 MiB file of
// 512-byte blocks takes two UNMAPs (the target takes at most 1 Mi blocks
// in one), a 40 MiB read two READs (at most 32 MiB in one).
func TestInitiatorHonoursBlockLimits(t *testing.T) {
	const size = 2 << 30
	tt := startFreeTarget(t, size)
	lt, err := OpenLUN(context.Background(), "test", SessionConfig{Addr: tt.addr, Target: testIQN}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lt.Close()
	want := BlockLimits{MaxTransfer: 65536, OptimalTransfer: 256, MaxUnmapLBAs: 1 << 20, MaxUnmapDescriptors: 256,
		UnmapGranularity: 1, MaxWriteSame: 1 << 22, Unmap: true, WriteSameUnmap: true}
	if lt.lim != want {
		t.Errorf("block limits %+v, want %+v", lt.lim, want)
	}
	const fileSize = 3 << 28
	if _, err := lt.Layout("big.dat", fileSize, false); err != nil {
		t.Fatal(err)
	}
	f, _, err := lt.Open(0, "big.dat", fileSize, bench.OpenFlags{})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 40<<20)
	for i := range buf {
		buf[i] = byte(i / 512)
	}
	if _, err := f.Do(0, models.Write, 0, int64(len(buf)), buf); err != nil {
		t.Errorf("a 40 MiB write: %v", err)
	}
	got := make([]byte, len(buf))
	if _, err := f.Do(0, models.Read, 0, int64(len(got)), got); err != nil || !bytes.Equal(got, buf) {
		t.Errorf("a 40 MiB read: %v", err)
	}
	if _, err := f.Do(0, models.Trim, 0, fileSize, nil); err != nil {
		t.Errorf("a 768 MiB trim: %v", err)
	}
	if _, err := lt.Remove(0, "big.dat"); err != nil {
		t.Errorf("removing a 768 MiB file: %v", err)
	}
	// The target stored nothing of the file once it was removed.
	if n := tt.vol.Store().(*emu.MemStore).Allocated(); n != 0 {
		t.Errorf("%d bytes still allocated after the UNMAPs", n)
	}
}

// Errors say what the sense data means.
func TestSenseInWords(t *testing.T) {
	const size = 1 << 20
	tt := startFreeTarget(t, size)
	s := tt.dial(t, SessionConfig{})
	ctx := ctxT(t, 10*time.Second)
	err := s.Read16(ctx, 0, size/512, 512, make([]byte, 512))
	if err == nil || !strings.Contains(err.Error(), "ILLEGAL REQUEST, LOGICAL BLOCK ADDRESS OUT OF RANGE (sense key 0x5, ASC/ASCQ 0x21/0x00)") {
		t.Errorf("read beyond the end: %v", err)
	}
	err = s.TestUnitReady(ctx, 5)
	if err == nil || !strings.Contains(err.Error(), "LOGICAL UNIT NOT SUPPORTED") || !errors.Is(err, ErrLUNotSupported) {
		t.Errorf("LUN 5: %v", err)
	}
	_, err = OpenLUN(ctx, "x", SessionConfig{Addr: tt.addr, Target: testIQN}, 5)
	if !errors.Is(err, ErrLUNotSupported) {
		t.Errorf("OpenLUN of LUN 5: %v", err)
	}
	_, err = Dial(ctx, SessionConfig{Addr: tt.addr, Target: "iqn.2026-01.org.nasemu:nosuch"})
	if !errors.Is(err, ErrLogin) || !strings.Contains(err.Error(), "target not found") {
		t.Errorf("unknown target: %v", err)
	}
	tt.tg.Close()
	_, err = Dial(ctx, SessionConfig{Addr: tt.addr, Target: testIQN})
	if !errors.Is(err, ErrSession) || errors.Is(err, ErrLogin) {
		t.Errorf("closed portal: %v", err)
	}
}
