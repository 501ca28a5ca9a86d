package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nasemu/nasemu"
	"github.com/nasemu/nasemu/bench"
	"github.com/nasemu/nasemu/bench/benchtest"
	"github.com/nasemu/nasemu/iscsi"
)

// lockedBuffer is syncBuffer by the name the iSCSI tests use.
type lockedBuffer = syncBuffer

// startISCSI runs 'nasemu iscsi' in the test and returns its address.
func startISCSI(t *testing.T, args ...string) (string, *lockedBuffer) {
	t.Helper()
	addr, log, _ := startISCSIStop(t, args...)
	return addr, log
}

// startISCSIStop is startISCSI with a function that stops the emulator
// (as SIGTERM does) and returns its error; cleanup stops it if the test
// did not.
func startISCSIStop(t *testing.T, args ...string) (string, *lockedBuffer, func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan string, 1)
	done := make(chan error, 1)
	log := &lockedBuffer{}
	go func() { done <- serveISCSI(ctx, append(args, "--listen", "127.0.0.1:0"), log, ready) }()
	var once sync.Once
	var err error
	stop := func() error {
		once.Do(func() { cancel(); err = <-done })
		return err
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("nasemu iscsi: %v", err)
		}
	})
	select {
	case addr := <-ready:
		return addr, log, stop
	case err := <-done:
		once.Do(func() {})
		t.Fatalf("nasemu iscsi %v: %v\n%s", args, err, log)
	case <-time.After(10 * time.Second):
		t.Fatal("nasemu iscsi did not start")
	}
	return "", nil, nil
}

func TestISCSIUsage(t *testing.T) {
	for _, args := range [][]string{
		{"iscsi"},
		{"iscsi", "--setup", "free"},
		{"iscsi", "--setup", "free", "--backing", "x"},                                       // no --size
		{"iscsi", "--setup", "free", "--size", "1MiB", "--backing", "x", "--chap-user", "u"}, // no secret file
		{"iscsi", "--setup", "no-such-setup", "--backing", "x"},
	} {
		var out bytes.Buffer
		if code := run(args, &out, &out); code != 2 {
			t.Errorf("nasemu %v: exit %d, want 2\n%s", args, code, out.String())
		}
	}
}

func TestISCSIServeAndBench(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "secret")
	os.WriteFile(secret, []byte("a-long-enough-secret\n"), 0o600)
	addr, log := startISCSI(t, "--setup", "free", "--size", "64MiB", "--backing", filepath.Join(dir, "lun.img"),
		"--chap-user", "bench", "--chap-secret-file", secret)
	job := filepath.Join(dir, "j.fio")
	os.WriteFile(job, []byte("[w]\nrw=randwrite\nbs=4k\niodepth=4\nsize=8m\nruntime=1s\ntime_based=1\n"), 0o644)
	t.Setenv(iscsi.ChapSecretEnv, "a-long-enough-secret")
	var out bytes.Buffer
	url := "iscsi://bench@" + addr + "/" + iscsi.DefaultIQN + "/0"
	if code := run([]string{"bench", "--target", url, "--job", job, "--format", "json"}, &out, &out); code != 0 {
		t.Fatalf("bench: exit %d\n%s\n%s", code, out.String(), log)
	}
	var rep bench.Report
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil || len(rep.Results) != 1 || rep.Results[0].IOs < 100 {
		t.Fatalf("report %v: %+v", err, rep)
	}
	// The wrong secret is refused, and not logged.
	t.Setenv(iscsi.ChapSecretEnv, "not-the-secret-at-all")
	out.Reset()
	if code := run([]string{"bench", "--target", url, "--job", job}, &out, &out); code == 0 {
		t.Error("bench with a wrong CHAP secret succeeded")
	}
	if l := log.String(); !strings.Contains(l, "login refused") || strings.Contains(l, "not-the-secret") || strings.Contains(l, "a-long-enough") {
		t.Errorf("server log:\n%s", l)
	}
}

// Through the real iSCSI path, nasemu bench agrees with a simulation of
// the same setup (a single HDD with little page cache, behind 1GbE)
// within ±10 %.
func TestISCSIAgreesWithSimOfSetup(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 6 s of wall-clock jobs")
	}
	const setupName = "../../testdata/iscsi/slow-hdd-iscsi-1g.yaml"
	const size = 4 << 30
	dir := t.TempDir()
	addr, _ := startISCSI(t, "--setup", setupName, "--size", "4GiB", "--backing", filepath.Join(dir, "lun.img"))
	jobs, err := bench.ParseFio("agree.fio", strings.NewReader(`
[global]
time_based=1
runtime=3s
direct=1
size=256m

[randread-4k-qd4]
rw=randread
bs=4k
iodepth=4

[read-1m-qd4]
stonewall
rw=read
bs=1m
iodepth=4
`))
	if err != nil {
		t.Fatal(err)
	}
	s, err := nasemu.LoadSetup(setupName)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := s.Build(1)
	if err != nil {
		t.Fatal(err)
	}
	sim, err := bench.Run(bench.NewSim("sim", bench.SimSetup{Device: iscsi.Truncate(dev, size)}), jobs, bench.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	tg, err := targets().Open("iscsi://"+addr+"/"+iscsi.DefaultIQN+"/0", bench.OpenOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	real, err := bench.Run(tg, jobs, bench.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	benchtest.AgreeIOPS(t, "iscsi", real, sim, 0.10)
}
