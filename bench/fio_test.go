package bench

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files of testdata/fio")

// TestFioGolden parses every job file of testdata/fio and compares the jobs
// (or the error, for the bad-*.fio files) with its .golden file.
func TestFioGolden(t *testing.T) {
	files, err := filepath.Glob("../testdata/fio/*.fio")
	if err != nil || len(files) == 0 {
		t.Fatalf("no job files: %v", err)
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			jobs, err := ParseFio(name, bytes.NewReader(data))
			var got string
			switch {
			case strings.HasPrefix(name, "bad-"):
				if err == nil {
					t.Fatalf("parsed a bad job file: %+v", jobs)
				}
				if !errors.Is(err, ErrJob) {
					t.Errorf("error %v does not wrap ErrJob", err)
				}
				got = err.Error() + "\n"
			case err != nil:
				t.Fatal(err)
			default:
				for _, j := range jobs {
					got += describeJob(j) + "\n"
				}
			}
			golden := strings.TrimSuffix(path, ".fio") + ".golden"
			if *rewrite {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestFioGolden -rewrite)", err)
			}
			if got != string(want) {
				t.Errorf("%s:\ngot:\n%swant:\n%s", name, got, want)
			}
		})
	}
}

// describeJob lists a job's non-zero fields, one job per line.
func describeJob(j Job) string {
	v := reflect.ValueOf(j)
	var parts []string
	for i := range v.NumField() {
		f := v.Field(i)
		if f.IsZero() && v.Type().Field(i).Name != "RW" {
			continue
		}
		val := fmt.Sprint(f.Interface())
		if d, ok := f.Interface().(time.Duration); ok {
			val = d.String()
		}
		parts = append(parts, v.Type().Field(i).Name+"="+val)
	}
	return strings.Join(parts, " ")
}

// TestFioUnits checks fio's size and time units.
func TestFioUnits(t *testing.T) {
	for _, tc := range []struct {
		in   string
		kb   int64
		want int64
	}{
		{"4k", 1024, 4096}, {"4K", 1024, 4096}, {"4kb", 1024, 4096}, {"4KiB", 1024, 4000}, {"1m", 1024, 1 << 20},
		{"1g", 1024, 1 << 30}, {"512", 1024, 512}, {"4k", 1000, 4000}, {"4KiB", 1000, 4096}, {"1.5m", 1024, 3 << 19},
	} {
		got, err := parseSize(tc.in, tc.kb)
		if err != nil || got != tc.want {
			t.Errorf("parseSize(%q, kb_base=%d) = %d, %v; want %d", tc.in, tc.kb, got, err, tc.want)
		}
	}
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{{"30", 30 * time.Second}, {"500ms", 500 * time.Millisecond}, {"2m", 2 * time.Minute}, {"100us", 100 * time.Microsecond}, {"1h", time.Hour}} {
		if got, err := parseTime(tc.in); err != nil || got != tc.want {
			t.Errorf("parseTime(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// FuzzParseFio: the parser never panics, and whatever it accepts is a
// valid job set that formats and re-validates.
func FuzzParseFio(f *testing.F) {
	files, _ := filepath.Glob("../testdata/fio/*.fio")
	for _, p := range files {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("[j]\nrw=randrw\nrwmixwrite=100\nbssplit=4k:8k/20\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		jobs, err := ParseFio("fuzz.fio", bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, ErrJob) {
				t.Fatalf("error %v does not wrap ErrJob", err)
			}
			return
		}
		for i := range jobs {
			if err := jobs[i].Validate(); err != nil {
				t.Fatalf("accepted job fails validation: %v", err)
			}
			_ = describeJob(jobs[i])
		}
	})
}
