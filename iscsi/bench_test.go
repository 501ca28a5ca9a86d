package iscsi

import (
	"context"
	"math"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nasemu/nasemu/bench"
	"github.com/nasemu/nasemu/bench/benchtest"
	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fixed"
)

func TestParseURL(t *testing.T) {
	cfg, lun, err := ParseURL("iscsi://127.0.0.1:3261/iqn.2026-01.org.nasemu:lun/0")
	if err != nil || cfg.Addr != "127.0.0.1:3261" || cfg.Target != "iqn.2026-01.org.nasemu:lun" || lun != 0 || cfg.CHAP != nil {
		t.Errorf("%+v %d %v", cfg, lun, err)
	}
	cfg, lun, err = ParseURL("iscsi://u%25s3cr3t@nas.example/iqn.2000-01.com.example:x/3")
	if err != nil || cfg.Addr != "nas.example:3260" || lun != 3 || cfg.CHAP == nil || cfg.CHAP.User != "u" || cfg.CHAP.Secret != "s3cr3t" {
		t.Errorf("%+v %v %d %v", cfg, cfg.CHAP, lun, err)
	}
	t.Setenv(ChapSecretEnv, "")
	for _, bad := range []string{"iscsi://h/iqn.x", "iscsi://h/iqn.x/lun", "iscsi:///iqn.x/0", "iscsi://user@h/iqn.x/0"} {
		if _, _, err := ParseURL(bad); err == nil {
			t.Errorf("ParseURL(%q) accepted", bad)
		}
	}
}

func parseJobs(t *testing.T, fio string) []bench.Job {
	t.Helper()
	jobs, err := bench.ParseFio("test.fio", strings.NewReader(fio))
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// The bench target through the real iSCSI path agrees with sim: of the
// same model: the emulated LUN pays the model's costs and the path adds
// little.
func TestBenchAgreesWithSim(t *testing.T) {
	if testing.Short() || raceDetector {
		t.Skip("wall-clock timing: not with -short or -race")
	}
	const size = 256 << 20
	// A slow device: one unit, 8 ms per request (a disk's seek and
	// rotation) plus 100 MB/s (a 1GbE-like transfer rate). With four
	// commands queued, a completion's round trip through the emulator has
	// 24 ms of queued work to hide behind, so a loaded host's scheduling
	// delays do not show; with 2 ms requests they do (a few per cent).
	cfg := fixed.Config{Capacity: size, Units: 1, Read: 8 * time.Millisecond, Write: 8 * time.Millisecond, BytesPerSecond: 100e6}
	model := func() models.Device {
		d, err := fixed.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	jobs := parseJobs(t, `
[global]
size=64m
time_based=1
runtime=3s
direct=1

[randread-4k-qd4]
rw=randread
bs=4k
iodepth=4

[read-256k-qd4]
stonewall
rw=read
bs=256k
iodepth=4
`)
	sim, err := bench.Run(bench.NewSim("sim", bench.SimSetup{Device: model()}), jobs, bench.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	tt := startTarget(t, model(), emu.NewMemStore(size), TargetConfig{})
	cfgS, lun, _ := ParseURL("iscsi://" + tt.addr + "/" + testIQN + "/0")
	lt, err := OpenLUN(context.Background(), "iscsi", cfgS, lun)
	if err != nil {
		t.Fatal(err)
	}
	defer lt.Close()
	real, err := bench.Run(lt, jobs, bench.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	benchtest.AgreeIOPS(t, "iscsi", real, sim, 0.10)
}

// TestShortRunCountsInFlight: a 1 MiB job at QD8 on a LUN whose every
// I/O outlasts the runtime still counts the eight I/Os it had in flight
// when the runtime ended, as fio waits for and counts them.
func TestShortRunCountsInFlight(t *testing.T) {
	const size = 64 << 20
	d, err := fixed.New(fixed.Config{Capacity: size, Units: 1, Read: 5 * time.Millisecond, Write: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	tt := startTarget(t, d, emu.NewMemStore(size), TargetConfig{})
	cfg, lun, _ := ParseURL("iscsi://" + tt.addr + "/" + testIQN + "/0")
	lt, err := OpenLUN(context.Background(), "iscsi", cfg, lun)
	if err != nil {
		t.Fatal(err)
	}
	defer lt.Close()
	jobs := []bench.Job{{Name: "r", RW: bench.Read, BS: 1 << 20, IODepth: 8, Size: 16 << 20, Direct: true, TimeBased: true, Runtime: time.Millisecond}}
	rep, err := bench.Run(lt, jobs, bench.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Results[0]; r.IOs < 8 || r.IOPS <= 0 || r.Seconds < 0.005 {
		t.Errorf("%d I/Os, %.0f IOPS in %.4f s: want the 8 in flight counted, over at least one I/O's 5 ms", r.IOs, r.IOPS, r.Seconds)
	}
}

// iscsi-perf (libiscsi's load generator, 4 KiB random reads at QD32)
// against the emulated LUN agrees with sim: of the same model.
func TestISCSIPerfAgreesWithSim(t *testing.T) {
	tool := needTool(t, "iscsi-perf")
	if testing.Short() || raceDetector {
		t.Skip("wall-clock timing: not with -short or -race")
	}
	const size = 64 << 20
	// Four units of 2 ms plus 100 MB/s: a small slow array, ~1950 IOPS.
	cfg := fixed.Config{Capacity: size, Units: 4, Read: 2 * time.Millisecond, Write: 2 * time.Millisecond, BytesPerSecond: 100e6}
	model := func() models.Device {
		d, err := fixed.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	sim, err := bench.Run(bench.NewSim("sim", bench.SimSetup{Device: model()}),
		parseJobs(t, "[r]\nrw=randread\nbs=4k\niodepth=32\nsize=64m\nruntime=4s\ntime_based=1\n"), bench.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	tt := startTarget(t, model(), emu.NewMemStore(size), TargetConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, tool, "-m", "32", "-b", "8", "-r", "iscsi://"+tt.addr+"/"+testIQN+"/0")
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	out, _ := cmd.CombinedOutput()
	m := regexp.MustCompile(`iops average (\d+)`).FindAllSubmatch(out, -1)
	if len(m) < 2 {
		t.Fatalf("iscsi-perf printed no averages:\n%s", out)
	}
	iops, _ := strconv.ParseFloat(string(m[len(m)-1][1]), 64)
	s := sim.Results[0].IOPS
	dev := iops/s - 1
	t.Logf("4KiB random read QD32: iscsi-perf %.0f IOPS, sim %.0f IOPS (%+.1f%%)", iops, s, 100*dev)
	if math.Abs(dev) > 0.10 {
		t.Errorf("iscsi-perf %.0f IOPS, sim %.0f: %+.1f%%, want within ±10%%", iops, s, 100*dev)
	}
}
