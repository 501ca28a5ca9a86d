package smb

import (
	"bytes"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nasemu/nasemu/bench"
)

func TestParseURL(t *testing.T) {
	c, err := ParseURL("smb://WG;alice:p%40ss%3Aw0rd@nas.local:4450/data/bench/run1?timeout=2s&iotimeout=5s&sessions=3")
	if err != nil {
		t.Fatal(err)
	}
	want := Config{Host: "nas.local:4450", User: "alice", Domain: "WG", Password: "p@ss:w0rd", HasPassword: true,
		Share: "data", Dir: "bench/run1", DialTimeout: 2 * time.Second, IOTimeout: 5 * time.Second, MaxSessions: 3}
	if c != want {
		t.Errorf("got  %+v\nwant %+v", c, want)
	}
	if r := c.Redacted(); r != "smb://WG;alice@nas.local:4450/data/bench/run1" {
		t.Errorf("redacted %q", r)
	}
	c, err = ParseURL("smb://bob@[::1]/s")
	if err != nil || c.Host != "[::1]:445" || c.HasPassword || c.Share != "s" || c.Dir != "" {
		t.Errorf("defaults: %+v, %v", c, err)
	}
	for _, bad := range []string{
		"smb://alice:s3cr3t-x@host:99999/share",
		"smb://alice:s3cr3t-x@host/",
		"smb://:s3cr3t-x@host/share",
		"smb://alice:s3cr3t-x@/share",
		"smb://alice:s3cr3t-x@host:4%zz/share",
		"smb://alice:s3cr3t-x@host/share?timeout=-1s",
		"smb://alice:s3cr3t-x@host/share?sessions=0",
		"smb://alice:s3cr3t-x@host/share?nosuch=1",
		"smb:alice:s3cr3t-x@host/share",
	} {
		_, err := ParseURL(bad)
		if err == nil || !errors.Is(err, bench.ErrTarget) {
			t.Errorf("%s: error %v, want a bad target", bad, err)
			continue
		}
		if strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%s: the error shows the password: %v", bad, err)
		}
	}
}

// TestPasswordSources: the URL wins, then the source; a source's error
// (no variable, no terminal) is bad input.
func TestPasswordSources(t *testing.T) {
	c, _ := ParseURL("smb://u@h/s")
	asked := ""
	if err := resolvePassword(&c, func(r string) (string, error) { asked = r; return "from-source", nil }); err != nil || c.Password != "from-source" || asked != "smb://u@h:445/s" {
		t.Errorf("source: %q asked for %q, %v", c.Password, asked, err)
	}
	c, _ = ParseURL("smb://u:inline@h/s")
	if err := resolvePassword(&c, func(string) (string, error) { t.Error("source asked"); return "", nil }); err != nil || c.Password != "inline" {
		t.Errorf("inline: %q %v", c.Password, err)
	}
	t.Setenv(PasswordEnv, "from-env")
	if pw, err := DefaultPassword("x"); pw != "from-env" || err != nil {
		t.Errorf("env: %q %v", pw, err)
	}
	os.Unsetenv(PasswordEnv)
	if !isTerminal(os.Stdin) { // go test's stdin is not a terminal
		_, err := DefaultPassword("smb://u@h:445/s")
		if !errors.Is(err, bench.ErrTarget) || !errors.Is(err, ErrNoPassword) || !strings.Contains(err.Error(), PasswordEnv) {
			t.Errorf("no password: %v", err)
		}
	}
}

// TestBadCredentialsAndPaths: a wrong password, an unknown share and a
// missing directory are bad input naming what was wrong; the password
// shows nowhere.
func TestBadCredentialsAndPaths(t *testing.T) {
	srv := startSamba(t)
	const wrong = "Wr0ng-pw-5531"
	reg := bench.NewRegistry(Factory())
	for _, tc := range []struct {
		addr, env, want string
	}{
		{"smb://root:" + wrong + "@" + srv.Addr() + "/share", "", "authentication failed for user \"root\""},
		{"smb://root@" + srv.Addr() + "/share", wrong, "authentication failed for user \"root\""},
		{"smb://nobody-here@" + srv.Addr() + "/share", wrong, "authentication failed"},
		{"smb://root@" + srv.Addr() + "/noshare", testPassword, "no share \"noshare\""},
		{"smb://root@" + srv.Addr() + "/share/missing/dir", testPassword, "directory missing/dir does not exist"},
	} {
		t.Setenv(PasswordEnv, tc.env)
		tg, err := reg.Open(tc.addr, bench.OpenOptions{})
		if err == nil {
			tg.Close()
			t.Errorf("%s: opened", tc.addr)
			continue
		}
		if !errors.Is(err, bench.ErrTarget) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want a bad target saying %q", tc.addr, err, tc.want)
		}
		if strings.Contains(err.Error(), wrong) || strings.Contains(err.Error(), testPassword) {
			t.Errorf("the error shows the password: %v", err)
		}
	}
}

