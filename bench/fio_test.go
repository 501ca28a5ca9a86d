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

	"github.com/nasemu/nasemu/models"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden files of testdata/fio")

// TestFioGolden parses every job file of testdata/fio and compares the jobs
// (or the error, for the bad-*.fio files) with its .golden file.
func TestFioGolden(t *testing.T) {
	t.Setenv("NASEMU_FIO_TEST_SIZE", "1m")
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

// fio's startdelay counts from the start of the run: a job of a later
// group starts as soon as its group does once the delay has passed (fio
// measures it from its own start), and waits out only what is left of it
// otherwise. Jobs built in (a suite's idle time between tests) keep a
// delay per group.
func TestFioStartDelayFromRunStart(t *testing.T) {
	jobs, err := ParseFio("sd.fio", strings.NewReader(`[global]
rw=randread
bs=4k
size=16m
runtime=1
time_based=1
startdelay=2
[a]
[b]
stonewall
[c]
stonewall
startdelay=4500ms
`))
	if err != nil {
		t.Fatal(err)
	}
	var arrivals []time.Duration
	dev := &funcDevice{capacity: 1 << 30, submit: func(at time.Duration, r models.Request) (time.Duration, error) {
		if r.Op == models.Read { // not the layout's writes
			arrivals = append(arrivals, at)
		}
		return at + time.Millisecond, nil
	}}
	mustRun(t, NewSim("sim:func", SimSetup{Device: dev}), jobs, Options{})
	// Job a runs 2–3 s, b right after it 3–4 s, c waits until 4.5 s.
	var idle []time.Duration
	for i := 1; i < len(arrivals); i++ {
		if gap := arrivals[i] - arrivals[i-1]; gap > 100*time.Millisecond {
			idle = append(idle, gap.Round(100*time.Millisecond))
		}
	}
	if first := arrivals[0].Round(100 * time.Millisecond); first != 2*time.Second || len(idle) != 1 || idle[0] != 500*time.Millisecond {
		t.Errorf("first I/O at %v, idle stretches %v after it; want 2s and [500ms]", first, idle)
	}
	// A built-in job's delay is per group.
	for i := range jobs {
		jobs[i].DelayFromRunStart = false
	}
	arrivals = nil
	mustRun(t, NewSim("sim:func", SimSetup{Device: dev}), jobs, Options{})
	idle = idle[:0]
	for i := 1; i < len(arrivals); i++ {
		if gap := arrivals[i] - arrivals[i-1]; gap > 100*time.Millisecond {
			idle = append(idle, gap.Round(100*time.Millisecond))
		}
	}
	if len(idle) != 2 || idle[0] != 2*time.Second || idle[1] != 4500*time.Millisecond {
		t.Errorf("per-group delays: idle stretches %v, want [2s 4.5s]", idle)
	}
}
