package main

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nasemu/nasemu/fusefs"
	"github.com/nasemu/nasemu/smb"
)

// mainEnv makes the test binary run the command named by its arguments
// instead of the tests: the lifecycle test kills a real nasemu process.
const mainEnv = "NASEMU_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// startNasemu runs nasemu ARGS in a process of its own, with the state
// directories under runtimeDir.
func startNasemu(t *testing.T, runtimeDir string, args ...string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), mainEnv+"=1", "XDG_RUNTIME_DIR="+runtimeDir)
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return cmd, &out
}

// waitReady waits for the ready file of process pid and returns its
// KEY=VALUE lines.
func waitReady(t *testing.T, path string, cmd *exec.Cmd, out *syncBuffer) map[string]string {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		kv := map[string]string{}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			k, v, _ := strings.Cut(l, "=")
			kv[k] = v
		}
		if kv["pid"] == strconv.Itoa(cmd.Process.Pid) {
			return kv
		}
	}
	t.Fatalf("no ready file from process %d: %s", cmd.Process.Pid, out.String())
	return nil
}

// After kill -9 of a mount, the same mount command works again: it
// removes the share the killed process left (every access to it fails
// with ENOTCONN) and that process's state directory, says so, and serves;
// 'nasemu umount' then stops it cleanly.
func TestMountAfterKill(t *testing.T) {
	requireFuse(t)
	runtimeDir, mnt, backing := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", runtimeDir) // for the umount run here
	ready := filepath.Join(t.TempDir(), "ready")
	args := []string{"mount", "--setup", testSetup, "--backing", backing, "--metrics", "127.0.0.1:0", "--ready-file", ready, mnt}
	t.Cleanup(func() {
		if fusefs.Mounted(mnt) {
			t.Errorf("%s still mounted", mnt)
			syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
	})

	first, out := startNasemu(t, runtimeDir, args...)
	kv := waitReady(t, ready, first, out)
	if kv["mountpoint"] != mnt || kv["socket"] == "" || kv["metrics"] == "" {
		t.Errorf("ready file %v", kv)
	}
	health := func() (int, string) {
		res, err := http.Get("http://" + kv["metrics"] + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, body := health(); code != 200 || !strings.Contains(body, "ok: mounted at "+mnt) || !strings.Contains(body, "optimal") {
		t.Errorf("/healthz: %d %q", code, body)
	}
	data := []byte("written before the kill")
	fh, err := os.Create(filepath.Join(mnt, "f"))
	if err == nil {
		_, err = fh.Write(data)
		err = errors.Join(err, fh.Sync(), fh.Close())
	}
	if err != nil {
		t.Fatal(err)
	}

	first.Process.Signal(syscall.SIGKILL)
	first.Wait()
	if _, err := os.Stat(mnt); !errors.Is(err, syscall.ENOTCONN) {
		t.Fatalf("after kill -9 the mountpoint answers %v, want ENOTCONN (the scenario this test is about)", err)
	}

	second, out := startNasemu(t, runtimeDir, args...)
	kv = waitReady(t, ready, second, out)
	for _, want := range []string{"held the share nasemu:", "unmounted it", "removed the state directory", "mount-" + strconv.Itoa(first.Process.Pid)} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the second mount does not say %q: %s", want, out.String())
		}
	}
	if got, err := os.ReadFile(filepath.Join(mnt, "f")); err != nil || !bytes.Equal(got, data) {
		t.Errorf("the synced file after the remount: %q, %v", got, err)
	}
	var ctlOut bytes.Buffer
	if code := run([]string{"ctl", "status"}, &ctlOut, &ctlOut); code != 0 || !strings.Contains(ctlOut.String(), "TB usable") {
		t.Errorf("ctl status finds the one live emulator: exit %d, %s", code, ctlOut.String())
	}

	var umountOut bytes.Buffer
	if code := run([]string{"umount", mnt}, &umountOut, &umountOut); code != 0 || !strings.Contains(umountOut.String(), "saved its state and exited") {
		t.Errorf("umount: exit %d, %s", code, umountOut.String())
	}
	if err := second.Wait(); err != nil {
		t.Errorf("the mount after umount: %v: %s", err, out.String())
	}
	if fusefs.Mounted(mnt) {
		t.Error("still mounted after umount")
	}
	if _, err := os.Stat(ready); !os.IsNotExist(err) {
		t.Errorf("the ready file outlives the mount: %v", err)
	}
	if _, err := os.Stat(filepath.Join(backing, fusefs.StateFile)); err != nil {
		t.Errorf("allocator state not saved: %v", err)
	}

	// umount also clears the share a killed emulator left.
	third, out := startNasemu(t, runtimeDir, args...)
	waitReady(t, ready, third, out)
	third.Process.Signal(syscall.SIGKILL)
	third.Wait()
	umountOut.Reset()
	if code := run([]string{"umount", mnt}, &umountOut, &umountOut); code != 0 || !strings.Contains(umountOut.String(), "of an emulator that had ended: unmounted it") {
		t.Errorf("umount of a killed emulator's share: exit %d, %s", code, umountOut.String())
	}
	if fusefs.Mounted(mnt) {
		t.Error("the killed emulator's share is still mounted after umount")
	}
}

// Mount refuses what would go wrong, and says precisely what.
func TestMountRefusals(t *testing.T) {
	mnt, backing := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(mnt, "precious"), []byte("x"), 0o644)
	for _, tc := range []struct {
		args []string
		out  string
	}{
		{[]string{"--backing", filepath.Join(backing, "missing"), mnt}, "does not exist"},
		{[]string{"--backing", filepath.Join(mnt, "precious"), t.TempDir()}, "not a directory"},
		{[]string{"--backing", backing, mnt}, "is not empty (precious...)"},
	} {
		var out bytes.Buffer
		args := append([]string{"mount", "--setup", testSetup}, tc.args...)
		if code := run(args, &out, &out); code != 2 || !strings.Contains(out.String(), tc.out) {
			t.Errorf("nasemu %v: exit %d, %q; want exit 2 and %q", args, code, out.String(), tc.out)
		}
	}
	var out bytes.Buffer
	if code := run([]string{"umount", mnt}, &out, &out); code != 2 || !strings.Contains(out.String(), "nothing is mounted there") {
		t.Errorf("umount of a plain directory: exit %d, %q", code, out.String())
	}
}

