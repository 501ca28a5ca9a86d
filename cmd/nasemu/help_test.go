package main

import (
	"bytes"
	"strings"
	"testing"
)

// Every command's --help ends with two or three examples of it, and
// 'nasemu help COMMAND' prints the same.
func TestHelpExamples(t *testing.T) {
	for _, name := range commandNames() {
		var out bytes.Buffer
		if code := run([]string{name, "--help"}, &out, &out); code != 0 {
			t.Errorf("%s --help: exit %d: %s", name, code, out.String())
			continue
		}
		_, ex, ok := strings.Cut(out.String(), "\nExamples:\n")
		if !ok {
			t.Errorf("%s --help has no examples:\n%s", name, out.String())
			continue
		}
		lines := strings.Split(strings.TrimSuffix(ex, "\n"), "\n")
		if len(lines) < 2 || len(lines) > 3 {
			t.Errorf("%s --help: %d examples, want 2 or 3:\n%s", name, len(lines), ex)
		}
		for _, l := range lines {
			if !strings.HasPrefix(l, "  ") || !strings.Contains(l, "nasemu "+name) {
				t.Errorf("%s --help: example %q is not an indented 'nasemu %s' command line", name, l, name)
			}
		}
		var help bytes.Buffer
		if code := run([]string{"help", name}, &help, &help); code != 0 || help.String() != out.String() {
			t.Errorf("help %s: exit %d, output differs from %s --help:\n%s", name, code, name, help.String())
		}
	}
	var out bytes.Buffer
	if code := run([]string{"help", "no-such"}, &out, &out); code != 2 || !strings.Contains(out.String(), "unknown command") {
		t.Errorf("help no-such: exit %d, %q", code, out.String())
	}
	out.Reset()
	if code := run([]string{"help"}, &out, &out); code != 0 || !strings.Contains(out.String(), "Commands:") {
		t.Errorf("help: exit %d, %q", code, out.String())
	}
}
