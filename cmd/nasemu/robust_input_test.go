package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nasemu/nasemu/fusefs"
)

// TestRobustTimeScale holds issue 20's --time-scale values: NaN, ±Inf,
// 1e300, 0 and negative scales turned pacing off (or were meaningless)
// without a word; each is bad usage (exit 2, naming the flag) on every
// command that paces, before anything is mounted or served.
func TestRobustTimeScale(t *testing.T) {
	mnt, backing, lun := t.TempDir(), t.TempDir(), filepath.Join(t.TempDir(), "lun.img")
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte("secret-password\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	commands := map[string][]string{
		"mount": {"mount", "--setup", testSetup, "--backing", backing, mnt},
		"nas":   {"nas", "--setup", testSetup, "--backing", backing, "--smb", "127.0.0.1:1", "--password-file", pw},
		"iscsi": {"iscsi", "--setup", testSetup, "--backing", lun, "--listen", "127.0.0.1:0"},
	}
	for name, args := range commands {
		for _, v := range []string{"NaN", "Inf", "-Inf", "1e300", "0", "-1", "0.001", "5000"} {
			var out bytes.Buffer
			a := append(append([]string(nil), args...), "--time-scale", v)
			if code := run(a, &out, &out); code != 2 || !strings.Contains(out.String(), "--time-scale") {
				t.Errorf("nasemu %s --time-scale %s: exit %d, output %q; want exit 2 and a message on --time-scale", name, v, code, out.String())
			}
		}
	}
	if _, err := os.Stat(lun); err == nil {
		t.Errorf("iscsi created %s before refusing its --time-scale", lun)
	}
}

// TestRobustSetupFileSize holds the cap on setup files: a setup file past
// the cap (1 MiB; here a sparse 100 MB file) is refused as bad input
// without being read whole.
func TestRobustSetupFileSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge.yaml")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("drives: {model: wd-red-1tb, count: 4}\nraid: {level: raid5}\n# "); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(100e6); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var out bytes.Buffer
	start := time.Now()
	code := run([]string{"bench", "--target", "sim:" + path, "--suite", "cdm"}, &out, &out)
	if code != 2 || !strings.Contains(out.String(), "huge.yaml") || !strings.Contains(out.String(), "the most a setup file may hold") {
		t.Errorf("bench on a 100 MB setup: exit %d, output %q; want exit 2 and the size cap", code, out.String())
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("refusing a 100 MB setup took %v", d)
	}
}

