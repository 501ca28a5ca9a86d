package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

func TestExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"--version"}, 0, "nasemu"},
		{[]string{"--help"}, 0, "presets"},
		{[]string{}, 2, "Usage"},
		{[]string{"no-such-command"}, 2, "unknown command"},
		{[]string{"presets", "drives"}, 0, "DRIVE"},
		{[]string{"presets", "nonsense"}, 2, "unknown preset list"},
		{[]string{"presets", "--no-such-flag"}, 2, "unknown flag"},
	} {
		var out bytes.Buffer
		code := run(tc.args, &out, &out)
		if code != tc.code || !strings.Contains(out.String(), tc.out) {
			t.Errorf("nasemu %v: exit %d, output %q; want exit %d and %q", tc.args, code, out.String(), tc.code, tc.out)
		}
	}
}

// NASEMU_CPUPROFILE writes a CPU profile in pprof's format; a path
// that cannot be created is bad input, named in the message.
func TestCPUProfileEnv(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.prof")
	t.Setenv(cpuProfileEnv, path)
	var out bytes.Buffer
	if code := run([]string{"bench", "--target", "sim:ds1817-raid5-hdd-smb-1g", "--suite", "cdm", "--runtime", "1s"}, &out, &out); code != 0 {
		t.Fatalf("bench with a profile: exit %d: %s", code, out.String())
	}
	// A pprof profile is a gzip-compressed protocol buffer.
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("the profile is not gzip data: %v", err)
	}
	if n, err := io.Copy(io.Discard, z); err != nil || n == 0 {
		t.Fatalf("the profile: %d bytes, %v", n, err)
	}

	t.Setenv(cpuProfileEnv, filepath.Join(t.TempDir(), "no-such-dir", "cpu.prof"))
	out.Reset()
	if code := run([]string{"presets", "drives"}, &out, &out); code != 2 || !strings.Contains(out.String(), cpuProfileEnv) {
		t.Errorf("an uncreatable profile path: exit %d, %q; want exit 2 naming %s", code, out.String(), cpuProfileEnv)
	}
}

// --version names the commit the build records, and says when it has none.
func TestVersionString(t *testing.T) {
	info := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "8de62031ca58ee24468aa90bd9f34fcbc8881814"},
		{Key: "vcs.time", Value: "2026-12-01T17:30:00Z"},
		{Key: "vcs.modified", Value: "true"},
	}}
	want := "nasemu (devel), commit 8de62031ca58 of 2026-12-01T17:30:00Z with uncommitted changes, go1.26.0"
	if got := versionString(info, true); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	info.Main.Version, info.Settings = "v0.3.0", nil
	if got := versionString(info, true); !strings.HasPrefix(got, "nasemu v0.3.0, no commit recorded") {
		t.Errorf("a release without a VCS stamp: %q", got)
	}
	var out bytes.Buffer
	if code := run([]string{"--version"}, &out, &out); code != 0 || !strings.HasPrefix(out.String(), "nasemu ") || strings.Contains(out.String(), "dev\n") {
		t.Errorf("--version: exit %d, %q", code, out.String())
	}
}
