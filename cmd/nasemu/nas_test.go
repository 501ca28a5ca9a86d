package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nasemu/nasemu"
	"github.com/nasemu/nasemu/bench"
	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/fusefs"
	"github.com/nasemu/nasemu/iscsi"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/setup"
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
			a, b := jsonSchema(t, real), jsonSchema(t, sim)
			for k := range b { // a share has no block device, so no disk_util (as in fio)
				if strings.HasPrefix(k, "disk_util") {
					delete(b, k)
				}
			}
			if !reflect.DeepEqual(a, b) {
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

// TestNasSignals: SIGINT and SIGTERM stop nasemu nas cleanly: smbd
// stopped, the share unmounted, the run directory gone and, with --iscsi
// (SIGTERM), the iSCSI portal closed and an open session ended.
func TestNasSignals(t *testing.T) {
	needSamba(t)
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			addr := freePort(t)
			stderr := newLineWaiter("control socket")
			args := nasArgs(t, "ds1817-raid5-hdd-smb-1g", addr)
			iscsiAddr := ""
			if sig == syscall.SIGTERM {
				iscsiAddr = freePort(t)
				args = append(args, "--iscsi", iscsiAddr, "--lun", filepath.Join(t.TempDir(), "lun.img"), "--lun-size", "16MiB")
				stderr = newLineWaiter("iSCSI LUN 0")
			}
			done := make(chan error, 1)
			go func() { done <- runNas(args, nil, stderr) }()
			select {
			case <-stderr.seen: // the handler is installed before anything starts
			case err := <-done:
				t.Fatalf("nas: %v\n%s", err, stderr.String())
			case <-time.After(30 * time.Second):
				t.Fatal("nas does not start")
			}
			runDirs, _ := filepath.Glob(filepath.Join(stateBase(), fmt.Sprintf("nas-%d-*", os.Getpid())))
			if len(runDirs) != 1 {
				t.Fatalf("run directories of this process: %q; want one", runDirs)
			}
			runDir := runDirs[0]
			mnt := filepath.Join(runDir, "share")
			if !fusefs.Mounted(mnt) {
				t.Fatalf("%s is not mounted", mnt)
			}
			var sess *iscsi.Session
			if iscsiAddr != "" {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				var err error
				if sess, err = iscsi.Dial(ctx, iscsi.SessionConfig{Addr: iscsiAddr, Target: iscsi.DefaultIQN}); err != nil {
					t.Fatal(err)
				}
				defer sess.Close()
				if err := sess.TestUnitReady(ctx, 0); err != nil {
					t.Fatal(err)
				}
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
			for _, a := range []string{addr, iscsiAddr} {
				if a == "" {
					continue
				}
				if c, err := net.DialTimeout("tcp", a, time.Second); err == nil {
					c.Close()
					t.Errorf("%s still accepts connections", a)
				}
			}
			if sess != nil {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				if err := sess.TestUnitReady(ctx, 0); err == nil {
					t.Error("the iSCSI session still answers after the stop")
				}
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

// TestNasISCSIOnly: nasemu nas --iscsi without --smb serves the LUN alone
// (no mount, no smbd), charged to the setup's array.
func TestNasISCSIOnly(t *testing.T) {
	lunFile := filepath.Join(t.TempDir(), "lun.img")
	info := startNas(t, []string{"--setup", "ds1817-raid5-hdd-smb-1g", "--iscsi", "127.0.0.1:0", "--lun", lunFile, "--lun-size", "8MiB"})
	if info.FS != nil || info.SMB != nil || info.Mountpoint != "" {
		t.Errorf("nas --iscsi alone serves a share: %+v", info)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	sess, err := iscsi.Dial(ctx, iscsi.SessionConfig{Addr: info.ISCSI, Target: info.IQN})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	data := bytes.Repeat([]byte{0xa5, 0x5a}, 2048)
	if err := sess.Write16(ctx, 0, 8, 512, data); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(data))
	if err := sess.Read16(ctx, 0, 8, 512, got); err != nil || !bytes.Equal(got, data) {
		t.Errorf("read back: %v, equal %v", err, bytes.Equal(got, data))
	}
	if n := arraySum(info, "lun_iscsi_commands"); n != 2 {
		t.Errorf("the model charged %v iSCSI commands, want 2", n)
	}
	if n := arraySum(info, "smb_requests"); n != 0 {
		t.Errorf("the model charged %v SMB requests", n)
	}
}

// fidelityAlways are the jobs TestNasFidelity holds to ±15 % of sim:
// on any host: they are bound by the modelled link at queue depth 8.
// Every other job of cdm and copy but fidelityLogged is held to it too in
// CI (CI=true), and elsewhere where the host is not overloaded
// (fidelityHost): at queue depth 1 a job's time is the model's plus
// whatever of this host's SMB and FUSE path the compensation does not
// take off, and 1 MiB requests must reach the share whole
// (fusefs.SplitsSMBWrites; docs/notes/nas-smb-charging.md).
var fidelityAlways = map[string]bool{
	"SEQ1M Q8T1 read":  true,
	"SEQ1M Q8T1 write": true,
}

// fidelityLogged are the jobs TestNasFidelity only logs, as their gap to
// the model is the host's or not yet explained (docs/notes/nas-fidelity.md
// has their figures). A 2 KiB-file upload is mostly the client's own time
// per file: go-smb2's queries and set-infos charge nothing, so the share
// cannot answer them early, and their host round trips add in series,
// where sim's client (ClientOp off, as nas runs it) costs nothing.
// The 2 MiB-file copies show a per-file gap: part of it was the host's
// time to move each file's first write, now taken off
// (fusefs.FS.SetTransferEarly); the rest, mostly in each file's CLOSE, is
// not yet explained (the download came out at 0.88-0.95, the upload at
// 0.81-0.83).
var fidelityLogged = map[string]bool{
	"copy 10000x2KiB upload":  true,
	"copy 1000x2MiB upload":   true,
	"copy 1000x2MiB download": true,
}

// fidelityHost reports whether TestNasFidelity holds every job to ±15 %:
// this host's kernel passes an SMB client's 1 MiB requests to the share
// whole and, outside CI, the host is not overloaded (hostQuiet). It logs
// why not. In CI (CI=true) a kernel that splits the requests fails the
// test (.ci/run raises the limit), and a loaded host is only logged: the
// time scales (fidelityTimeScale) leave the emulation room on a shared
// host.
func fidelityHost(t *testing.T) bool {
	ci := os.Getenv("CI") == "true"
	if fusefs.SplitsSMBWrites() {
		if ci {
			t.Fatal("this kernel splits 1 MiB requests on their way from smbd to the share (fs.fuse.max_pages_limit below 257): .ci/run must raise it")
		}
		t.Logf("this kernel splits 1 MiB requests on their way from smbd to the share (fs.fuse.max_pages_limit below 257; .ci/run raises it): only %v are held to ±15 %%", slices.Sorted(maps.Keys(fidelityAlways)))
		return false
	}
	if hostQuiet(t) || ci {
		return true
	}
	t.Logf("only %v are held to ±15 %%", slices.Sorted(maps.Keys(fidelityAlways)))
	return false
}

// fidelityRetries is how many more times TestNasFidelity runs an asserted
// job that misses ±15 % at first; the median of its runs is held to it,
// or, if that misses too, the median of fidelityRetries+1 runs after a
// pause of fidelityPause (the host is shared; every run is logged).
const fidelityRetries = 2

const fidelityPause = 3 * time.Second

// fidelityStall is the longest stall of the test process that a run of
// TestNasFidelity may have (the Go scheduler's own delays under load are
// 10-20 ms); fidelityStallRuns bounds the runs of a job that stall.
const (
	fidelityStall     = 50 * time.Millisecond
	fidelityStallRuns = 4
)

// watchStalls starts measuring the longest gap between the ticks of a 2 ms
// ticker: how long this process (or the whole host) stopped. The function
// it returns stops the measurement and returns that gap less the tick.
func watchStalls() func() time.Duration {
	done := make(chan struct{})
	longest := make(chan time.Duration, 1)
	go func() {
		const tick = 2 * time.Millisecond
		tk := time.NewTicker(tick)
		defer tk.Stop()
		last, worst := time.Now(), time.Duration(0)
		for {
			select {
			case <-done:
				longest <- max(worst, time.Since(last)-tick)
				return
			case now := <-tk.C:
				worst = max(worst, now.Sub(last)-tick)
				last = now
			}
		}
	}()
	return func() time.Duration {
		close(done)
		return <-longest
	}
}

// median returns the median of xs (the upper one of an even count).
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// hostQuiet reports whether this host's load average (over the last
// minute) is at most twice its CPUs: beyond that, runnable threads wait
// for a CPU for milliseconds, longer than a QD1 request of the model. It
// logs the load. (A poor measure of a busy host: the load average counts
// the threads blocked in the share's own FUSE waits.)
func hostQuiet(t *testing.T) bool {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return true
	}
	var load float64
	fmt.Sscan(string(b), &load)
	quiet := load <= 2*float64(runtime.NumCPU())
	t.Logf("load average %.2f on %d CPUs (loaded: %v)", load, runtime.NumCPU(), !quiet)
	return quiet
}

// fidelityTimeScale is the time scale of each suite's share in
// TestNasFidelity: the model's request rate divided by it is what the
// emulation demands of this host, and it must stay a small part of a
// shared 2-CPU host: at 12, cdm's busiest job (RND4K Q32T1 read) demands
// about 0.6 CPU; at 3, the copy suite's (2 KiB downloads) under 0.25
// (docs/notes/nas-fidelity.md has the host's CPU per request).
var fidelityTimeScale = map[string]float64{"cdm": 12, "copy": 3}

// fidelityJobs returns a suite's jobs shrunk for the test: cdm's over 64
// MiB files, each running a third of a second of the model (timeScale/3
// seconds of wall time); copy's with at most 200 files of the suite's own
// sizes (the single file 32 MiB), each run to its end (a copy's first
// files pay for its directory and a cold cache: cut short, the two runs
// would weigh them differently).
func fidelityJobs(t *testing.T, suite string, timeScale float64) []bench.Job {
	jobs, err := bench.Suite(suite)
	if err != nil {
		t.Fatal(err)
	}
	if suite != "copy" {
		return bench.Overrides{Runtime: time.Duration(timeScale / 3 * float64(time.Second)), Size: 64 << 20}.Apply(jobs)
	}
	// The copy suite's own file sizes (a 2 KiB file is a partial page, a
	// 2 MiB one two SMB writes), fewer files (at most 200, and 100 MiB)
	// and a smaller single file.
	for i := range jobs {
		j := &jobs[i]
		if j.NrFiles == 1 {
			j.FileSize = 32 << 20
		}
		j.NrFiles = min(j.NrFiles, 200, int((100<<20)/j.FileSize))
		j.Size = int64(j.NrFiles) * j.FileSize
	}
	return jobs
}

// TestNasFidelity compares nasemu bench over a nasemu nas share with the
// sim: run of the same 1 GbE HDD RAID 5 setup, for cdm and copy
// (shortened, at the time scales of fidelityTimeScale). The mount charges the whole model, link and
// protocol included, each client request once (see nas), and answers
// early by the host's FUSE and SMB round trips, so a job's figure over SMB
// times the time scale is the model's wherever this host is not the
// bottleneck. Every job must be within ±15 % (in CI and on a host that
// can carry them, fidelityHost; the link-bound ones anywhere,
// fidelityAlways):
// charging the link twice would halve the sequential ones, charging
// smbd's attribute calls or leaving the SMB round trip uncompensated costs
// RND4K Q1T1 read 20-50 %, splitting smbd's 1 MiB writes costs QD1 writes
// and uploads 20-50 %. A job outside is run fidelityRetries more times and
// the median of its runs is held to it; the others are logged with their
// deviation. The file operations charged must match sim's (smbd's extra
// calls not charged).
func TestNasFidelity(t *testing.T) {
	needSamba(t)
	const setupName = "ds1817-raid5-hdd-smb-1g"
	s, err := nasemu.LoadSetup(setupName)
	if err != nil {
		t.Fatal(err)
	}
	// Each suite runs on a NAS of its own, as sim: runs it on a model of
	// its own: the dirty pages that cdm's random writes leave in the NAS's
	// page cache take the RAID 5 minutes to write back, and a copy suite
	// run behind them on the same NAS measures that backlog.
	for _, suite := range []string{"cdm", "copy"} {
		t.Run(suite, func(t *testing.T) { nasFidelity(t, s, suite, fidelityTimeScale[suite]) })
	}
}

// nasFidelity runs one suite of TestNasFidelity on a nas of its own.
func nasFidelity(t *testing.T, s *setup.Setup, suite string, timeScale float64) {
	setupName := s.Name
	args := append(nasArgs(t, setupName, freePort(t)), "--time-scale", fmt.Sprint(timeScale))
	// The backing directory's own latency is this host's, in series with
	// the model's: on the host's disk its journal commits stall the
	// creates and deletes of the small-file copies now and then. In
	// memory (tmpfs) they do not (docs/notes/nas-fidelity.md).
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		dir, err := os.MkdirTemp("/dev/shm", "nasemu-fidelity-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		args[3] = dir // --backing
	}
	info := startNas(t, args)
	c, _ := smb.ParseURL(info.URL)
	c.Password, c.HasPassword = testSMBPassword, true
	// runOnce runs one job over the share and returns its result and the
	// longest stall of this process while it ran.
	runOnce := func(j bench.Job) (bench.Result, time.Duration) {
		// The package's other tests leave the host writing back their
		// files, and the nas, which serves in this process, collecting
		// their garbage: both are done now, not while the paced jobs run
		// (docs/notes/nas-fidelity.md).
		syscall.Sync()
		runtime.GC()
		tg, err := smb.Open(c)
		if err != nil {
			t.Fatal(err)
		}
		defer tg.Close()
		stop := watchStalls()
		rep, err := bench.Run(tg, []bench.Job{j}, bench.Options{Seed: 1})
		stall := stop()
		if err != nil {
			t.Fatal(err)
		}
		return rep.Results[0], stall
	}
	// runReal runs one job over the share, again (up to fidelityStallRuns
	// times) while this process stalls for longer than fidelityStall in
	// the middle of it: an emulator whose host stops cannot keep time,
	// and a virtual machine is now and then stopped for a while (its
	// clock jumps; docs/notes/nas-fidelity.md). A copy runs again into a
	// directory of its own (an upload over the files of an earlier run
	// would be another workload: overwrites, not creates).
	// It also returns the file operations the share charged for the run
	// it returns (a stalled run's are not compared with sim's). A
	// download's files are written first by an upload, uncounted, as its
	// first run read the upload job's: without them it would lay them out
	// itself, which the share charges and sim's run does not do.
	runs := map[string]int{}
	runReal := func(j bench.Job) (bench.Result, float64) {
		base := j.FilenameFormat
		for k := 0; ; k++ {
			if runs[j.Name]++; runs[j.Name] > 1 && j.FileByFile {
				j.FilenameFormat = fmt.Sprintf("run-%d-%s", runs[j.Name], base)
				if j.RW == bench.Read {
					up := j
					up.Name, up.RW, up.Unlink = j.Name+" (its files)", bench.Write, false
					runOnce(up)
				}
			}
			before := fileOps(info)
			r, stall := runOnce(j)
			if stall <= fidelityStall || k+1 == fidelityStallRuns {
				return r, fileOps(info) - before
			}
			t.Logf("%s: this process stalled for %v while it ran: run again", j.Name, stall.Round(time.Millisecond))
		}
	}
	{
		faithful := fidelityHost(t)
		asserted := func(name string) bool { return fidelityAlways[name] || faithful && !fidelityLogged[name] }
		jobs := fidelityJobs(t, suite, timeScale)
		s.Protocol.ClientOp = -1 // as nas does: the client is real
		m, err := s.Build(1)
		if err != nil {
			t.Fatal(err)
		}
		// A job's runtime is wall time: over nas, a 1 s job covers a third
		// of a second of the model at time scale 3, so sim runs it for
		// that long. (With the same runtime the two would measure
		// different stretches of the model: a copy's first files, which
		// pay for its directory and a cold cache, weigh three times as much
		// over nas.)
		simJobs := slices.Clone(jobs)
		for i := range simJobs {
			if j := &simJobs[i]; j.Runtime > 0 {
				j.Runtime = time.Duration(float64(j.Runtime) / timeScale)
				j.RampTime = time.Duration(float64(j.RampTime) / timeScale)
				j.StartDelay = time.Duration(float64(j.StartDelay) / timeScale)
			}
		}
		simRep, err := bench.Run(bench.NewSim("sim:"+setupName, bench.SimSetup{Device: m}), simJobs, bench.Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		// One job at a time, with what the share's model charged for its
		// data requests, so that a job off the model shows whether the
		// model or this host took the time.
		var real []bench.Result
		var charged []string
		var ops float64 // charged by the runs compared with sim
		for i := range jobs {
			before := info.Volume.Stats()
			r, n := runReal(jobs[i])
			real, ops = append(real, r), ops+n
			charged = append(charged, chargedSince(before, info.Volume.Stats()))
		}
		simOps, _ := models.Sum(m, "file_ops")
		t.Logf("%s: file operations charged: nas %.0f, sim %.0f", suite, ops, simOps)
		if d := ops; math.Abs(d-simOps) > 0.05*simOps+5 {
			t.Errorf("%s: the share charged %.0f file operations, sim %.0f: smbd's calls are charged beyond the client's requests", suite, d, simOps)
		}
		for i, r := range real {
			sr := simRep.Results[i]
			figure := func(r bench.Result) float64 {
				if r.Files > 1 {
					return r.FilesPerS
				}
				return r.MBps
			}
			metric := "MB/s"
			if r.Files > 1 {
				metric = "files/s"
			}
			b := figure(sr)
			ratios := []float64{figure(r) * timeScale / b}
			// rerun runs the job n more times.
			rerun := func(n int) {
				for range n {
					r, _ := runReal(jobs[i])
					ratios = append(ratios, figure(r)*timeScale/b)
				}
			}
			med := ratios[0]
			if asserted(r.Name) && math.Abs(med-1) > 0.15 {
				rerun(fidelityRetries)
				med = median(ratios)
				if math.Abs(med-1) > 0.15 {
					// This shared host has stretches of seconds in which
					// its own time per request grows several fold (a job
					// off the model logs what the model charged): a
					// second chance after a pause, the median of three
					// fresh runs.
					time.Sleep(fidelityPause)
					rerun(fidelityRetries + 1)
					med = median(ratios[len(ratios)-fidelityRetries-1:])
				}
			}
			t.Logf("%-26s %-7s sim %8.2f nas %8.2f %+6.1f %% (runs %.2f)", r.Name, metric, b, med*b, 100*(med-1), ratios)
			if math.Abs(ratios[0]-1) > 0.15 {
				t.Logf("%-26s first run: client mean latency %v (model time), sim's %v; the share charged %s", r.Name,
					time.Duration(r.Lat.Mean*1e3/timeScale).Round(time.Microsecond), time.Duration(sr.Lat.Mean*1e3).Round(time.Microsecond), charged[i])
			}
			if asserted(r.Name) && math.Abs(med-1) > 0.15 {
				t.Errorf("%s: %.2f %s over SMB, the model predicts %.2f (±15 %%)", r.Name, med*b, metric, b)
			}
		}
	}
}

// chargedSince describes the data requests a volume served between two
// snapshots of its stats: their count and mean model latency per op.
func chargedSince(before, after emu.Stats) string {
	var parts []string
	for _, a := range after.Ops {
		if a.Op != models.Read && a.Op != models.Write {
			continue
		}
		var n int64
		var total float64
		for _, b := range before.Ops {
			if b.Op == a.Op {
				n, total = b.Count-b.Errors, float64(b.MeanModelLatency)*float64(b.Count-b.Errors)
			}
		}
		if k := a.Count - a.Errors - n; k > 0 {
			mean := (float64(a.MeanModelLatency)*float64(a.Count-a.Errors) - total) / float64(k)
			parts = append(parts, fmt.Sprintf("%d %vs, mean %v", k, a.Op, time.Duration(mean).Round(time.Microsecond)))
		}
	}
	return strings.Join(parts, "; ")
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
	outside := filepath.Join(t.TempDir(), "lun.img")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{append(base, "--password-file", pw), "--smb HOST:PORT or --iscsi HOST:PORT is required"},
		{append(base, "--smb", "0.0.0.0:4450", "--password-file", pw), "not a loopback address"},
		{append(base, "--smb", "192.0.2.1:4450", "--password-file", pw), "not a loopback address"},
		{append(base, "--smb", "127.0.0.1:4450"), "--password-file or $" + smb.PasswordEnv},
		{append(base, "--smb", "127.0.0.1:4450", "--password-file", empty), "first line is empty"},
		{append(base, "--smb", "127.0.0.1:4450", "--password-file", pw, "--user", "no-such-user-x9"), "not a Unix user"},
		{append(base, "--smb", "127.0.0.1:4450", "--password-file", pw, "--iscsi", "127.0.0.1:3260"), "--lun FILE is required with --iscsi"},
		{append(base, "--iscsi", "127.0.0.1:3260", "--lun", outside, "--lun-size", "lots"), "--lun-size"},
		{append(base, "--iscsi", "127.0.0.1:3260", "--lun", outside, "--lun-size", "10TB"), "does not fit"},
		{append(base, "--smb", "127.0.0.1:4450", "--password-file", pw, "--iscsi", "127.0.0.1:3260", "--lun", filepath.Join(dir, "lun.img")), "lies in --backing"},
		{append(base, "--smb", "127.0.0.1:4450", "--password-file", pw, "--lun", filepath.Join(dir, "lun.img")), "go with --iscsi"},
		{[]string{"nas", "--setup", "ds1817-raid5-hdd-smb-1g", "--iscsi", "127.0.0.1:3260", "--lun", filepath.Join(dir, "lun.img"), "--chap-user", "u"}, "go together"},
		{[]string{"nas", "--setup", "no-such-setup", "--backing", dir, "--smb", "127.0.0.1:4450", "--password-file", pw}, "no-such-setup"},
		{[]string{"nas", "--setup", "ds1817-raid5-hdd-smb-1g", "--backing", filepath.Join(dir, "none"), "--smb", "127.0.0.1:4450", "--password-file", pw}, "does not exist"},
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

// startNas runs nas in the test until the test ends and returns what it
// serves.
func startNas(t *testing.T, args []string) nasInfo {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	infos := make(chan nasInfo, 1)
	done := make(chan error, 1)
	stderr := &lockedBuffer{}
	go func() { done <- nas(ctx, args, stderr, func(i nasInfo) { infos <- i }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("nas: %v\n%s", err, stderr)
		}
	})
	select {
	case info := <-infos:
		t.Logf("%s", stderr)
		return info
	case err := <-done:
		t.Fatalf("nas %v: %v\n%s", args, err, stderr)
	case <-time.After(30 * time.Second):
		t.Fatal("nas does not start")
	}
	return nasInfo{}
}

// arraySum returns a counter of the model a nas run charges, summed over
// its stack.
func arraySum(info nasInfo, name string) float64 {
	var n float64
	info.Volume.WithModel(func(m models.Device, _ time.Duration) { n, _ = models.Sum(m, name) })
	return n
}

// TestNasISCSI: nasemu nas --smb --iscsi serves the share and a LUN of the
// same array at once. Through the repository's initiator and libiscsi's
// iscsi-inq the LUN logs in, reads back what was written, and keeps its
// bytes in its own file (not in the share); its writes reach the share's
// array and link (one model), through an iSCSI front (lun_ counters) and
// not the SMB one.
func TestNasISCSI(t *testing.T) {
	needSamba(t)
	inq := needLibiscsi(t)
	const lunSize = 64 << 20
	lunFile := filepath.Join(t.TempDir(), "lun0.img")
	args := append(nasArgs(t, "ds1817-raid5-hdd-smb-1g", freePort(t)), "--iscsi", "127.0.0.1:0", "--lun", lunFile, "--lun-size", "64MiB")
	backing := args[3]
	info := startNas(t, args)
	if info.ISCSI == "" || info.Array == nil || info.FS == nil {
		t.Fatalf("nas serves %+v", info)
	}
	if capacity, _ := info.FS.Usage(); capacity+lunSize > info.Array.Share().Capacity() || capacity < info.Array.Share().Capacity()-lunSize-(1<<20) {
		t.Errorf("the share has %d bytes, the array %d, the LUN %d: they overlap or waste space", capacity, info.Array.Share().Capacity(), lunSize)
	}
	out, err := exec.Command(inq, "iscsi://"+info.ISCSI+"/"+info.IQN+"/0").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Vendor:NASEMU") {
		t.Errorf("iscsi-inq: %v\n%s", err, out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sess, err := iscsi.Dial(ctx, iscsi.SessionConfig{Addr: info.ISCSI, Target: info.IQN})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	c, err := sess.ReadCapacity16(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := int64(c.Blocks) * int64(c.BlockSize); got != lunSize {
		t.Errorf("the LUN holds %d bytes, want %d", got, lunSize)
	}
	smbBefore, rtBefore := arraySum(info, "smb_requests"), arraySum(info, "lun_iscsi_commands")
	linkBefore, membersBefore := arraySum(info, "link_bytes_rx"), arraySum(info, "member_bytes_written")
	data := bytes.Repeat([]byte("one array, a share and a LUN "), 1<<20/16)[:1<<20]
	const lba = 4096 // 2 MiB into the LUN
	if err := sess.Write16(ctx, 0, lba, int(c.BlockSize), data); err != nil {
		t.Fatal(err)
	}
	if err := sess.SyncCache(ctx, 0); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(data))
	if err := sess.Read16(ctx, 0, lba, int(c.BlockSize), got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Error("the LUN reads back other bytes than were written")
	}
	file, _ := os.ReadFile(lunFile)
	if int64(len(file)) != lunSize || !bytes.Equal(file[lba*512:lba*512+len(data)], data) {
		t.Errorf("the LUN file (%d bytes) does not hold the written bytes at %d", len(file), lba*512)
	}
	ents, _ := os.ReadDir(backing)
	ents = slices.DeleteFunc(ents, func(e os.DirEntry) bool { return strings.HasPrefix(e.Name(), ".nasemu-") }) // the share's own
	if len(ents) > 0 {
		t.Errorf("the share's backing directory holds %v after LUN I/O, want nothing of a client's", ents)
	}
	if d := arraySum(info, "smb_requests") - smbBefore; d != 0 {
		t.Errorf("LUN I/O made %v SMB requests", d)
	}
	if d := arraySum(info, "lun_iscsi_commands") - rtBefore; d < 3 {
		t.Errorf("LUN I/O made %v iSCSI commands in the model, want at least 3", d)
	}
	if d := arraySum(info, "link_bytes_rx") - linkBefore; d < float64(len(data)) {
		t.Errorf("the shared link received %v bytes for a %d-byte LUN write", d, len(data))
	}
	if d := arraySum(info, "member_bytes_written") - membersBefore; d < float64(len(data)) {
		t.Errorf("the array's drives wrote %v bytes for a flushed %d-byte LUN write", d, len(data))
	}

	// One power loss takes the share and the LUN: the LUN's session is
	// dropped, its synced write kept.
	ctlOut, code := ctlRun(t, filepath.Join(info.RunDir, "ctl.sock"), "power-loss")
	if code != 0 || !strings.Contains(ctlOut, "namespace changes since the last journal commit undone, 1 iSCSI sessions dropped") {
		t.Errorf("ctl power-loss of share and LUN: exit %d\n%s", code, ctlOut)
	}
	sess2, err := iscsi.Dial(ctx, iscsi.SessionConfig{Addr: info.ISCSI, Target: info.IQN})
	if err != nil {
		t.Fatal(err)
	}
	defer sess2.Close()
	if err := sess2.Read16(ctx, 0, lba, int(c.BlockSize), got); err != nil || !bytes.Equal(got, data) {
		t.Errorf("the LUN's synced write after the power loss: %v, equal %v", err, bytes.Equal(got, data))
	}
}

// needLibiscsi returns the path of libiscsi's iscsi-inq; outside CI a
// missing tool skips the test, in CI (CI=true) it fails it.
func needLibiscsi(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("iscsi-inq")
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("iscsi-inq is not installed (CI installs libiscsi-bin)")
	}
	t.Skip("iscsi-inq is not installed (Debian package libiscsi-bin)")
	return ""
}
