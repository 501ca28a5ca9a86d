package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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
