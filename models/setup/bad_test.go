package setup

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nasemu/nasemu/models"
)

var rewrite = flag.Bool("rewrite", false, "rewrite golden files (testdata/setups-bad/*.err, testdata/*.golden) from the current output")

// badDir holds malformed setups, each NAME.yaml with its expected messages
// in NAME.err.
const badDir = "../../testdata/setups-bad"

// TestBadSetups parses every malformed setup and compares the messages
// with the golden ones: each must fail, and each message must point at a
// file and line.
func TestBadSetups(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(badDir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no malformed setups in %s (%v)", badDir, err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Parse(filepath.Base(file), data)
			if err == nil {
				t.Fatalf("%s parsed without error", file)
			}
			if !errors.Is(err, models.ErrConfig) {
				t.Errorf("error does not match models.ErrConfig: %v", err)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error is not a *setup.Error: %v", err)
			}
			got := err.Error() + "\n"
			for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
				if !strings.HasPrefix(line, filepath.Base(file)+":") {
					t.Errorf("message does not start with the file name: %q", line)
				}
			}
			golden := strings.TrimSuffix(file, ".yaml") + ".err"
			if *rewrite {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestBadSetups -rewrite to create it)", err)
			}
			if got != string(want) {
				t.Errorf("messages differ from %s:\ngot:\n%s\nwant:\n%s", golden, got, want)
			}
		})
	}
}

// TestErrorFormat pins the file:line: key: message shape that editors and
// people rely on.
func TestErrorFormat(t *testing.T) {
	_, err := Parse("ds.yaml", []byte("drives: {model: wd-red-1tb, count: 4}\nraid:\n  level: raid7\n"))
	want := `ds.yaml:3: raid.level: unknown level "raid7" (want single, raid0, raid1, raid5, raid6, raid10, jbod, shr)`
	if err == nil || err.Error() != want {
		t.Errorf("got  %v\nwant %s", err, want)
	}
	var e *Error
	if !errors.As(err, &e) || e.File != "ds.yaml" || e.Line != 3 || e.Key != "raid.level" {
		t.Errorf("fields: %+v", e)
	}
}