// TestPasswordNotInOutput: a run's name, report (every format, the
// output directory) and errors never contain the password, whether it
// came from the URL or the environment.
func TestPasswordNotInOutput(t *testing.T) {
	srv := startSamba(t)
	job := []bench.Job{{Name: "w", RW: bench.RandWrite, BS: 4096, Size: 1 << 20, FileSize: 1 << 20, Filename: "pw.dat", TimeBased: true, Runtime: 100 * time.Millisecond}}
	t.Setenv(PasswordEnv, testPassword)
	for _, addr := range []string{srv.urlWithPassword(""), srv.URL("")} {
		tg := openTarget(t, addr)
		rep, err := bench.Run(tg, job, bench.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var all bytes.Buffer
		for _, f := range bench.Formats {
			if err := rep.WriteFormat(&all, f); err != nil {
				t.Fatal(err)
			}
		}
		out := t.TempDir()
		if err := rep.WriteDir(out); err != nil {
			t.Fatal(err)
		}
		filepath.Walk(out, func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.Mode().IsRegular() {
				b, _ := os.ReadFile(p)
				all.Write(b)
			}
			return nil
		})
		// An error of a running target: the file is gone.
		f, _, err := tg.Open(0, "pw.dat", 1<<20, bench.OpenFlags{})
		if err != nil {
			t.Fatal(err)
		}
		f.Close(0)
		_, err = tg.Remove(0, "no-such-file")
		if err == nil {
			t.Error("removing a missing file succeeded")
		} else {
			all.WriteString(err.Error())
		}
		if !strings.Contains(all.String(), srv.URL("")) {
			t.Errorf("the outputs do not name the target %s", srv.URL(""))
		}
		if strings.Contains(all.String(), testPassword) || strings.Contains(tg.Name(), testPassword) {
			t.Errorf("the password shows in the output of a run of %s", tg.Name())
		}
	}
}

// TestUnreachable: a closed port fails at once, a port that accepts but
// never answers fails after the dial timeout; neither hangs, and both are
// failures (not bad input).
func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() { // accept and say nothing
		var held []net.Conn
		for {
			c, err := silent.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, c)
		}
	}()
	for _, tc := range []struct {
		addr string
		max  time.Duration
		want string
	}{
		{"smb://u:pw@" + closed + "/s", time.Second, "cannot connect to " + closed + ": connect: connection refused"},
		{"smb://u:pw@" + silent.Addr().String() + "/s?timeout=500ms", 2 * time.Second, "no reply within the timeout"},
	} {
		start := time.Now()
		_, err := bench.NewRegistry(Factory()).Open(tc.addr, bench.OpenOptions{})
		took := time.Since(start)
		if err == nil || !strings.Contains(err.Error(), tc.want) || errors.Is(err, bench.ErrTarget) {
			t.Errorf("%s: %v; want a failure saying %q", tc.addr, err, tc.want)
		}
		if took > tc.max {
			t.Errorf("%s: failed after %v, want within %v", tc.addr, took, tc.max)
		}
		t.Logf("%s: %v after %v", tc.addr, err, took.Round(time.Millisecond))
	}
}

// longJobs are a short job that completes and a long one that the test
// interrupts.
func longJobs() []bench.Job {
	return []bench.Job{
		{Name: "done", RW: bench.RandRead, BS: 4096, IODepth: 4, Size: 4 << 20, Filename: "long.dat", TimeBased: true, Runtime: 200 * time.Millisecond},
		{Name: "cut", RW: bench.RandRW, BS: 64 << 10, IODepth: 4, NumJobs: 2, Size: 4 << 20, Filename: "long.dat", TimeBased: true, Runtime: 20 * time.Second, Stonewall: true},
	}
}

// runAndInterrupt runs longJobs and calls interrupt once the second job is
// under way; it returns Run's error and how long Run took after the
// interruption.
func runAndInterrupt(t *testing.T, tg bench.Target, interrupt func()) (error, time.Duration) {
	t.Helper()
	type result struct {
		rep *bench.Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := bench.Run(tg, longJobs(), bench.Options{})
		done <- result{rep, err}
	}()
	time.Sleep(1500 * time.Millisecond) // layout, the first job, into the second
	start := time.Now()
	interrupt()
	select {
	case r := <-done:
		if r.err == nil {
			t.Fatal("the run succeeded")
		}
		return r.err, time.Since(start)
	case <-time.After(15 * time.Second):
		t.Fatal("the run hangs")
	}
	return nil, 0
}

// TestServerGoesAway: a server stopped in the middle of a run ends it with
// an error saying the connection was lost, not a hang.
func TestServerGoesAway(t *testing.T) {
	srv := startSamba(t)
	tg := openTarget(t, srv.urlWithPassword(""))
	err, took := runAndInterrupt(t, tg, func() { srv.Stop() })
	t.Logf("error %v after %v", err, took)
	if !strings.Contains(err.Error(), "connection lost") || strings.Contains(err.Error(), testPassword) || errors.Is(err, bench.ErrTarget) {
		t.Errorf("error %q; want a failure saying the connection was lost", err)
	}
	if took > 3*time.Second {
		t.Errorf("the run ended %v after the server went away", took)
	}
}

// TestHungServer: a server that stops answering (SIGSTOP) ends the run
// after the I/O timeout.
func TestHungServer(t *testing.T) {
	srv := startSamba(t)
	tg := openTarget(t, srv.urlWithPassword("?iotimeout=1s"))
	pgid := srv.Pid() // smbd leads its own process group
	defer syscall.Kill(-pgid, syscall.SIGCONT)
	err, took := runAndInterrupt(t, tg, func() { syscall.Kill(-pgid, syscall.SIGSTOP) })
	t.Logf("error %v after %v", err, took)
	if !strings.Contains(err.Error(), "no reply within the timeout") || errors.Is(err, bench.ErrTarget) {
		t.Errorf("error %q; want a failure saying the server did not reply", err)
	}
	if took < 900*time.Millisecond || took > 4*time.Second {
		t.Errorf("the run ended %v after the server hung; want about the 1 s I/O timeout", took)
	}
}
