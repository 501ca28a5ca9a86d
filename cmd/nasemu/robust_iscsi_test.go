package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/fusefs"
	"github.com/nasemu/nasemu/iscsi"
	"github.com/nasemu/nasemu/iscsi/scsi"
	"github.com/nasemu/nasemu/models/fault"
	"github.com/nasemu/nasemu/serve"
)

// ctlRun runs 'nasemu ctl --socket sock ARGS...' and returns its output.
func ctlRun(t *testing.T, sock string, args ...string) (string, int) {
	t.Helper()
	var out bytes.Buffer
	code := run(append([]string{"ctl", "--socket", sock}, args...), &out, &out)
	return out.String(), code
}

// TestRobustISCSIPowerLoss is issue 20's first point for 'nasemu iscsi':
// 'nasemu ctl power-loss' drops every session, undoes the writes that
// neither SYNCHRONIZE CACHE nor FUA made durable, and the initiators that
// log in again (ours and libiscsi's) see only the durable data: an
// acknowledged SYNCHRONIZE CACHE's data is never lost. Each I_T nexus is
// told of the power on once, with a unit attention, and goes on.
func TestRobustISCSIPowerLoss(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "ctl.sock")
	addr, _ := startISCSI(t, "--setup", "ds1817-raid5-ssd-iscsi-1g", "--size", "64MiB", "--backing", filepath.Join(dir, "lun.img"), "--socket", sock)
	checkLUNPowerLoss(t, addr, iscsi.DefaultIQN, sock)
}

// TestRobustNasLUNPowerLoss: the same for the LUN of 'nasemu nas', whose
// control socket comes with --iscsi alone too.
func TestRobustNasLUNPowerLoss(t *testing.T) {
	lunFile := filepath.Join(t.TempDir(), "lun.img")
	info := startNas(t, []string{"--setup", "ds1817-raid5-hdd-smb-1g", "--iscsi", "127.0.0.1:0", "--lun", lunFile, "--lun-size", "8MiB"})
	checkLUNPowerLoss(t, info.ISCSI, info.IQN, filepath.Join(info.RunDir, "ctl.sock"))
}

