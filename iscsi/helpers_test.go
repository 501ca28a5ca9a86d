package iscsi

import (
	"context"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/internal/syncbuf"
	"github.com/nasemu/nasemu/iscsi/scsi"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fixed"
)

const testIQN = "iqn.2026-01.org.nasemu:test"

// syncBuffer is a log sink that tests read while the target writes.
type syncBuffer = syncbuf.Buffer

type testTarget struct {
	addr string
	tg   *Target
	vol  *emu.Volume
	log  *syncBuffer
}

// freeModel is a zero-cost device: the emulator's own overhead only.
func freeModel(t testing.TB, size int64) models.Device {
	d, err := fixed.New(fixed.Config{Capacity: size, Units: 1024})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// startFreeTarget starts a target over a zero-cost LUN of size bytes in
// memory, with the default configuration.
func startFreeTarget(t testing.TB, size int64) *testTarget {
	t.Helper()
	return startTarget(t, freeModel(t, size), emu.NewMemStore(size), TargetConfig{})
}

// startTarget serves model over store on 127.0.0.1 until the test ends.
func startTarget(t testing.TB, model models.Device, store emu.Store, cfg TargetConfig) *testTarget {
	t.Helper()
	return startTargetLU(t, model, store, scsi.Config{}, cfg)
}

// startTargetLU is startTarget with the logical unit's configuration.
func startTargetLU(t testing.TB, model models.Device, store emu.Store, luCfg scsi.Config, cfg TargetConfig) *testTarget {
	t.Helper()
	vol, err := emu.NewVolume(model, store, emu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	log := &syncBuffer{}
	luCfg.ID = LUNID(testIQN, 0)
	lu, err := scsi.New(vol, luCfg)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.IQN == "" {
		cfg.IQN = testIQN
	}
	cfg.LU = lu
	cfg.Logger = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelInfo}))
	tg, err := NewTarget(cfg)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- tg.Serve(l) }()
	tt := &testTarget{addr: l.Addr().String(), tg: tg, vol: vol, log: log}
	t.Cleanup(func() {
		tg.Close()
		<-done
		vol.Close()
	})
	return tt
}

func (tt *testTarget) dial(t testing.TB, cfg SessionConfig) *Session {
	t.Helper()
	cfg.Addr = tt.addr
	if cfg.Target == "" {
		cfg.Target = testIQN
	}
	s, err := Dial(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// needTool returns the path of an external tool; outside CI a missing
// tool skips the test, in CI (CI=true) it fails it.
func needTool(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is not installed (CI must install libiscsi-bin and tgt)", name)
	}
	t.Skipf("%s is not installed", name)
	return ""
}

func ctxT(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
