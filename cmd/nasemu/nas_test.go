package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nasemu/nasemu"
	"github.com/nasemu/nasemu/bench"
	"github.com/nasemu/nasemu/fusefs"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/smb"
)

// The SMB tests need smbd, smbclient and root (smbd runs as root). Outside
// CI they are skipped without them; in CI (CI=true) that is a failure: CI
// installs the Debian packages samba and smbclient and runs as root.
func needSamba(t *testing.T) {
	t.Helper()
	why := ""
	switch {
	case os.Geteuid() != 0:
		why = "smbd must run as root"
	default:
		for _, bin := range []string{"smbd", "smbclient", "smbpasswd"} {
			if _, err := exec.LookPath(bin); err != nil {
				if _, err := os.Stat("/usr/sbin/" + bin); err != nil {
					why = bin + " not installed (Debian packages samba, smbclient)"
				}
			}
		}
	}
	if why == "" {
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatal(why)
	}
	t.Skip(why)
}

const testSMBPassword = "cli-Pw-49xq7T"

// plainSamba starts smbd sharing a fresh directory.
func plainSamba(t *testing.T) *smb.Samba {
	t.Helper()
	needSamba(t)
	base := t.TempDir()
	share := filepath.Join(base, "share")
	os.Mkdir(share, 0o777)
	s, err := smb.StartSamba(smb.SambaConfig{Dir: filepath.Join(base, "samba"), Path: share, Password: testSMBPassword})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop() })
	return s
}

// jsonSchema returns the shape of a JSON document (bench.JSONShape).
func jsonSchema(t *testing.T, doc string) map[string]bool {
	t.Helper()
	sh, err := bench.JSONShape([]byte(doc))
	if err != nil {
		t.Fatalf("%v in %q", err, doc)
	}
	return sh
}

// TestBenchSMB: nasemu bench --target smb://... runs cdm and diskspd
// (shortened) against a plain Samba share, with the JSON schema and table
// header of a sim: run; the password (from the environment) shows nowhere.
// The copy suite runs in package smb's tests (TestSuitesOverSamba) through
// the same bench.Run with fewer files: the command line cannot cut its
// 10000 files, whose layout and removal alone take over a minute on a
// loaded machine.
func TestBenchSMB(t *testing.T) {
	srv := plainSamba(t)
	withFixedResolver(t)
	t.Setenv(smb.PasswordEnv, testSMBPassword)
	for _, tc := range []struct{ suite, runtime, size string }{
		{"cdm", "150ms", "8MiB"}, {"diskspd", "300ms", "8MiB"},
	} {
		t.Run("suite="+tc.suite, func(t *testing.T) {
			outs := map[string]string{}
			for _, target := range []string{srv.URL(""), "sim:fixed"} {
				for _, format := range []string{"json", "table"} {
					var out, errs bytes.Buffer
					start := time.Now()
					code := run([]string{"bench", "--target", target, "--suite", tc.suite, "--runtime", tc.runtime, "--size", tc.size, "--format", format}, &out, &errs)
					if code != 0 {
						t.Fatalf("%s: exit %d: %s", target, code, errs.String())
					}
					if strings.Contains(out.String()+errs.String(), testSMBPassword) {
						t.Errorf("the password shows in the output")
					}
					outs[target+" "+format] = out.String()
					if format == "json" {
						t.Logf("%s: %v", target, time.Since(start).Round(time.Millisecond))
					}
				}
			}
			real, sim := outs[srv.URL("")+" json"], outs["sim:fixed json"]
			if a, b := jsonSchema(t, real), jsonSchema(t, sim); !reflect.DeepEqual(a, b) {
				t.Errorf("JSON schemas differ:\nsmb %v\nsim %v", a, b)
			}
			var rep struct {
				Target, Mode string
				Results      []struct {
					Name string
					IOs  int64
				}
			}
			json.Unmarshal([]byte(real), &rep)
			if rep.Target != srv.URL("") || rep.Mode != "real" || len(rep.Results) == 0 {
				t.Errorf("report of %q in mode %q with %d results", rep.Target, rep.Mode, len(rep.Results))
			}
			for _, r := range rep.Results {
				if r.IOs == 0 {
					t.Errorf("%s: no I/O", r.Name)
				}
			}
			header := func(s string) string {
				for _, l := range strings.Split(s, "\n") {
					if strings.Contains(l, "JOB") {
						return strings.Join(strings.Fields(l), " ")
					}
				}
				return ""
			}
			if a, b := header(outs[srv.URL("")+" table"]), header(outs["sim:fixed table"]); a == "" || a != b {
				t.Errorf("table headers differ:\nsmb %s\nsim %s", a, b)
			}
		})
	}
}

