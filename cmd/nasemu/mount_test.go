package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nasemu/nasemu/fusefs"
	"github.com/nasemu/nasemu/internal/syncbuf"
)

// testSetup is a built-in setup with an array, for the end-to-end test.
const testSetup = "ds1817-raid5-hdd-smb-1g"

func TestMountUsage(t *testing.T) {
	mnt, backing := t.TempDir(), t.TempDir()
	inside := filepath.Join(mnt, "data")
	os.Mkdir(inside, 0o755)
	for _, tc := range []struct {
		args []string
		out  string
	}{
		{[]string{"mount"}, "want one MOUNTPOINT"},
		{[]string{"mount", "--backing", backing, mnt}, "--setup is required"},
		{[]string{"mount", "--setup", testSetup, mnt}, "--backing is required"},
		{[]string{"mount", "--setup", testSetup, "--backing", backing, "--time-scale", "0", mnt}, "must be positive and finite"},
		{[]string{"mount", "--setup", testSetup, "--backing", backing, filepath.Join(mnt, "missing")}, "does not exist"},
		{[]string{"mount", "--setup", testSetup, "--backing", backing, filepath.Join(backing)}, "must be separate"},
		{[]string{"mount", "--setup", testSetup, "--backing", inside, mnt}, "must be separate"},
		{[]string{"mount", "--setup", "no-such-setup", "--backing", backing, mnt}, "not a built-in setup"},
	} {
		var out bytes.Buffer
		if code := run(tc.args, &out, &out); code != 2 || !strings.Contains(out.String(), tc.out) {
			t.Errorf("nasemu %v: exit %d, output %q; want exit 2 and %q", tc.args, code, out.String(), tc.out)
		}
	}
}

func TestCtlUsage(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "none.sock")
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"ctl", "--socket", sock}, 2, "want a command"},
		{[]string{"ctl", "--socket", sock, "explode"}, 2, "unknown command"},
		{[]string{"ctl", "--socket", sock, "fail"}, 2, "takes the member number"},
		{[]string{"ctl", "--socket", sock, "fail", "x"}, 2, "want a member number"},
		{[]string{"ctl", "--socket", sock, "status", "extra"}, 2, "takes no argument"},
		{[]string{"ctl", "--socket", sock, "--format", "xml", "status"}, 2, "want table or json"},
		{[]string{"ctl", "--socket", sock, "status"}, 1, "control socket"},
	} {
		var out bytes.Buffer
		if code := run(tc.args, &out, &out); code != tc.code || !strings.Contains(out.String(), tc.out) {
			t.Errorf("nasemu %v: exit %d, output %q; want exit %d and %q", tc.args, code, out.String(), tc.code, tc.out)
		}
	}
}

// syncBuffer is a server's log that a test reads while the server runs.
type syncBuffer = syncbuf.Buffer

// requireFuse skips without FUSE, except in CI (CI=true), where it fails.
func requireFuse(t *testing.T) {
	t.Helper()
	_, devErr := os.Stat("/dev/fuse")
	_, fmErr := exec.LookPath("fusermount3")
	if devErr == nil && (fmErr == nil || os.Geteuid() == 0) {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("this CI host lacks FUSE (/dev/fuse, or fusermount3 from Debian package fuse3)")
	}
	t.Skip("no FUSE on this host")
}

// hostLacks skips a test that this host cannot run, except in CI
// (CI=true), where the host must run every test: there it fails.
func hostLacks(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s: CI must run every test", why)
	}
	t.Skip(why)
}

