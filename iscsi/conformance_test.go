package iscsi

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/nasemu/nasemu/emu"
)

var update = flag.Bool("update", false, "rewrite the recorded conformance passing list")

const passingList = "../testdata/iscsi/conformance-pass.txt"

// skipsKey starts the line of the passing list that records how many
// tests were skipped as not implemented.
const skipsKey = "# skipped as not implemented:"

// notImplemented counts iscsi-test-cu's "[SKIPPED] ... not implemented"
// lines.
func notImplemented(out string) int {
	n := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "[SKIPPED]") && strings.Contains(line, "not implemented") {
			n++
		}
	}
	return n
}

// cuResults parses CUnit's automated (XML) report into test → passed.
func cuResults(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	suiteRE := regexp.MustCompile(`<SUITE_NAME>\s*(\S+)\s*</SUITE_NAME>`)
	testRE := regexp.MustCompile(`<CUNIT_RUN_TEST_(SUCCESS|FAILURE)>\s*<TEST_NAME>\s*(\S+)\s*</TEST_NAME>`)
	res := map[string]bool{}
	suite := ""
	for _, line := range strings.SplitAfter(string(b), "</CUNIT_RUN_TEST_RECORD>") {
		if m := suiteRE.FindAllStringSubmatch(line, -1); m != nil {
			suite = m[len(m)-1][1]
		}
		for _, m := range testRE.FindAllStringSubmatch(line, -1) {
			name := suite + "." + m[2]
			// A test with several failures appears once per failure.
			res[name] = res[name] || m[1] == "SUCCESS"
			if m[1] == "FAILURE" {
				res[name] = false
			}
		}
	}
	return res
}

// TestConformance runs libiscsi's iscsi-test-cu (the ALL family, the one
// compared with tgtd by scripts/iscsi-conformance.sh) against the target
// and fails when a test recorded as passing fails now.
func TestConformance(t *testing.T) {
	tool := needTool(t, "iscsi-test-cu")
	if testing.Short() {
		t.Skip("iscsi-test-cu takes about 30 s")
	}
	const size = 256 << 20
	tt := startFreeTarget(t, size)
	dir := t.TempDir()
	url := "iscsi://" + tt.addr + "/" + testIQN + "/0"
	cmd := exec.Command(tool, "--dataloss", "--xml", "--test", "ALL", url)
	cmd.Dir = dir
	// The exit status is non-zero when any test fails: the XML report
	// says which.
	out, err := cmd.CombinedOutput()
	if _, serr := os.Stat(filepath.Join(dir, "CUnitAutomated-Results.xml")); serr != nil {
		t.Fatalf("iscsi-test-cu: %v\n%s", err, out)
	}
	res := cuResults(t, filepath.Join(dir, "CUnitAutomated-Results.xml"))
	var pass []string
	for name, ok := range res {
		if ok {
			pass = append(pass, name)
		}
	}
	sort.Strings(pass)
	t.Logf("iscsi-test-cu ALL: %d of %d tests pass", len(pass), len(res))
	if len(res) < 200 {
		t.Fatalf("only %d tests ran:\n%s", len(res), out)
	}
	// iscsi-test-cu counts a test whose command the target refuses as
	// not implemented as passed ("[SKIPPED] X is not implemented"): count
	// those apart, and never let them grow.
	skips := notImplemented(string(out))
	t.Logf("%d tests skipped as not implemented", skips)
	if *update {
		head := "# iscsi-test-cu --dataloss --test ALL against nasemu's target: the tests that pass.\n" +
			"# TestConformance fails when one of them fails, or when more are skipped as not implemented;\n" +
			"# rewrite with go test ./iscsi/ -run Conformance -args -update\n" +
			fmt.Sprintf("%s %d\n", skipsKey, skips)
		if err := os.WriteFile(passingList, []byte(head+strings.Join(pass, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	f, err := os.Open(passingList)
	if err != nil {
		t.Fatalf("%v (run with -update to record)", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	recorded := 0
	for sc.Scan() {
		name := strings.TrimSpace(sc.Text())
		if n, ok := strings.CutPrefix(name, skipsKey+" "); ok {
			if max, err := strconv.Atoi(n); err == nil && skips > max {
				t.Errorf("%d tests skipped as not implemented, %d recorded", skips, max)
			}
			continue
		}
		if name == "" || strings.HasPrefix(name, "#") {
			continue
		}
		recorded++
		if ok, ran := res[name]; !ran {
			t.Errorf("%s passed before and did not run now (another libiscsi version?)", name)
		} else if !ok {
			t.Errorf("%s passed before and fails now", name)
		}
	}
	if len(pass) < recorded {
		t.Errorf("%d tests pass, %d recorded", len(pass), recorded)
	}
}

// libiscsi's initiator logs in with CHAP (its own MD5 code, not ours), and
// is refused with a wrong secret.
func TestCHAPWithLibiscsi(t *testing.T) {
	tool := needTool(t, "iscsi-inq")
	const size = 1 << 20
	const secret = "libiscsi-chap-secret"
	tt := startTarget(t, freeModel(t, size), emu.NewMemStore(size), TargetConfig{CHAP: &CHAP{User: "alice", Secret: secret}})
	url := func(s string) string { return "iscsi://alice%" + s + "@" + tt.addr + "/" + testIQN + "/0" }
	out, err := exec.Command(tool, url(secret)).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Vendor:NASEMU") {
		t.Errorf("right secret: %v\n%s", err, out)
	}
	out, err = exec.Command(tool, url("wrong-secret-456")).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "Authentication failure") {
		t.Errorf("wrong secret: %v\n%s", err, out)
	}
	if l := tt.log.String(); strings.Contains(l, secret) || strings.Contains(l, "wrong-secret") {
		t.Errorf("a secret is in the log:\n%s", l)
	}
}