// The ready file appears whole, with the bench targets of a nas.
func TestReadyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ready")
	info := nasInfo{URL: "smb://root@127.0.0.1:4450/nas", ISCSI: "127.0.0.1:3260", IQN: "iqn.x:lun", RunDir: "/run/nasemu/nas-1"}
	if err := writeReadyFile(path, info.readyLines()); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	want := "pid=" + strconv.Itoa(os.Getpid()) + "\nsmb=smb://root@127.0.0.1:4450/nas\niscsi=iscsi://127.0.0.1:3260/iqn.x:lun/0\nsocket=/run/nasemu/nas-1/ctl.sock\n"
	if string(b) != want {
		t.Errorf("ready file %q, want %q", b, want)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".ready.*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if err := writeReadyFile(filepath.Join(t.TempDir(), "no-such-dir", "ready"), nil); err == nil || !strings.Contains(err.Error(), "--ready-file") {
		t.Errorf("a ready file in a missing directory: %v", err)
	}
}

// The share leaves nas's probe file out of its listing by the name smb's
// prober gives it.
func TestProbeNameUnlisted(t *testing.T) {
	if smb.ProbeName != fusefs.ProbePrefix {
		t.Errorf("smb.ProbeName %q, fusefs.ProbePrefix %q: the share would list the probe", smb.ProbeName, fusefs.ProbePrefix)
	}
}
