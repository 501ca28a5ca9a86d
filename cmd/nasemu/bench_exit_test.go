package main

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// refusedAddr returns a loopback address where nothing listens.
func refusedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// TestBenchExitStatus checks one meaning per exit status across targets:
// a refused connection is a failed run (1) on smb:// and iscsi:// alike,
// a target without room for the job is bad input (2) and writes nothing.
func TestBenchExitStatus(t *testing.T) {
	t.Setenv("NASEMU_SMB_PASSWORD", "x")
	addr := refusedAddr(t)
	dir := t.TempDir()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	tooBig := filepath.Join(t.TempDir(), "big.fio")
	free := int64(st.Bavail) * st.Bsize
	if err := os.WriteFile(tooBig, []byte("[big]\nrw=read\nsize="+itoa64(free+1<<30)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want int
		msg  string
	}{
		{[]string{"--target", "smb://u@" + addr + "/share", "--suite", "cdm"}, 1, "connection refused"},
		{[]string{"--target", "iscsi://" + addr + "/iqn.2026-01.org.nasemu:lun/0", "--suite", "cdm"}, 1, "connection refused"},
		{[]string{"--target", dir, "--job", tooBig}, 2, "short"},
		{[]string{"--target", "nosuch:x", "--suite", "cdm"}, 2, "unknown target scheme"},
	} {
		var stdout, stderr bytes.Buffer
		got := run(append([]string{"bench", "--quiet"}, tc.args...), &stdout, &stderr)
		if got != tc.want || !strings.Contains(stderr.String(), tc.msg) {
			t.Errorf("bench %v: exit %d, stderr %q; want %d and %q", tc.args, got, stderr.String(), tc.want, tc.msg)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("the run that did not fit left %v", ents)
	}
	var stderr bytes.Buffer
	if run([]string{"bench", "--help"}, &bytes.Buffer{}, &stderr); !strings.Contains(stderr.String(), "Exit status") {
		t.Errorf("bench --help does not document the exit status:\n%s", stderr.String())
	}
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

// TestBenchInterrupt interrupts runs on a path target — one while it lays
// out its file, one while a file-by-file upload creates and writes its
// files in the timed phase — each exits 1 and leaves nothing behind.
func TestBenchInterrupt(t *testing.T) {
	if os.Getenv("NASEMU_BENCH_CHILD") != "" {
		os.Exit(run(strings.Split(os.Getenv("NASEMU_BENCH_CHILD"), "\n"), os.Stdout, os.Stderr))
	}
	for _, tc := range []struct {
		name string
		args []string
		file string // interrupt once it has data
	}{
		{"layout", []string{"--suite", "cdm", "--size", "8GiB", "--runtime", "30s"}, "CrystalDiskMark.tmp"},
		{"upload", []string{"--job", "-"}, "up/3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestBenchInterrupt$")
			cmd.Env = append(os.Environ(), "NASEMU_BENCH_CHILD="+strings.Join(append([]string{"bench", "--quiet", "--target", dir}, tc.args...), "\n"))
			// 4096 files of 1 MiB, each created, written and closed in turn.
			cmd.Stdin = strings.NewReader("[up]\nrw=write\nbs=64k\nnrfiles=4096\nfilesize=1m\nopenfiles=1\nfile_service_type=sequential\nfilename_format=up/$filenum\n")
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, tc.file)
			deadline := time.Now().Add(20 * time.Second)
			for {
				if fi, err := os.Stat(file); err == nil && fi.Size() > 0 {
					break
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					cmd.Wait()
					t.Fatalf("the run never wrote %s: %s", tc.file, stderr.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
			cmd.Process.Signal(syscall.SIGINT)
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 1 {
				t.Errorf("interrupted run: %v, want exit status 1; stderr:\n%s", err, stderr.String())
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("the interrupted run left %v behind; stderr:\n%s", ents, stderr.String())
			}
		})
	}
}
