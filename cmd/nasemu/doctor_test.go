package main

import (
	"bytes"
	"net"
	"os"
	"strings"
	"testing"
)

// doctor reports each check with what it found, says how to fix what
// fails, and fails itself then: a port already taken is found.
func TestDoctor(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	freeAddr := free.Addr().String()
	free.Close()

	var out bytes.Buffer
	code := run([]string{"doctor", "--smb", taken.Addr().String(), "--metrics", freeAddr}, &out, &out)
	lines := strings.Split(out.String(), "\n")
	line := func(prefix string) string {
		for i, l := range lines {
			if strings.HasPrefix(l, prefix) {
				if i+1 < len(lines) && strings.Contains(lines[i+1], "fix:") {
					return l + "\n" + lines[i+1]
				}
				return l
			}
		}
		t.Errorf("doctor reports no %q:\n%s", prefix, out.String())
		return ""
	}
	if l := line("--smb " + taken.Addr().String()); !strings.Contains(l, "fail") || !strings.Contains(l, "fix: stop what listens there") {
		t.Errorf("a taken port: %q", l)
	}
	if l := line("--metrics " + freeAddr); !strings.Contains(l, "ok") {
		t.Errorf("a free port: %q", l)
	}
	_, devErr := os.Stat("/dev/fuse")
	if l := line("FUSE device"); (devErr == nil) != strings.Contains(l, " ok ") {
		t.Errorf("/dev/fuse stat %v, doctor says %q", devErr, l)
	}
	line("fs.fuse.max_pages_limit")
	line("Samba")
	line("libiscsi tools")
	if code != 1 || !strings.Contains(out.String(), "checks failed") {
		t.Errorf("doctor with a taken port: exit %d; want 1 and the count of failed checks:\n%s", code, out.String())
	}
}

func TestDoctorMaxPages(t *testing.T) {
	for _, tc := range []struct {
		pages  int
		status string
		fix    string
	}{
		{1024, "ok", ""},
		{256, "warn", "sysctl fs.fuse.max_pages_limit=1024"},
		{-1, "warn", "Linux 6.13"},
	} {
		f := checkMaxPages(tc.pages)
		if f.status != tc.status || !strings.Contains(f.fix, tc.fix) || (tc.fix == "") != (f.fix == "") {
			t.Errorf("%d pages: %+v; want %s and a fix with %q", tc.pages, f, tc.status, tc.fix)
		}
	}
}

func TestDoctorPipeMaxSize(t *testing.T) {
	for _, tc := range []struct {
		size   int
		status string
		fix    string
	}{
		{4 << 20, "ok", ""},
		{2 << 20, "ok", ""},
		{1 << 20, "warn", "sysctl fs.pipe-max-size=2097152"},
		{-1, "warn", "sysctl fs.pipe-max-size=2097152"},
	} {
		f := checkPipeMaxSize(tc.size)
		if f.status != tc.status || !strings.Contains(f.fix, tc.fix) || (tc.fix == "") != (f.fix == "") {
			t.Errorf("%d bytes: %+v; want %s and a fix with %q", tc.size, f, tc.status, tc.fix)
		}
	}
}
