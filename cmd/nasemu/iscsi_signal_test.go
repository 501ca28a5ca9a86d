package main

import (
	"context"
	"io"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/nasemu/nasemu/iscsi"
)

// TestRobustISCSISignal: 'nasemu iscsi' stops within a second of
// SIGTERM while a command the model paces for seconds is in flight (a
// 1 MiB write on one HDD over 1GbE at --time-scale 1000, the largest).
func TestRobustISCSISignal(t *testing.T) {
	args := []string{"--setup", "../../testdata/iscsi/slow-hdd-iscsi-1g.yaml", "--size", "64MiB",
		"--backing", filepath.Join(t.TempDir(), "lun.img"), "--listen", "127.0.0.1:0", "--time-scale", "1000"}
	signalDuringPacedWrite(t, "nasemu iscsi", runISCSI, args, " as iqn.", `at (127\.0\.0\.1:\d+) as`)
}

// TestRobustNasISCSISignal: 'nasemu nas --iscsi' stops within a second of
// SIGTERM while a LUN command the model paces for seconds is in flight.
func TestRobustNasISCSISignal(t *testing.T) {
	args := []string{"--setup", "../../testdata/iscsi/slow-hdd-iscsi-1g.yaml", "--iscsi", "127.0.0.1:0",
		"--lun", filepath.Join(t.TempDir(), "lun.img"), "--lun-size", "64MiB", "--time-scale", "1000"}
	signalDuringPacedWrite(t, "nasemu nas", runNas, args, "bytes in ", `LUN 0 of \S+ at (127\.0\.0\.1:\d+):`)
}

// signalDuringPacedWrite starts a command with run, waits for the line
// marker on its stderr, finds the portal's address by addrRe, starts a
// 1 MiB write there, checks that it is still paced 300 ms later, sends
// this process SIGTERM and wants the command to end, without error,
// within a second.
func signalDuringPacedWrite(t *testing.T, name string, run func([]string, io.Writer, io.Writer) error, args []string, marker, addrRe string) {
	t.Helper()
	stderr := newLineWaiter(marker)
	done := make(chan error, 1)
	go func() { done <- run(args, nil, stderr) }()
	select {
	case <-stderr.seen:
	case err := <-done:
		t.Fatalf("%s: %v\n%s", name, err, stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatalf("%s does not start", name)
	}
	addr := regexp.MustCompile(addrRe).FindStringSubmatch(stderr.String())
	if addr == nil {
		t.Fatalf("no address in %q", stderr.String())
	}
	s, err := iscsi.Dial(context.Background(), iscsi.SessionConfig{Addr: addr[1], Target: iscsi.DefaultIQN, DialTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	written := make(chan error, 1)
	go func() { written <- s.Write16(context.Background(), 0, 0, 512, make([]byte, 1<<20)) }()
	time.Sleep(300 * time.Millisecond)
	select {
	case err := <-written:
		t.Fatalf("the write was not paced: it ended after 300 ms (%v)", err)
	default:
	}
	start := time.Now()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("stopped %v after SIGTERM; want within 1 s", d)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s ignores SIGTERM while a command is in flight", name)
	}
}