// checkLUNPowerLoss writes, syncs and writes again through two sessions
// of the LUN at addr, has 'nasemu ctl' cut the power, and checks what the
// initiators see when they log in again.
func checkLUNPowerLoss(t *testing.T, addr, iqn, sock string) {
	inq := needLibiscsi(t)
	url := "iscsi://" + addr + "/" + iqn + "/0"
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dial := func() *iscsi.Session {
		s, err := iscsi.Dial(ctx, iscsi.SessionConfig{Addr: addr, Target: iqn})
		if err != nil {
			t.Fatalf("login: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	block := func(c byte) []byte { return bytes.Repeat([]byte{c}, 64<<10) }
	s := dial()
	if err := s.Write16(ctx, 0, 0, 512, block('s')); err != nil {
		t.Fatal(err)
	}
	if err := s.SyncCache(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Write16(ctx, 0, 128, 512, block('u')); err != nil { // acknowledged, never synced
		t.Fatal(err)
	}
	other := dial() // a second initiator, idle
	if out, err := exec.Command(inq, url).CombinedOutput(); err != nil || !strings.Contains(string(out), "Vendor:NASEMU") {
		t.Fatalf("iscsi-inq before the power loss: %v\n%s", err, out)
	}

	// libiscsi clears unit attentions with TEST UNIT READY when it
	// connects, and logs each one it sees.
	readcap := func() string {
		t.Helper()
		cmd := exec.Command(filepath.Join(filepath.Dir(inq), "iscsi-readcapacity16"), url)
		cmd.Env = append(os.Environ(), "LIBISCSI_DEBUG=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "LOGICAL BLOCK LENGTH IN BYTES:512") {
			t.Fatalf("iscsi-readcapacity16: %v\n%s", err, out)
		}
		return string(out)
	}
	const powerOnUA = "UNIT_ATTENTION(6) ASCQ:BUS_RESET(0x2900)"
	if out := readcap(); strings.Contains(out, "UNIT_ATTENTION") {
		t.Errorf("iscsi-readcapacity16 saw a unit attention before the power loss:\n%s", out)
	}

	// libiscsi's tools close their connection without logging out: wait
	// until the target has seen theirs go, so that the power loss drops
	// exactly the two sessions of this test.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		out, _ := ctlRun(t, sock, "status")
		if strings.Contains(out, " 2 sessions,") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ctl status: want the test's 2 sessions only:\n%s", out)
		}
	}
	out, code := ctlRun(t, sock, "power-loss")
	if code != 0 || !strings.Contains(out, "power lost: 64 KiB of unsynced writes undone, 2 iSCSI sessions dropped") {
		t.Fatalf("ctl power-loss: exit %d\n%s", code, out)
	}
	for i, sess := range []*iscsi.Session{s, other} {
		if err := sess.TestUnitReady(ctx, 0); err == nil {
			t.Errorf("session %d from before the power loss still answers", i)
		}
	}

	if out, err := exec.Command(inq, url).CombinedOutput(); err != nil || !strings.Contains(string(out), "Vendor:NASEMU") {
		t.Errorf("iscsi-inq after the power loss: %v\n%s", err, out)
	}
	// Each new I_T nexus (libiscsi picks a new ISID each run) is told
	// of the power on once.
	for range 2 {
		if out := readcap(); strings.Count(out, powerOnUA) != 1 {
			t.Errorf("iscsi-readcapacity16 after the power loss: want one %s, got\n%s", powerOnUA, out)
		}
	}
	s2 := dial()
	got := make([]byte, 256*512)
	if err := s2.Read16(ctx, 0, 0, 512, got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[:64<<10], block('s')) {
		t.Error("data made durable by SYNCHRONIZE CACHE was lost in the power loss")
	}
	if !bytes.Equal(got[64<<10:], make([]byte, 64<<10)) {
		t.Error("a write never synced survived the power loss")
	}
	// What is written and synced after the loss is kept, and a second loss
	// loses nothing more.
	if err := s2.Write16(ctx, 0, 128, 512, block('a')); err != nil {
		t.Fatal(err)
	}
	if err := s2.SyncCache(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if out, code := ctlRun(t, sock, "power-loss"); code != 0 || !strings.Contains(out, "power lost: 0 B of unsynced writes undone, 1 iSCSI sessions dropped") {
		t.Errorf("second power loss: exit %d\n%s", code, out)
	}
	s3 := dial()
	if err := s3.Read16(ctx, 0, 128, 512, got[:64<<10]); err != nil || !bytes.Equal(got[:64<<10], block('a')) {
		t.Errorf("data synced after the first power loss: %v, lost in the second", err)
	}
}

// TestRobustISCSIArrayFaults: 'nasemu ctl fail N' and 'replace N' act on
// the array of the setup 'nasemu iscsi' serves; the LUN goes on serving
// (degraded, then rebuilding) and 'ctl status' says so.
func TestRobustISCSIArrayFaults(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "ctl.sock")
	addr, _ := startISCSI(t, "--setup", "ds1817-raid5-ssd-iscsi-1g", "--size", "64MiB", "--backing", filepath.Join(dir, "lun.img"), "--socket", sock)
	if st, err := os.Lstat(sock); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the control socket: %v, mode %v; want 0600", err, st.Mode())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s := dialLUN(ctx, t, addr)
	data := bytes.Repeat([]byte("degraded but served "), 1<<16/20+1)[:1<<16]
	if err := s.Write16(ctx, 0, 0, 512, data); err != nil {
		t.Fatal(err)
	}
	state := func() serve.Response {
		out, code := ctlRun(t, sock, "--format", "json", "status")
		var resp serve.Response
		if err := json.Unmarshal([]byte(out), &resp); code != 0 || err != nil || resp.LUN == nil || len(resp.LUN.Arrays) == 0 {
			t.Fatalf("ctl status: exit %d, %v\n%s", code, err, out)
		}
		return resp
	}
	if st := state(); st.LUN.Arrays[0].State != "optimal" || st.LUN.Sessions != 1 || st.LUN.Capacity != 64<<20 {
		t.Errorf("status before any fault: %+v", *st.LUN)
	}
	if out, code := ctlRun(t, sock, "fail", "2"); code != 0 || !strings.Contains(out, "degraded") {
		t.Errorf("ctl fail 2: exit %d\n%s", code, out)
	}
	got := make([]byte, len(data))
	if err := s.Read16(ctx, 0, 0, 512, got); err != nil || !bytes.Equal(got, data) {
		t.Errorf("read from the degraded array: %v", err)
	}
	if err := s.SyncCache(ctx, 0); err != nil {
		t.Errorf("SYNCHRONIZE CACHE on the degraded array: %v", err)
	}
	if out, code := ctlRun(t, sock, "replace", "2"); code != 0 || !strings.Contains(out, "rebuilding") {
		t.Errorf("ctl replace 2: exit %d\n%s", code, out)
	}
	if st := state(); st.LUN.Arrays[0].State != "rebuilding" || st.LUN.Arrays[0].Rebuilding != 2 {
		t.Errorf("status after replace 2: %+v", st.LUN.Arrays[0])
	}
	if err := s.Read16(ctx, 0, 0, 512, got); err != nil || !bytes.Equal(got, data) {
		t.Errorf("read from the rebuilding array: %v", err)
	}
	if out, code := ctlRun(t, sock, "replace", "9"); code == 0 {
		t.Errorf("ctl replace 9 of a 4-member array succeeded:\n%s", out)
	}
	if out, code := ctlRun(t, sock, "bogus"); code != 2 {
		t.Errorf("ctl bogus: exit %d, want 2\n%s", code, out)
	}
}

// TestRobustISCSIArrayStateKept: with --state-dir, 'ctl fail N' and
// 'replace N' outlive a restart of 'nasemu iscsi', as a share's do: the
// array comes back degraded, then rebuilding, and the LUN's data is
// served throughout. A --state-dir that is not a directory, or holds a
// state the setup cannot have, is refused.
func TestRobustISCSIArrayStateKept(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "ctl.sock")
	args := []string{"--setup", "ds1817-raid5-ssd-iscsi-1g", "--size", "64MiB", "--backing", filepath.Join(dir, "lun.img"),
		"--socket", sock, "--state-dir", state}
	arrays := func() serve.LUNStatus {
		out, code := ctlRun(t, sock, "--format", "json", "status")
		var resp serve.Response
		if err := json.Unmarshal([]byte(out), &resp); code != 0 || err != nil || resp.LUN == nil || len(resp.LUN.Arrays) == 0 {
			t.Fatalf("ctl status: exit %d, %v\n%s", code, err, out)
		}
		return *resp.LUN
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	data := bytes.Repeat([]byte("kept across restarts "), 1<<16/21+1)[:1<<16]
	readBack := func(addr string) {
		t.Helper()
		s := dialLUN(ctx, t, addr)
		defer s.Close()
		got := make([]byte, len(data))
		if err := s.Read16(ctx, 0, 0, 512, got); err != nil || !bytes.Equal(got, data) {
			t.Errorf("reading the LUN back: %v", err)
		}
	}

	addr, _, stop := startISCSIStop(t, args...)
	s := dialLUN(ctx, t, addr)
	if err := s.Write16(ctx, 0, 0, 512, data); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(filepath.Join(state, emu.ArrayStateFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an optimal array left a saved state: %v", err)
	}
	if out, code := ctlRun(t, sock, "fail", "1"); code != 0 || !strings.Contains(out, "degraded") {
		t.Fatalf("ctl fail 1: exit %d\n%s", code, out)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	addr, _, stop = startISCSIStop(t, args...)
	if a := arrays().Arrays[0]; a.State != "degraded" || len(a.Failed) != 1 || a.Failed[0] != 1 {
		t.Errorf("after a restart the array is %s with %v failed, want degraded with member 1 failed", a.State, a.Failed)
	}
	readBack(addr)
	if out, code := ctlRun(t, sock, "replace", "1"); code != 0 || !strings.Contains(out, "rebuilding") {
		t.Fatalf("ctl replace 1: exit %d\n%s", code, out)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	addr, _, stop = startISCSIStop(t, args...)
	if a := arrays().Arrays[0]; a.State != "rebuilding" || a.Rebuilding != 1 {
		t.Errorf("after a restart mid-rebuild the array is %s rebuilding %d, want rebuilding member 1", a.State, a.Rebuilding)
	}
	readBack(addr)
	if err := stop(); err != nil {
		t.Fatal(err)
	}

	// Refused: a state directory that is a file, and a saved state of an
	// array the setup does not have.
	var out bytes.Buffer
	bad := append(slices.Clone(args[:len(args)-1]), filepath.Join(dir, "lun.img"))
	if code := run(append([]string{"iscsi", "--listen", "127.0.0.1:0"}, bad...), &out, &out); code != 2 || !strings.Contains(out.String(), "not a directory") {
		t.Errorf("--state-dir naming a file: exit %d, want 2\n%s", code, out.String())
	}
	saved := `{"arrays": [{"path": "0/7", "members": 9, "state": "degraded", "failed": [3]}]}`
	if err := os.WriteFile(filepath.Join(state, emu.ArrayStateFile), []byte(saved), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if code := run(append([]string{"iscsi", "--listen", "127.0.0.1:0"}, args...), &out, &out); code != 2 || !strings.Contains(out.String(), "this setup does not have") {
		t.Errorf("a saved state of another setup: exit %d, want 2\n%s", code, out.String())
	}
}

// TestRobustISCSIFaultInjection: 'nasemu ctl fault RULE' injects into the
// LUN's requests: a read of the range fails with MEDIUM ERROR sense as
// many times as the rule says, one outside it is served, 'fault list'
// counts what the rule chose and 'fault clear' ends it. Bad rules and one
// rule too many are refused with the reason.
func TestRobustISCSIFaultInjection(t *testing.T) {
	dir := t.TempDir()
	sock := filepath.Join(dir, "ctl.sock")
	addr, _ := startISCSI(t, "--setup", "ds1817-raid5-ssd-iscsi-1g", "--size", "64MiB", "--backing", filepath.Join(dir, "lun.img"), "--socket", sock)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s := dialLUN(ctx, t, addr)
	buf := make([]byte, 4096)
	if out, code := ctlRun(t, sock, "fault", "read", "range=0:1MiB", "count=2", "fail"); code != 0 || !strings.Contains(out, "lun    read range=0:1048576 count=2 fail") {
		t.Fatalf("ctl fault: exit %d\n%s", code, out)
	}
	for i := range 2 {
		var se *iscsi.StatusError
		if err := s.Read16(ctx, 0, 8, 512, buf); !errors.As(err, &se) {
			t.Errorf("read %d in the faulty range: %v, want a CHECK CONDITION", i, err)
		} else if k, asc, _ := se.Result.SenseKey(); k != scsi.KeyMediumError || asc != 0x11 {
			t.Errorf("read %d in the faulty range: %v, want MEDIUM ERROR, UNRECOVERED READ ERROR", i, err)
		}
	}
	if err := s.Read16(ctx, 0, 8, 512, buf); err != nil {
		t.Errorf("the read after count=2 faults: %v", err)
	}
	if err := s.Read16(ctx, 0, 4096, 512, buf); err != nil {
		t.Errorf("a read outside the faulty range: %v", err)
	}
	out, code := ctlRun(t, sock, "--format", "json", "fault", "list")
	var resp serve.Response
	if err := json.Unmarshal([]byte(out), &resp); code != 0 || err != nil || len(resp.Faults) != 1 || resp.Faults[0].Chosen != 2 || resp.Faults[0].Seen != 2 {
		t.Errorf("fault list: exit %d, %v\n%s", code, err, out)
	}
	if out, code := ctlRun(t, sock, "fault", "clear"); code != 0 || !strings.Contains(out, "no fault injected") {
		t.Errorf("fault clear: exit %d\n%s", code, out)
	}

	// Refused, by the command and by the emulator: a bad word, a rule
	// that does nothing, a missing rule, and a rule past the bound.
	for _, bad := range [][]string{{"fault", "read range=1MiB fail"}, {"fault", "read"}, {"fault"}, {"fault", "raed fail"}} {
		if out, code := ctlRun(t, sock, bad...); code != 2 {
			t.Errorf("ctl %q: exit %d, want 2\n%s", bad, code, out)
		}
	}
	var raw serve.Response
	if err := fusefs.CallInto(sock, fusefs.ControlRequest{Cmd: "fault", Fault: "raed fail"}, &raw); err != nil || raw.OK || !strings.Contains(raw.Error, `"raed": not an operation`) {
		t.Errorf("a bad rule sent to the socket: %v, %+v", err, raw)
	}
	for i := range fault.MaxRules + 1 {
		err := fusefs.CallInto(sock, fusefs.ControlRequest{Cmd: "fault", Fault: fmt.Sprintf("write range=%d: delay=1ms", i)}, &raw)
		if err != nil || raw.OK != (i < fault.MaxRules) {
			t.Fatalf("rule %d: %v, %+v", i, err, raw)
		}
	}
	if !strings.Contains(raw.Error, "at most 64") {
		t.Errorf("a rule past the bound: %q", raw.Error)
	}
}

// dialLUN logs in to the default target at addr; cleanup logs out.
func dialLUN(ctx context.Context, t *testing.T, addr string) *iscsi.Session {
	t.Helper()
	s, err := iscsi.Dial(ctx, iscsi.SessionConfig{Addr: addr, Target: iscsi.DefaultIQN})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestRobustNasLUNArrayStateKept: 'nasemu nas' serving only a LUN keeps a
// failed drive failed across a restart when given --state-dir, as
// 'nasemu iscsi' does; with a share, --state-dir is refused (the backing
// directory keeps the state).
func TestRobustNasLUNArrayStateKept(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	if err := os.Mkdir(state, 0o700); err != nil {
		t.Fatal(err)
	}
	args := []string{"--setup", "ds1817-raid5-hdd-smb-1g", "--iscsi", "127.0.0.1:0", "--lun", filepath.Join(dir, "lun.img"),
		"--lun-size", "8MiB", "--state-dir", state}
	start := func() (nasInfo, func()) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		infos := make(chan nasInfo, 1)
		done := make(chan error, 1)
		stderr := &lockedBuffer{}
		go func() { done <- nas(ctx, args, stderr, func(i nasInfo) { infos <- i }) }()
		stop := func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("nas: %v\n%s", err, stderr)
			}
		}
		select {
		case info := <-infos:
			return info, stop
		case err := <-done:
			t.Fatalf("nas %v: %v\n%s", args, err, stderr)
		case <-time.After(30 * time.Second):
			stop()
			t.Fatal("nas does not start")
		}
		return nasInfo{}, nil
	}
	status := func(sock string) serve.Response {
		t.Helper()
		out, code := ctlRun(t, sock, "--format", "json", "status")
		var resp serve.Response
		if err := json.Unmarshal([]byte(out), &resp); code != 0 || err != nil {
			t.Fatalf("ctl status: exit %d, %v\n%s", code, err, out)
		}
		return resp
	}
	degraded := func(resp serve.Response) bool {
		if resp.LUN == nil {
			return false
		}
		for _, a := range resp.LUN.Arrays {
			if a.State == "degraded" && slices.Equal(a.Failed, []int{1}) {
				return true
			}
		}
		return false
	}

	info, stop := start()
	sock := filepath.Join(info.RunDir, "ctl.sock")
	if degraded(status(sock)) {
		t.Fatal("a fresh array is degraded")
	}
	if out, code := ctlRun(t, sock, "fail", "1"); code != 0 || !strings.Contains(out, "degraded") {
		t.Fatalf("ctl fail 1: exit %d\n%s", code, out)
	}
	stop()
	info, stop = start()
	if resp := status(filepath.Join(info.RunDir, "ctl.sock")); !degraded(resp) {
		t.Errorf("after a restart the LUN's arrays are %+v, want member 1 failed", resp.LUN)
	}
	stop()

	var out bytes.Buffer
	withShare := append(nasArgs(t, "ds1817-raid5-hdd-smb-1g", freePort(t)), "--state-dir", state)
	if err := nas(context.Background(), withShare, &out, nil); !strings.Contains(fmt.Sprint(err), "--state-dir is for a LUN") {
		t.Errorf("--state-dir with a share: %v, want it refused", err)
	}
}
