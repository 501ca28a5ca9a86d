package main

import (
	"bytes"
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
