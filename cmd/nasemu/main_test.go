package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
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