// TestRobustStateBase holds issue 20's attack on the state base: a base
// that another local user pre-created (their directory, with a symlink to
// a file of root's where nasemu writes) is refused before anything is
// mounted, and the file is untouched; with a base of its own, a mount
// makes a private state directory of a fresh name and removes it at the
// end.
func TestRobustStateBase(t *testing.T) {
	requireFuse(t)
	if os.Geteuid() != 0 {
		hostLacks(t, "chown to another user needs root")
	}
	target := filepath.Join(t.TempDir(), "victim")
	const content = "root's file\n"
	if err := os.WriteFile(target, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	runtime := t.TempDir()
	t.Setenv("XDG_RUNTIME_DIR", runtime)
	hostile := filepath.Join(runtime, "nasemu")
	if err := os.Mkdir(hostile, 0o777); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ctl.sock", "mount-" + strconv.Itoa(os.Getpid())} {
		if err := os.Symlink(target, filepath.Join(hostile, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Lchown(hostile, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	mnt, backing := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var stderr syncBuffer
	err := mount(ctx, []string{"--setup", testSetup, "--backing", backing, mnt}, &stderr)
	if err == nil || !strings.Contains(err.Error(), "belongs to uid 65534") {
		t.Errorf("mount with another user's state base: %v; want it refused", err)
	}
	if fusefs.Mounted(mnt) {
		syscall.Unmount(mnt, syscall.MNT_DETACH)
		t.Errorf("%s was mounted", mnt)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != content {
		t.Errorf("the symlink's target was changed: %q, %v", b, err)
	}

	// A base of its own: a fresh private directory, gone after the run.
	if err := os.RemoveAll(hostile); err != nil {
		t.Fatal(err)
	}
	ctx, cancel = context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- mount(ctx, []string{"--setup", testSetup, "--backing", backing, mnt}, &stderr)
	}()
	var dirs []string
	for deadline := time.Now().Add(10 * time.Second); len(dirs) == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		dirs, _ = filepath.Glob(filepath.Join(hostile, "mount-*", "ctl.sock"))
	}
	if len(dirs) != 1 {
		t.Errorf("state directories: %q; want one", dirs)
	} else if st, err := os.Lstat(filepath.Dir(dirs[0])); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("state directory %s: %v, %v; want mode 0700", filepath.Dir(dirs[0]), st.Mode(), err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("mount: %v\n%s", err, stderr.String())
	}
	if left, _ := filepath.Glob(filepath.Join(hostile, "mount-*")); len(left) != 0 {
		t.Errorf("state directories left: %q", left)
	}
}

// ctlClientEnv makes TestRobustCtlClient act as a 'nasemu ctl' client of
// the socket it names (run as another user by TestRobustControlSocket).
const ctlClientEnv = "NASEMU_TEST_CTL_CLIENT"

// TestRobustCtlClient is not a test of its own: run with ctlClientEnv
// set, it is the other user's 'nasemu ctl status'.
func TestRobustCtlClient(t *testing.T) {
	sock := os.Getenv(ctlClientEnv)
	if sock == "" {
		return
	}
	var out bytes.Buffer
	code := run([]string{"ctl", "--socket", sock, "status"}, &out, &out)
	os.Stdout.WriteString(out.String())
	os.Exit(code)
}

// TestRobustControlSocket holds issue 20's control socket points:
// --socket refuses a path that holds a file or a symlink (which it used to
// remove), the socket is 0600 under a umask of 0, another user who could
// reach it is refused by SO_PEERCRED, and --metrics on an address other
// hosts reach needs --metrics-public.
func TestRobustControlSocket(t *testing.T) {
	requireFuse(t)
	if os.Geteuid() != 0 {
		hostLacks(t, "acting as another user needs root")
	}
	mnt, backing := t.TempDir(), t.TempDir()
	dir := t.TempDir()
	file := filepath.Join(dir, "precious")
	if err := os.WriteFile(file, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{file, link} {
		var out bytes.Buffer
		if code := run([]string{"mount", "--setup", testSetup, "--backing", backing, "--socket", p, mnt}, &out, &out); code != 2 || !strings.Contains(out.String(), "not a socket") {
			t.Errorf("--socket %s: exit %d, %q; want exit 2, not a socket", p, code, out.String())
		}
		if st, err := os.Lstat(p); err != nil || st.Mode().Type() == os.ModeSocket {
			t.Errorf("%s was replaced: %v", p, err)
		}
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "keep" {
		t.Errorf("%s changed: %q, %v", file, b, err)
	}
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "example.com:9108"} {
		var out bytes.Buffer
		if code := run([]string{"mount", "--setup", testSetup, "--backing", backing, "--metrics", addr, mnt}, &out, &out); code != 2 || !strings.Contains(out.String(), "--metrics-public") {
			t.Errorf("--metrics %s: exit %d, %q; want exit 2 naming --metrics-public", addr, code, out.String())
		}
	}

	sock := filepath.Join(dir, "ctl.sock")
	old := syscall.Umask(0)
	ctx, cancel := context.WithCancel(context.Background())
	var stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- mount(ctx, []string{"--setup", testSetup, "--backing", backing, "--socket", sock, "--metrics", "0.0.0.0:0", "--metrics-public", mnt}, &stderr)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("mount: %v\n%s", err, stderr.String())
		}
	}()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(stderr.String(), "control socket"); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			syscall.Umask(old)
			t.Fatalf("mount did not come up: %s", stderr.String())
		}
	}
	syscall.Umask(old)
	if st, err := os.Lstat(sock); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("control socket under umask 0: %v, %v; want mode 0600", st.Mode(), err)
	}

	// Another user, given a way in (a socket and a directory opened up by
	// mistake), is refused by the emulator itself.
	bin := filepath.Join(t.TempDir(), "client")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Dir(bin), filepath.Dir(filepath.Dir(bin)), dir, filepath.Dir(dir)} {
		os.Chmod(d, 0o755)
	}
	os.Chmod(sock, 0o666)
	cmd := exec.Command(bin, "-test.run=^TestRobustCtlClient$")
	cmd.Env = append(os.Environ(), ctlClientEnv+"="+sock)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "permission denied: uid 65534") {
		t.Errorf("ctl status as uid 65534: %v, %s; want permission denied", err, out)
	}
	var status bytes.Buffer
	if code := run([]string{"ctl", "--socket", sock, "status"}, &status, &status); code != 0 {
		t.Errorf("ctl status as root: exit %d, %s", code, status.String())
	}
}

