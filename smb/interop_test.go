package smb

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nasemu/nasemu/bench"
	"github.com/nasemu/nasemu/models"
)

// smbclient runs smbclient against srv with the credentials in a file (not
// on the command line) and returns its output.
func smbclient(t *testing.T, srv *Samba, password string, args ...string) (string, error) {
	t.Helper()
	bin, err := exec.LookPath("smbclient")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("smbclient not installed in CI (Debian package smbclient)")
		}
		t.Skip("smbclient not installed")
	}
	auth := filepath.Join(t.TempDir(), "auth")
	if err := os.WriteFile(auth, []byte("username = "+srv.User()+"\npassword = "+password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(srv.Addr())
	full := append([]string{"-s", srv.ConfigFile(), "-A", auth, "-p", port, "-m", "SMB3"}, args...)
	for i, a := range full {
		full[i] = strings.ReplaceAll(a, "HOST", host)
	}
	cmd := exec.Command(bin, full...)
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestSmbclientInterop: smbclient lists, puts and gets on the test share;
// a file the bench target laid out reads back in smbclient byte for byte
// and the other way round; stopping the server leaves none of its
// processes.
func TestSmbclientInterop(t *testing.T) {
	srv := startSamba(t)
	out, err := smbclient(t, srv.Samba, testPassword, "-L", "//HOST")
	if err != nil || !strings.Contains(out, srv.Share()) {
		t.Fatalf("smbclient -L: %v\n%s", err, out)
	}
	// smbclient put; read through the bench target.
	local := filepath.Join(t.TempDir(), "up.bin")
	data := bytes.Repeat([]byte("nasemu-interop-"), 70000)
	if err := os.WriteFile(local, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := smbclient(t, srv.Samba, testPassword, "//HOST/"+srv.Share(), "-c", "put "+local+" up.bin"); err != nil {
		t.Fatalf("smbclient put: %v\n%s", err, out)
	}
	if got, err := os.ReadFile(filepath.Join(srv.dir, "up.bin")); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("put: the share holds %d bytes (%v), want %d", len(got), err, len(data))
	}
	tg := openTarget(t, srv.urlWithPassword(""))
	f, _, err := tg.Open(0, "up.bin", int64(len(data)), bench.OpenFlags{})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len(data))
	if _, err := f.Do(0, models.Read, 0, int64(len(buf)), buf); err != nil || !bytes.Equal(buf, data) {
		t.Errorf("the target read back other bytes than smbclient put (%v)", err)
	}
	f.Close(0)
	// The target lays out a file; smbclient gets it.
	if _, err := tg.Layout("dir/laid.bin", 3<<20+123, true); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "laid.bin")
	if out, err := smbclient(t, srv.Samba, testPassword, "//HOST/"+srv.Share(), "-c", "get dir/laid.bin "+dst); err != nil {
		t.Fatalf("smbclient get: %v\n%s", err, out)
	}
	want, _ := os.ReadFile(filepath.Join(srv.dir, "dir", "laid.bin"))
	if got, err := os.ReadFile(dst); err != nil || len(got) != 3<<20+123 || !bytes.Equal(got, want) {
		t.Errorf("get: %d bytes (%v), want the %d the target laid out", len(got), err, 3<<20+123)
	}
	// Wrong password: smbclient is refused too (no guest fallback).
	if out, err := smbclient(t, srv.Samba, "not-"+testPassword, "//HOST/"+srv.Share(), "-c", "ls"); err == nil || !strings.Contains(out, "NT_STATUS_LOGON_FAILURE") {
		t.Errorf("smbclient with a wrong password: %v\n%s", err, out)
	}
	// Stop: smbd, its per-connection children and the RPC helpers that
	// -L started are all gone.
	tg.Close()
	pgid := srv.Pid()
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if groupAlive(pgid) {
		t.Errorf("processes of smbd's group %d still run after Stop", pgid)
	}
	ps, _ := exec.Command("ps", "-eo", "pid,stat,args").Output()
	for _, l := range strings.Split(string(ps), "\n") {
		if strings.Contains(l, srv.ConfigFile()) && !strings.Contains(l, " Z") {
			t.Errorf("still running after Stop: %s", l)
		}
	}
	if c, err := net.DialTimeout("tcp", srv.Addr(), time.Second); err == nil {
		c.Close()
		t.Errorf("%s still accepts connections after Stop", srv.Addr())
	}
}

// TestSambaConf: the generated configuration binds to loopback only,
// keeps all state in the private directory and has the settings that
// go-smb2 and a FUSE share need.
func TestSambaConf(t *testing.T) {
	conf := SambaConf(SambaConfig{Dir: "/run/x", Path: "/srv/share", Password: "p"}, "127.0.0.1:4450")
	for _, want := range []string{
		"interfaces = 127.0.0.1\n", "bind interfaces only = yes\n", "smb ports = 4450\n", "server role = standalone server\n",
		"map to guest = Never\n", "guest ok = no\n", "server min protocol = SMB2_02\n", "server max protocol = SMB3_11\n",
		"server signing = auto\n", "strict sync = yes\n", "case sensitive = yes\n",
		"passdb backend = tdbsam:/run/x/private/passdb.tdb\n", "lock directory = /run/x/lock\n", "pid directory = /run/x/run\n",
		"state directory = /run/x/state\n", "cache directory = /run/x/cache\n", "log file = /run/x/log/smbd.log\n",
		"path = /srv/share\n", "valid users = root\n",
	} {
		if !strings.Contains(conf, want) {
			t.Errorf("smb.conf lacks %q", want)
		}
	}
	if strings.Contains(conf, "= p\n") {
		t.Error("the password is in smb.conf")
	}
	if strings.Contains(conf, "aio") {
		t.Error("asynchronous I/O is off by default")
	}
	conf = SambaConf(SambaConfig{Dir: "/run/x", Path: "/srv/share", Password: "p", SyncIO: true}, "127.0.0.1:4450")
	for _, want := range []string{"aio read size = 0\n", "aio write size = 0\n", "strict sync = no\n"} {
		if !strings.Contains(conf, want) {
			t.Errorf("smb.conf with SyncIO lacks %q", want)
		}
	}
	for _, bad := range []SambaConfig{
		{Dir: "/x", Path: "/y", Password: "p", Addr: "0.0.0.0:445"},
		{Dir: "/x", Path: "/y", Password: "p", Addr: "192.168.1.2:445"},
		{Dir: "/x", Path: "/y"},
		{Dir: "/x", Path: "/y\n[evil]", Password: "p"},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v: valid", bad)
		}
	}
}

// TestSambaPortTaken: a port another process listens on is an error, not
// a server that seems to start (the readiness probe would reach the
// other listener).
func TestSambaPortTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, err = StartSamba(SambaConfig{Dir: t.TempDir(), Path: t.TempDir(), Password: "p", Addr: l.Addr().String()})
	if err == nil || (!errors.Is(err, ErrNoSamba) && !strings.Contains(err.Error(), "cannot listen on "+l.Addr().String())) {
		t.Errorf("StartSamba on a taken port: %v", err)
	}
}
