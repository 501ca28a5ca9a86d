package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// smbtortureSuites are the smbtorture suites run through 'nasemu nas' and
// through a stock smbd: reads and writes, creates, renames, metadata,
// directory listings and byte-range locks.
var smbtortureSuites = []string{"smb2.rw", "smb2.create", "smb2.rename", "smb2.getinfo", "smb2.dir", "smb2.lock"}

// smbtortureKnown lists the tests that pass on a stock smbd sharing a plain
// directory and fail through 'nasemu nas', each with the reason. A test
// here is still run and reported; the test fails on any other difference.
// None today: through nas the suites pass exactly the tests they pass on
// stock smbd.
var smbtortureKnown = map[string]string{}

// smbtortureResult is one smbtorture test's outcome: success, failure,
// error, skip (or xfail, uxsuccess) as its subunit stream reports it.
type smbtortureResult struct {
	status string
	reason string
}

// parseSubunit reads smbtorture's subunit (v1) stream: "test: NAME" starts
// a test and "success|failure|error|skip|xfail|uxsuccess: NAME" ends it,
// optionally with a bracketed reason over the following lines (ended by a
// line "]"). A test started and never ended (smbtorture died in it) counts
// as an error.
func parseSubunit(out []byte) map[string]smbtortureResult {
	res := map[string]smbtortureResult{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var inReason string // the test whose reason is being read
	var reason strings.Builder
	for sc.Scan() {
		line := sc.Text()
		if inReason != "" {
			if line == "]" {
				r := res[inReason]
				r.reason = strings.TrimSpace(reason.String())
				res[inReason] = r
				inReason = ""
				reason.Reset()
			} else {
				reason.WriteString(line + "\n")
			}
			continue
		}
		key, rest, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		switch key {
		case "test":
			res[rest] = smbtortureResult{status: "error", reason: "started and never ended"}
		case "success", "successful", "failure", "fail", "error", "skip", "xfail", "uxsuccess":
			name, bracket := strings.CutSuffix(rest, " [")
			status := map[string]string{"successful": "success", "fail": "failure"}[key]
			if status == "" {
				status = key
			}
			res[name] = smbtortureResult{status: status}
			if bracket {
				inReason = name
			}
		}
	}
	return res
}

// needSmbtorture returns smbtorture's path; outside CI a missing tool
// skips the test, in CI (CI=true) it fails it.
func needSmbtorture(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("smbtorture")
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("smbtorture is not installed (CI installs samba-testsuite)")
	}
	t.Skip("smbtorture is not installed (Debian package samba-testsuite)")
	return ""
}

// smbtortureRun is one smbtorture run's results, output and duration.
type smbtortureRun struct {
	res  map[string]smbtortureResult
	out  []byte
	took time.Duration
	err  error
}