// TestBenchSMBErrors: a wrong password is bad input (exit 2) saying so; a
// closed port is a failure (exit 1) reported at once.
func TestBenchSMBErrors(t *testing.T) {
	srv := plainSamba(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	const wrong = "wrong-Pw-zz81"
	for _, tc := range []struct {
		target, env string
		code        int
		want        string
	}{
		{srv.URL(""), wrong, 2, "authentication failed for user \"root\""},
		{"smb://root:" + wrong + "@" + srv.Addr() + "/share", "", 2, "authentication failed"},
		{"smb://root@" + srv.Addr() + "/nope", testSMBPassword, 2, "no share \"nope\""},
		{"smb://root@" + closed + "/share", testSMBPassword, 1, "cannot connect to " + closed},
	} {
		t.Setenv(smb.PasswordEnv, tc.env)
		var out bytes.Buffer
		start := time.Now()
		code := run([]string{"bench", "--target", tc.target, "--suite", "cdm", "--runtime", "100ms", "--size", "1MiB"}, &out, &out)
		if code != tc.code || !strings.Contains(out.String(), tc.want) {
			t.Errorf("%s: exit %d, %q; want exit %d and %q", tc.target, code, out.String(), tc.code, tc.want)
		}
		if strings.Contains(out.String(), wrong) || strings.Contains(out.String(), testSMBPassword) {
			t.Errorf("%s: the password shows: %q", tc.target, out.String())
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("%s: took %v", tc.target, d)
		}
	}
}

// lineWaiter is a goroutine-safe writer that reports when a line
// containing a marker has been written.
type lineWaiter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	seen   chan struct{}
	once   sync.Once
}

func newLineWaiter(marker string) *lineWaiter {
	return &lineWaiter{marker: marker, seen: make(chan struct{})}
}