// TestRobustNonRootShareUser holds issue 20's point 7: 'nasemu nas
// --user U' serves a share to a user other than root (the FUSE mount is
// allow_other with default_permissions, and the state base lets U reach
// it), and the kernel checks U's access to each file: U creates files,
// which belong to U, reads a file of root's that all may read, and is
// denied one that only root may read.
func TestRobustNonRootShareUser(t *testing.T) {
	needSamba(t)
	const name = "nobody"
	u, err := user.Lookup(name)
	if err != nil {
		t.Fatalf("no user %s on this host: %v", name, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	addr := freePort(t)
	args := append(nasArgs(t, testSetup, addr), "--user", name)
	backing := args[3]
	if err := os.Chown(backing, uid, gid); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(backing, "secret"), []byte("root only\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(backing, "public"), []byte("for all\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	info := startNas(t, args)
	auth := filepath.Join(t.TempDir(), "auth")
	os.WriteFile(auth, []byte("username = "+name+"\npassword = "+testSMBPassword+"\n"), 0o600)
	_, port, _ := net.SplitHostPort(addr)
	src := filepath.Join(t.TempDir(), "up.txt")
	os.WriteFile(src, []byte("uploaded\n"), 0o644)
	got := t.TempDir()
	smbclient := func(cmds string) string {
		out, _ := exec.Command("smbclient", "-s", info.SMB.ConfigFile(), "-A", auth, "-p", port, "-m", "SMB3", "//127.0.0.1/nas", "-c", cmds).CombinedOutput()
		return string(out)
	}
	out := smbclient("put " + src + " up.txt; get public " + filepath.Join(got, "public"))
	if b, err := os.ReadFile(filepath.Join(got, "public")); err != nil || string(b) != "for all\n" {
		t.Errorf("%s reading a file all may read: %q, %v\n%s", name, b, err, out)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(backing, "up.txt"), &st); err != nil || int(st.Uid) != uid {
		t.Errorf("a file %s put: %v, owner %d; want it there, owned by uid %d\n%s", name, err, st.Uid, uid, out)
	}
	out = smbclient("get secret " + filepath.Join(got, "secret"))
	if !strings.Contains(out, "NT_STATUS_ACCESS_DENIED") {
		t.Errorf("%s reading root's 0600 file: want access denied, got\n%s", name, out)
	}
	if _, err := os.Stat(filepath.Join(got, "secret")); err == nil {
		if b, _ := os.ReadFile(filepath.Join(got, "secret")); len(b) > 0 {
			t.Errorf("%s read root's 0600 file: %q", name, b)
		}
	}
}

// TestRobustShareKeepsDOSAttributes holds the smb.conf part of issue
// 20's point 10: where the backing filesystem keeps extended attributes,
// the share keeps what a stock smbd keeps in them (DOS attributes, EAs,
// NT ACLs) instead of turning them off: a hidden attribute a client sets
// is kept, in the backing file's user.DOSATTRIB.
func TestRobustShareKeepsDOSAttributes(t *testing.T) {
	needSamba(t)
	addr := freePort(t)
	args := nasArgs(t, testSetup, addr)
	backing := args[3]
	if _, err := syscall.Getxattr(backing, "user.nasemu-probe", nil); err != syscall.ENODATA {
		hostLacks(t, fmt.Sprintf("the backing filesystem keeps no user xattrs (%v)", err))
	}
	info := startNas(t, args)
	auth := filepath.Join(t.TempDir(), "auth")
	os.WriteFile(auth, []byte("username = root\npassword = "+testSMBPassword+"\n"), 0o600)
	_, port, _ := net.SplitHostPort(addr)
	src := filepath.Join(t.TempDir(), "f.txt")
	os.WriteFile(src, []byte("dos\n"), 0o644)
	out, _ := exec.Command("smbclient", "-s", info.SMB.ConfigFile(), "-A", auth, "-p", port, "-m", "SMB3", "//127.0.0.1/nas",
		"-c", "put "+src+" f.txt; setmode f.txt +h; allinfo f.txt").CombinedOutput()
	if !regexp.MustCompile(`attributes: [A-Z]*H`).Match(out) {
		t.Errorf("the hidden attribute was not kept:\n%s", out)
	}
	if _, err := syscall.Getxattr(filepath.Join(backing, "f.txt"), "user.DOSATTRIB", nil); err != nil {
		t.Errorf("no user.DOSATTRIB on the backing file: %v\n%s", err, out)
	}
}