// smbtortureClient writes a private client configuration (no system
// smb.conf read, no state written outside dir) and an authentication file
// for root (the password never on a command line) and returns their paths.
func smbtortureClient(t *testing.T) (conf, auth string) {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("[global]\n\tclient min protocol = SMB2_02\n\tlog level = 0\n")
	for _, sub := range []string{"private", "lock", "state", "cache"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o700); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "\t%s = %s\n", map[string]string{"private": "private dir", "lock": "lock directory",
			"state": "state directory", "cache": "cache directory"}[sub], filepath.Join(dir, sub))
	}
	conf, auth = filepath.Join(dir, "smb.conf"), filepath.Join(dir, "auth")
	if err := os.WriteFile(conf, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(auth, []byte("username = root\npassword = "+testSMBPassword+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return conf, auth
}

// runSmbtorture runs the suites against //127.0.0.1/SHARE at addr (with
// the client configuration and credentials of smbtortureClient) and
// returns every test's result. It is safe to call from any goroutine.
func runSmbtorture(bin, conf, auth, addr, share string) smbtortureRun {
	_, port, _ := net.SplitHostPort(addr)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	args := append([]string{"--configfile=" + conf, "--authentication-file=" + auth, "--smb-ports=" + port,
		"--target=samba3", "--format=subunit", "--fullname", "--maximum-runtime=140", "//127.0.0.1/" + share}, smbtortureSuites...)
	cmd := exec.CommandContext(ctx, bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Run()
	r := smbtortureRun{res: parseSubunit(out.Bytes()), out: out.Bytes(), took: time.Since(start)}
	if len(r.res) == 0 {
		r.err = fmt.Errorf("smbtorture against %s reported no test (%v):\n%s", addr, err, tail(r.out, 3000))
	}
	return r
}

// tail returns the end of b.
func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// suiteOf returns the suite ("smb2.lock") of a test name ("smb2.lock.cancel").
func suiteOf(name string) string {
	for _, s := range smbtortureSuites {
		if strings.HasPrefix(name, s+".") {
			return s
		}
	}
	return ""
}

// TestSmbtortureNasMatchesStock: smbtorture's smb2.rw, create, rename,
// getinfo, dir and lock suites pass through 'nasemu nas' (an SSD array at
// time scale 0.01, so that the model's pacing costs little wall time)
// every test they pass on a stock smbd sharing a plain directory, except
// the known differences listed with their reasons in smbtortureKnown.
// It tells the configurations apart: a share with DOS attributes and EAs
// off (smb.SambaConfig.NoXattrs, which the share's smbd once always had)
// fails smb2.getinfo.getinfo_access, getinfo.qfile_buffercheck and
// rename.close-full-information, which pass on stock smbd.
func TestSmbtortureNasMatchesStock(t *testing.T) {
	needSamba(t)
	bin := needSmbtorture(t)
	stock := plainSamba(t)
	info := startNas(t, append(nasArgs(t, "ds1817-raid0-ssd-smb-1g", freePort(t)), "--time-scale", "0.01"))

	// Both runs at once, each with its own client state: the suites take
	// about 30 s each, mostly waiting on smbtorture's own timeouts.
	stockConf, stockAuth := smbtortureClient(t)
	nasConf, nasAuth := smbtortureClient(t)
	var stockRun, nasRun smbtortureRun
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		stockRun = runSmbtorture(bin, stockConf, stockAuth, stock.Addr(), stock.Share())
	}()
	go func() {
		defer wg.Done()
		nasRun = runSmbtorture(bin, nasConf, nasAuth, info.SMB.Addr(), info.SMB.Share())
	}()
	wg.Wait()
	for _, r := range []smbtortureRun{stockRun, nasRun} {
		if r.err != nil {
			t.Fatal(r.err)
		}
	}
	cmp := compareSmbtorture(stockRun.res, nasRun.res, smbtortureKnown)
	for _, s := range smbtortureSuites {
		c := cmp.counts[s]
		t.Logf("%-13s stock %d/%d passed, nas %d/%d", s, c.stockPass, c.stockRun, c.pass, c.run)
		if c.stockRun == 0 {
			t.Errorf("%s: no test ran on stock smbd", s)
		}
	}
	t.Logf("smbtorture took %v on stock smbd, %v through nas", stockRun.took.Round(time.Second), nasRun.took.Round(time.Second))
	for _, k := range cmp.known {
		t.Logf("known difference: %s", k)
	}
	for _, p := range cmp.problems {
		t.Error(p)
	}
	if len(cmp.regressions) > 0 {
		t.Errorf("%d smbtorture tests pass on stock smbd and fail through nasemu nas:\n%s\nnas smbtorture output (end):\n%s",
			len(cmp.regressions), strings.Join(cmp.regressions, "\n"), tail(nasRun.out, 4000))
	}
}

// smbtortureCount is one suite's tests run and passed through nas and on
// stock smbd.
type smbtortureCount struct{ run, pass, stockRun, stockPass int }

// smbtortureComparison is what compareSmbtorture found.
type smbtortureComparison struct {
	counts      map[string]smbtortureCount // by suite
	regressions []string                   // passed on stock smbd, not through nas
	known       []string                   // the same, listed in known
	problems    []string                   // stale entries of known
}

// compareSmbtorture compares the results through nas with those on stock
// smbd: every test that passed on stock smbd and not through nas (failed,
// errored, skipped or not run) is a regression unless known lists it; an
// entry of known that does not fail that way is a problem (a stale list
// would hide a later regression of that test).
func compareSmbtorture(stock, nas map[string]smbtortureResult, known map[string]string) smbtortureComparison {
	cmp := smbtortureComparison{counts: map[string]smbtortureCount{}}
	names := slices.Collect(maps.Keys(stock))
	for name := range nas {
		if _, ok := stock[name]; !ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		suite := suiteOf(name)
		if suite == "" {
			continue
		}
		s, n := stock[name], nas[name]
		c := cmp.counts[suite]
		c.stockRun += b2i(s.status != "")
		c.stockPass += b2i(s.status == "success")
		c.run += b2i(n.status != "")
		c.pass += b2i(n.status == "success")
		cmp.counts[suite] = c
		if s.status == "success" && n.status != "success" {
			line := fmt.Sprintf("%s: %s through nas: %s", name, or(n.status, "not run"), firstLine(n.reason))
			if why, ok := known[name]; ok {
				cmp.known = append(cmp.known, line+" (known: "+why+")")
			} else {
				cmp.regressions = append(cmp.regressions, line)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(known)) {
		if s, n := stock[name], nas[name]; s.status != "success" || n.status == "success" {
			cmp.problems = append(cmp.problems, fmt.Sprintf("%s is listed as a known difference but is %s on stock smbd and %s through nas: take it off the list",
				name, or(s.status, "not run"), or(n.status, "not run")))
		}
	}
	return cmp
}

// TestCompareSmbtorture: the parser reads every kind of subunit line, a
// reason block and a test that never ended; the comparison counts per
// suite and reports exactly the tests that pass on stock smbd and not
// through nas, apart from the known ones, and flags stale known entries.
func TestCompareSmbtorture(t *testing.T) {
	stock := parseSubunit([]byte(`time: 2026-01-01 00:00:00
test: smb2.rw.rw1
success: smb2.rw.rw1
test: smb2.rw.rw2
success: smb2.rw.rw2
test: smb2.lock.cancel
success: smb2.lock.cancel
test: smb2.lock.async
success: smb2.lock.async
test: smb2.dir.one
failure: smb2.dir.one [
(dir.c:471) status was NT_STATUS_INVALID_PARAMETER
]
test: smb2.dir.many
success: smb2.dir.many
test: smb2.dir.find
success: smb2.dir.find
`))
	nas := parseSubunit([]byte(`test: smb2.rw.rw1
success: smb2.rw.rw1
test: smb2.rw.rw2
failure: smb2.rw.rw2 [
(rw.c:1) data mismatch
second line
]
test: smb2.lock.cancel
skip: smb2.lock.cancel [
not supported
]
test: smb2.dir.one
success: smb2.dir.one
test: smb2.dir.many
error: smb2.dir.many [
]
test: smb2.dir.find
`))
	if got := nas["smb2.rw.rw2"]; got.status != "failure" || got.reason != "(rw.c:1) data mismatch\nsecond line" {
		t.Errorf("rw2 parsed as %+v", got)
	}
	if got := nas["smb2.dir.find"]; got.status != "error" {
		t.Errorf("a test that never ended parsed as %+v, want an error", got)
	}
	cmp := compareSmbtorture(stock, nas, map[string]string{"smb2.lock.cancel": "reason", "smb2.dir.one": "stale"})
	want := []string{
		"smb2.dir.find: error through nas: started and never ended",
		"smb2.dir.many: error through nas: ",
		"smb2.lock.async: not run through nas: ",
		"smb2.rw.rw2: failure through nas: (rw.c:1) data mismatch",
	}
	if !slices.Equal(cmp.regressions, want) {
		t.Errorf("regressions\n%q\nwant\n%q", cmp.regressions, want)
	}
	if len(cmp.known) != 1 || !strings.HasPrefix(cmp.known[0], "smb2.lock.cancel: skip") {
		t.Errorf("known %q", cmp.known)
	}
	if len(cmp.problems) != 1 || !strings.HasPrefix(cmp.problems[0], "smb2.dir.one ") {
		t.Errorf("problems %q", cmp.problems)
	}
	wantCounts := map[string]smbtortureCount{
		"smb2.rw":   {run: 2, pass: 1, stockRun: 2, stockPass: 2},
		"smb2.lock": {run: 1, pass: 0, stockRun: 2, stockPass: 2},
		"smb2.dir":  {run: 3, pass: 1, stockRun: 3, stockPass: 2},
	}
	if !maps.Equal(cmp.counts, wantCounts) {
		t.Errorf("counts %+v, want %+v", cmp.counts, wantCounts)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
