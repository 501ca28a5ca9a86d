package main

import (
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNasPublic: 'nasemu nas' serves SMB to other hosts only when asked
// (--smb-public), as a service in a container must; then smbd answers on
// every interface, a client reaches the share by the host's own network
// address, and /healthz and /metrics (--metrics) say the share is up.
func TestNasPublic(t *testing.T) {
	needSamba(t)
	// A port free on every interface.
	l, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	any := net.JoinHostPort("0.0.0.0", port)

	args := nasArgs(t, "ds1817-raid5-hdd-smb-1g", any)
	var out, errs bytes.Buffer
	if code := run(append([]string{"nas"}, args...), &out, &errs); code != 2 || !strings.Contains(errs.String(), "not a loopback address") {
		t.Errorf("--smb %s without --smb-public: exit %d, %q; want a usage error", any, code, errs.String())
	}
	errs.Reset()
	if code := run(append([]string{"nas", "--metrics", "0.0.0.0:0"}, args...), &out, &errs); code != 2 || !strings.Contains(errs.String(), "--metrics-public") {
		t.Errorf("--metrics on every interface without --metrics-public: exit %d, %q; want a usage error", code, errs.String())
	}

	info := startNas(t, append(args, "--smb-public", "--metrics", "127.0.0.1:0"))
	if info.SMB.Addr() != any || !strings.Contains(info.URL, "@127.0.0.1:"+port+"/") {
		t.Errorf("smbd listens on %s, target %s; want %s and a loopback target", info.SMB.Addr(), info.URL, any)
	}
	conf, err := os.ReadFile(info.SMB.ConfigFile())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(conf), "bind interfaces only") {
		t.Errorf("smb.conf binds to interfaces when serving every interface:\n%s", conf)
	}

	// The host's own network address reaches the share (loopback when
	// the host has no other address).
	host := "127.0.0.1"
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if ip, ok := a.(*net.IPNet); ok && ip.IP.To4() != nil && !ip.IP.IsLoopback() {
				host = ip.IP.String()
				break
			}
		}
	}
	t.Logf("client connects to %s:%s", host, port)
	auth := filepath.Join(t.TempDir(), "auth")
	os.WriteFile(auth, []byte("username = root\npassword = "+testSMBPassword+"\n"), 0o600)
	src := filepath.Join(t.TempDir(), "src.bin")
	data := bytes.Repeat([]byte("public "), 100000)
	os.WriteFile(src, data, 0o644)
	c := exec.Command("smbclient", "-s", info.SMB.ConfigFile(), "-A", auth, "-p", port, "-m", "SMB3", "//"+host+"/nas", "-c", "put "+src+" f.bin")
	if b, err := c.CombinedOutput(); err != nil {
		t.Fatalf("smbclient to %s: %v\n%s", host, err, b)
	}
	if b, _ := os.ReadFile(filepath.Join(args[3], "f.bin")); !bytes.Equal(b, data) {
		t.Errorf("the backing directory holds %d bytes, want the %d put", len(b), len(data))
	}

	get := func(path string) (int, string) {
		resp, err := http.Get("http://" + info.Metrics + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/healthz"); code != http.StatusOK || !strings.HasPrefix(body, "ok: mounted at "+info.Mountpoint) {
		t.Errorf("/healthz: %d %q", code, body)
	}
	if code, body := get("/metrics"); code != http.StatusOK || !strings.Contains(body, "nasemu_") {
		t.Errorf("/metrics: %d, %d bytes", code, len(body))
	}
	if kv := info.readyLines(); kv[len(kv)-1] != [2]string{"metrics", info.Metrics} {
		t.Errorf("ready file lines %q name no metrics address", kv)
	}

	// When smbd is gone the share is down (the handler nas serves, asked
	// while smbd has exited: nas itself stops at once then).
	rec := httptest.NewRecorder()
	healthHandler(info.FS, func() error { return errors.New("smbd has exited") }).ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(rec.Body.String(), "smbd") {
		t.Errorf("/healthz when smbd has exited: %d %q", rec.Code, rec.Body.String())
	}
}