// TestMountAndControl mounts a built-in setup through the command, drives
// it with 'nasemu ctl', scrapes its metrics and stops it as a signal would.
func TestMountAndControl(t *testing.T) {
	requireFuse(t)
	mnt, backing := t.TempDir(), t.TempDir()
	sock := filepath.Join(t.TempDir(), "ctl.sock")
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- mount(ctx, []string{"--setup", testSetup, "--backing", backing, "--socket", sock, "--metrics", "127.0.0.1:0", mnt}, &stderr)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		if fusefs.Mounted(mnt) {
			t.Errorf("%s still mounted", mnt)
			syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stderr.String(), "control socket") {
		if time.Now().After(deadline) {
			t.Fatalf("mount did not come up: %s", stderr.String())
		}
		select {
		case err := <-done:
			t.Fatalf("mount ended: %v; %s", err, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}

	data := bytes.Repeat([]byte("nasemu "), 100_000)
	if err := os.WriteFile(filepath.Join(mnt, "f"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	ctl := func(args ...string) string {
		t.Helper()
		var out bytes.Buffer
		if code := run(append([]string{"ctl", "--socket", sock}, args...), &out, &out); code != 0 {
			t.Fatalf("nasemu ctl %v: exit %d: %s", args, code, out.String())
		}
		return out.String()
	}
	if out := ctl("status"); !strings.Contains(out, "optimal") {
		t.Errorf("status: %s", out)
	}
	if out := ctl("fail", "1"); !strings.Contains(out, "degraded") {
		t.Errorf("fail 1: %s", out)
	}
	if got, err := os.ReadFile(filepath.Join(mnt, "f")); err != nil || !bytes.Equal(got, data) {
		t.Errorf("file on a degraded array: err %v, equal %v", err, bytes.Equal(got, data))
	}
	if out := ctl("replace", "1"); !strings.Contains(out, "rebuilding") {
		t.Errorf("replace 1: %s", out)
	}
	var resp fusefs.ControlResponse
	if err := json.Unmarshal([]byte(ctl("--format", "json", "status")), &resp); err != nil || !resp.OK || resp.Status.Arrays[0].State != "rebuilding" {
		t.Errorf("json status: %+v, %v", resp, err)
	}

	// A fault injected through the control socket reaches the client as
	// EIO, once (count=1); the next read is served.
	readDirect := func() ([]byte, error) {
		fh, err := os.OpenFile(filepath.Join(mnt, "f"), os.O_RDONLY|syscall.O_DIRECT, 0)
		if err != nil {
			return nil, err
		}
		defer fh.Close()
		return io.ReadAll(fh)
	}
	if out := ctl("fault", "read count=1 fail"); !strings.Contains(out, "share  read count=1 fail  0") {
		t.Errorf("fault: %s", out)
	}
	if _, err := readDirect(); !errors.Is(err, syscall.EIO) {
		t.Errorf("read meeting an injected fault: %v, want EIO", err)
	}
	if got, err := readDirect(); err != nil || !bytes.Equal(got, data) {
		t.Errorf("the read after the injected fault: err %v, equal %v", err, bytes.Equal(got, data))
	}
	if out := ctl("fault", "list"); !regexp.MustCompile(`share\s+read count=1 fail\s+\d+\s+1\n`).MatchString(out) {
		t.Errorf("fault list after the fault fired: %s", out)
	}
	if out := ctl("fault", "clear"); !strings.Contains(out, "no fault injected") {
		t.Errorf("fault clear: %s", out)
	}

	addr := regexp.MustCompile(`metrics at (http://\S+)`).FindStringSubmatch(stderr.String())
	if addr == nil {
		t.Fatalf("metrics address not announced: %s", stderr.String())
	}
	res, err := http.Get(addr[1])
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{`nasemu_fs_ops_total{op="write"}`, `nasemu_raid_state{array="raid5",device=`, `nasemu_raid_rebuild_progress_ratio`, `nasemu_fs_latency_seconds_bucket`, `nasemu_fs_in_flight`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("metrics lack %s", want)
		}
	}

	// A power loss undoes what the setup's NAS has not committed: g,
	// created after the fsync of f committed the journal (and well within
	// the setup's 5 s commit interval), is gone; f stays.
	if fh, err := os.Open(filepath.Join(mnt, "f")); err != nil || fh.Sync() != nil {
		t.Fatalf("fsync f: %v", err)
	} else {
		fh.Close()
	}
	if err := os.WriteFile(filepath.Join(mnt, "g"), []byte("unsynced"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := ctl("status"); !strings.Contains(out, "1 namespace changes not yet committed") {
		t.Errorf("status before the power loss: %s", out)
	}
	if out := ctl("power-loss"); !strings.Contains(out, "1 namespace changes since the last journal commit undone") {
		t.Errorf("power-loss: %s", out)
	}
	if _, err := os.Stat(filepath.Join(mnt, "g")); !os.IsNotExist(err) {
		t.Errorf("g after the power loss: %v, want it gone", err)
	}

	// A second mount on the busy mountpoint is refused.
	var out bytes.Buffer
	if code := run([]string{"mount", "--setup", testSetup, "--backing", t.TempDir(), mnt}, &out, &out); code != 2 || !strings.Contains(out.String(), "busy") {
		t.Errorf("mount on a busy mountpoint: exit %d, %s", code, out.String())
	}

	cancel()
	if err := <-done; err != nil {
		t.Errorf("mount: %v", err)
	}
	done <- nil // for the cleanup
	if fusefs.Mounted(mnt) {
		t.Error("still mounted after the signal")
	}
	if got, err := os.ReadFile(filepath.Join(backing, "f")); err != nil || !bytes.Equal(got, data) {
		t.Errorf("backing file after unmount: err %v, equal %v", err, bytes.Equal(got, data))
	}
	if _, err := os.Stat(filepath.Join(backing, fusefs.StateFile)); err != nil {
		t.Errorf("allocator state not saved: %v", err)
	}
}