func (w *lineWaiter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if w.seen != nil && strings.Contains(w.buf.String(), w.marker) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *lineWaiter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// nasArgs returns the arguments of a nas run on a fresh backing
// directory, with the password in a file.
func nasArgs(t *testing.T, setup, addr string) []string {
	pw := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pw, []byte(testSMBPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"--setup", setup, "--backing", t.TempDir(), "--smb", addr, "--password-file", pw}
}

// checkStopped checks that nothing of a nas run is left: no smbd, no
// mount, no run directory, the port closed.
func checkStopped(t *testing.T, info nasInfo) {
	t.Helper()
	if fusefs.Mounted(info.Mountpoint) {
		t.Errorf("%s is still mounted", info.Mountpoint)
	}
	if _, err := os.Stat(info.RunDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("run directory %s left: %v", info.RunDir, err)
	}
	select {
	case <-info.SMB.Exited():
	default:
		t.Error("smbd still runs")
	}
	ps, _ := exec.Command("ps", "-eo", "pid,stat,args").Output()
	for _, l := range strings.Split(string(ps), "\n") {
		if strings.Contains(l, info.RunDir) && !strings.Contains(l, " Z") {
			t.Errorf("still running: %s", l)
		}
	}
	if c, err := net.DialTimeout("tcp", info.SMB.Addr(), time.Second); err == nil {
		c.Close()
		t.Errorf("%s still accepts connections", info.SMB.Addr())
	}
}

// TestNasServesSMB: smbclient lists, puts and gets on a nasemu nas share;
// the files land in the backing directory; cancelling stops everything.
func TestNasServesSMB(t *testing.T) {
	needSamba(t)
	addr := freePort(t)
	args := nasArgs(t, "ds1817-raid5-hdd-smb-1g", addr)
	backing := args[3]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	infos := make(chan nasInfo, 1)
	done := make(chan error, 1)
	var stderr lineWaiter
	go func() { done <- nas(ctx, args, &stderr, func(i nasInfo) { infos <- i }) }()
	var info nasInfo
	select {
	case info = <-infos:
	case err := <-done:
		t.Fatalf("nas: %v\n%s", err, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("nas does not start")
	}
	if strings.Contains(stderr.String(), testSMBPassword) {
		t.Error("nas prints the password")
	}
	auth := filepath.Join(t.TempDir(), "auth")
	os.WriteFile(auth, []byte("username = root\npassword = "+testSMBPassword+"\n"), 0o600)
	_, port, _ := net.SplitHostPort(addr)
	client := func(args ...string) string {
		out, err := exec.Command("smbclient", append([]string{"-s", info.SMB.ConfigFile(), "-A", auth, "-p", port, "-m", "SMB3"}, args...)...).CombinedOutput()
		if err != nil {
			t.Errorf("smbclient %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if out := client("-L", "//127.0.0.1"); !strings.Contains(out, "nas") {
		t.Errorf("smbclient -L does not list the share:\n%s", out)
	}
	src := filepath.Join(t.TempDir(), "src.bin")
	data := bytes.Repeat([]byte("emulated-nas "), 200000)
	os.WriteFile(src, data, 0o644)
	dst := filepath.Join(t.TempDir(), "dst.bin")
	client("//127.0.0.1/nas", "-c", "put "+src+" f.bin; ls; get f.bin "+dst)
	if b, _ := os.ReadFile(filepath.Join(backing, "f.bin")); !bytes.Equal(b, data) {
		t.Errorf("the backing directory holds %d bytes, want the %d put", len(b), len(data))
	}
	if b, _ := os.ReadFile(dst); !bytes.Equal(b, data) {
		t.Errorf("get returned %d bytes, want %d", len(b), len(data))
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("nas: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("nas does not stop")
	}
	checkStopped(t, info)
}

// TestNasSignals: SIGINT and SIGTERM stop nasemu nas cleanly.
func TestNasSignals(t *testing.T) {
	needSamba(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			addr := freePort(t)
			stderr := newLineWaiter("control socket")
			done := make(chan error, 1)
			go func() { done <- runNas(nasArgs(t, "ds1817-raid5-hdd-smb-1g", addr), nil, stderr) }()
			select {
			case <-stderr.seen: // the handler is installed before anything starts
			case err := <-done:
				t.Fatalf("nas: %v\n%s", err, stderr.String())
			case <-time.After(30 * time.Second):
				t.Fatal("nas does not start")
			}
			runDir := filepath.Join(stateBase(), fmt.Sprintf("nas-%d", os.Getpid()))
			mnt := filepath.Join(runDir, "share")
			if !fusefs.Mounted(mnt) {
				t.Fatalf("%s is not mounted", mnt)
			}
			syscall.Kill(os.Getpid(), sig)
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("nas: %v", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("nas does not stop")
			}
			if !strings.Contains(stderr.String(), "stopping") {
				t.Errorf("no stop message:\n%s", stderr.String())
			}
			if fusefs.Mounted(mnt) {
				t.Errorf("%s still mounted", mnt)
			}
			if _, err := os.Stat(runDir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("run directory left: %v", err)
			}
			if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
				c.Close()
				t.Errorf("%s still accepts connections", addr)
			}
			ps, _ := exec.Command("ps", "-eo", "pid,stat,args").Output()
			for _, l := range strings.Split(string(ps), "\n") {
				if strings.Contains(l, runDir) && !strings.Contains(l, " Z") {
					t.Errorf("still running: %s", l)
				}
			}
		})
	}
}

// TestNasFidelity compares nasemu bench over a nasemu nas share with the
// sim: run of the same 1 GbE HDD RAID 5 setup, for cdm and copy
// (shortened). The mount charges the whole model, link and protocol
// included (see nas), so:
//   - jobs that run faster than the model predicts (beyond 15 %) are
//     logged: they point at costs the emulated path does not pay;
//   - SEQ1M Q8T1 read, which the 1 GbE link limits and whose eight
//     outstanding requests hide the host's own per-request overhead, must
//     match the model within 15 %: charging the link twice (the mount and
//     something else) would halve it.
//
// Jobs of small requests at low queue depth also pay this host's SMB,
// FUSE and scheduling overhead in series with the model's time, which
// the mount does not subtract yet; the test logs them.
func TestNasFidelity(t *testing.T) {
	needSamba(t)
	const setupName = "ds1817-raid5-hdd-smb-1g"
	const timeScale = 3
	addr := freePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	infos := make(chan nasInfo, 1)
	done := make(chan error, 1)
	var stderr lineWaiter
	go func() {
		done <- nas(ctx, append(nasArgs(t, setupName, addr), "--time-scale", fmt.Sprint(timeScale)), &stderr, func(i nasInfo) { infos <- i })
	}()
	var info nasInfo
	select {
	case info = <-infos:
	case err := <-done:
		t.Fatalf("nas: %v\n%s", err, stderr.String())
	}
	defer func() { cancel(); <-done; t.Log(stderr.String()) }()
	s, err := nasemu.LoadSetup(setupName)
	if err != nil {
		t.Fatal(err)
	}
	for _, suite := range []string{"cdm", "copy"} {
		jobs, _ := bench.Suite(suite)
		// cdm's file is larger than what a test reads in its runtime:
		// smbd reads the mount through the host's page cache, and a
		// re-read served there never reaches the model (see the report).
		size := int64(64 << 20)
		if suite == "copy" {
			size = 32 << 20
		}
		jobs = bench.Overrides{Runtime: time.Second, Size: size}.Apply(jobs)
		for i := range jobs {
			if j := &jobs[i]; j.NrFiles > 50 {
				j.NrFiles, j.Size = 50, 50*j.FileSize
			}
		}
		s.Protocol.ClientOp = -1 // as nas does: the client is real
		m, err := s.Build(1)
		if err != nil {
			t.Fatal(err)
		}
		simRep, err := bench.Run(bench.NewSim("sim:"+setupName, bench.SimSetup{Device: m}), jobs, bench.Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		opsBefore := fileOps(info)
		c, _ := smb.ParseURL(info.URL)
		c.Password, c.HasPassword = testSMBPassword, true
		tg, err := smb.Open(c)
		if err != nil {
			t.Fatal(err)
		}
		realRep, err := bench.Run(tg, jobs, bench.Options{Seed: 1})
		tg.Close()
		if err != nil {
			t.Fatal(err)
		}
		opsAfter := fileOps(info)
		simOps, _ := models.Sum(m, "file_ops")
		t.Logf("%s: file operations charged: nas %.0f, sim %.0f", suite, opsAfter-opsBefore, simOps)
		for i, r := range realRep.Results {
			sr := simRep.Results[i]
			metric, a, b := "MB/s", r.MBps*timeScale, sr.MBps
			if r.Files > 1 {
				metric, a, b = "files/s", r.FilesPerS*timeScale, sr.FilesPerS
			}
			dev := 100 * (a/b - 1)
			t.Logf("%-26s %-7s nas %8.2f sim %8.2f %+6.1f %%", r.Name, metric, a, b, dev)
			// Jobs faster than the model point at costs the emulated
			// path does not pay (or pays in parallel: FUSE and smbd read
			// ahead of a QD1 sequential reader; copy jobs skip Windows
			// Explorer's own per-file time, which sim charges). They are
			// logged, not failed: they vary from run to run on a shared
			// host, and the fidelity work is still open.
			if dev > 15 {
				t.Logf("%s: %.2f %s over SMB, the model predicts %.2f: the emulation is faster than the model", r.Name, a, metric, b)
			}
			if r.Name == "SEQ1M Q8T1 read" && math.Abs(dev) > 15 {
				t.Errorf("%s: %.2f MB/s over SMB, the model predicts %.2f (±15 %%)", r.Name, a, b)
			}
		}
	}
}

// fileOps returns the file operations the share's model has been charged.
func fileOps(info nasInfo) float64 {
	var n float64
	info.FS.Volume().WithModel(func(m models.Device, _ time.Duration) { n, _ = models.Sum(m, "file_ops") })
	return n
}

// TestNasBadUsage: bad flags are usage errors (exit 2) naming the flag,
// found before anything starts.
func TestNasBadUsage(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte(testSMBPassword+"\n"), 0o600)
	empty := filepath.Join(dir, "empty")
	os.WriteFile(empty, []byte("\n"), 0o600)
	t.Setenv(smb.PasswordEnv, "")
	base := []string{"nas", "--setup", "ds1817-raid5-hdd-smb-1g", "--backing", dir}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append(base, "--password-file", pw), "--smb HOST:PORT is required"},
		{append(base, "--smb", "0.0.0.0:4450", "--password-file", pw), "not a loopback address"},
		{append(base, "--smb", "192.0.2.1:4450", "--password-file", pw), "not a loopback address"},
		{append(base, "--smb", "127.0.0.1:4450"), "--password-file or $" + smb.PasswordEnv},
		{append(base, "--smb", "127.0.0.1:4450", "--password-file", empty), "first line is empty"},
		{append(base, "--smb", "127.0.0.1:4450", "--password-file", pw, "--user", "no-such-user-x9"), "not a Unix user"},
		{append(base, "--smb", "127.0.0.1:4450", "--password-file", pw, "--iscsi", "127.0.0.1:3260"), "--iscsi is not available"},
		{[]string{"nas", "--setup", "no-such-setup", "--backing", dir, "--smb", "127.0.0.1:4450", "--password-file", pw}, "no-such-setup"},
		{[]string{"nas", "--setup", "ds1817-raid5-hdd-smb-1g", "--backing", filepath.Join(dir, "none"), "--smb", "127.0.0.1:4450", "--password-file", pw}, "not a directory"},
	} {
		var out bytes.Buffer
		code := run(tc.args, &out, &out)
		if code != 2 || !strings.Contains(out.String(), tc.want) {
			t.Errorf("nasemu %v: exit %d, %q; want exit 2 and %q", tc.args[1:], code, out.String(), tc.want)
		}
		if strings.Contains(out.String(), testSMBPassword) {
			t.Errorf("the password shows: %q", out.String())
		}
	}
}
