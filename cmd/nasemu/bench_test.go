package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nasemu/nasemu/bench"
	"github.com/nasemu/nasemu/models/fixed"
)

// withFixedResolver makes sim:fixed a fixed-cost device for the test.
func withFixedResolver(t *testing.T) {
	old := simResolver
	simResolver = func(setup string, seed uint64) (bench.SimSetup, error) {
		if setup != "fixed" {
			return old(setup, seed)
		}
		d, err := fixed.New(fixed.Config{Capacity: 8 << 30, Units: 4, Read: 200 * time.Microsecond, Write: 300 * time.Microsecond})
		return bench.SimSetup{Device: d, Description: "fixed 200/300 µs × 4"}, err
	}
	t.Cleanup(func() { simResolver = old })
}

func TestBenchBadInput(t *testing.T) {
	withFixedResolver(t)
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro.img")
	if err := os.WriteFile(ro, make([]byte, 1<<20), 0o444); err != nil {
		t.Fatal(err)
	}
	writeJob := filepath.Join(dir, "w.fio")
	if err := os.WriteFile(writeJob, []byte("[w]\nrw=randwrite\nsize=64k\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--target", "sim:fixed", "--suite", "nosuch"}, `unknown suite "nosuch"`},
		{[]string{"bench", "--target", "ftp://x/y", "--suite", "cdm"}, `unknown target scheme "ftp"`},
		{[]string{"bench", "--target", filepath.Join(dir, "missing"), "--suite", "cdm"}, "no such file or directory"},
		{[]string{"bench", "--target", ro, "--job", writeJob}, "read-only"},
		{[]string{"bench", "--target", "sim:fixed", "--job", "../../testdata/fio/bad-many.fio"}, "bad-many.fio:3: option bs: a block size of 0"},
		{[]string{"bench", "--target", "sim:fixed", "--job", "../../testdata/fio/bad-section.fio"}, "bad-section.fio:1"},
		{[]string{"bench", "--target", "sim:fixed", "--job", filepath.Join(dir, "none.fio")}, "no such file"},
		{[]string{"bench", "--target", "sim:no-such-drive", "--suite", "cdm"}, "no-such-drive"},
		{[]string{"bench", "--suite", "cdm"}, "--target is required"},
		{[]string{"bench", "--target", "sim:fixed"}, "exactly one of --suite, --job"},
		{[]string{"bench", "--target", "sim:fixed", "--suite", "cdm", "--format", "xml"}, `unknown format "xml"`},
		{[]string{"bench", "--target", "sim:fixed", "--suite", "cdm", "--size", "lots"}, "--size"},
		{[]string{"bench", "--target", "sim:fixed", "--suite", "cdm", "--direct", "2"}, "--direct"},
	} {
		var out bytes.Buffer
		code := run(tc.args, &out, &out)
		if code != 2 || !strings.Contains(out.String(), tc.want) {
			t.Errorf("nasemu %v: exit %d, output %q; want exit 2 and %q", tc.args, code, out.String(), tc.want)
		}
	}
}

func TestBenchOutputs(t *testing.T) {
	withFixedResolver(t)
	outDir := filepath.Join(t.TempDir(), "out")
	runJSON := func(seed string) string {
		var out, errs bytes.Buffer
		code := run([]string{"bench", "--target", "sim:fixed", "--suite", "cdm", "--runtime", "200ms", "--seed", seed,
			"--format", "json", "--out", outDir}, &out, &errs)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errs.String())
		}
		return out.String()
	}
	a := runJSON("3")
	if b := runJSON("3"); a != b {
		t.Error("the same seed gave different JSON")
	}
	var rep struct {
		Target  string
		Mode    string
		Results []struct {
			Name string
			IOPS float64 `json:"iops"`
		}
	}
	if err := json.Unmarshal([]byte(a), &rep); err != nil {
		t.Fatal(err)
	}
	// 4 units of 200 µs: RND4K Q32T1 read is 20000 IOPS, Q1T1 5000.
	if rep.Target != "sim:fixed" || rep.Mode != "virtual" || len(rep.Results) != 8 ||
		rep.Results[2].Name != "RND4K Q32T1 read" || rep.Results[2].IOPS < 19900 || rep.Results[3].IOPS != 5000 {
		t.Errorf("report %+v", rep)
	}
	if files, _ := filepath.Glob(filepath.Join(outDir, "*.csv")); len(files) != 8 {
		t.Errorf("--out wrote %d series files, want 8", len(files))
	}
	if _, err := os.Stat(filepath.Join(outDir, "results.json")); err != nil {
		t.Error(err)
	}
	// A real directory: the same jobs, the same JSON shape, real time.
	var out, errs bytes.Buffer
	if code := run([]string{"bench", "--target", t.TempDir(), "--job", "../../testdata/fio/files.fio", "--size", "1MiB", "--format", "json"}, &out, &errs); code != 0 {
		t.Fatalf("path target: exit %d: %s", code, errs.String())
	}
	var real struct {
		Mode    string
		Results []struct {
			Files int64
			Bytes int64
		}
	}
	if err := json.Unmarshal(out.Bytes(), &real); err != nil {
		t.Fatal(err)
	}
	if real.Mode != "real" || len(real.Results) != 2 || real.Results[1].Files != 100 || real.Results[1].Bytes != 100*10485 {
		t.Errorf("path target report %+v", real)
	}
	for _, format := range []string{"table", "csv"} {
		var out bytes.Buffer
		code := run([]string{"bench", "--target", "sim:fixed", "--job", "../../testdata/fio/files.fio", "--format", format}, &out, &out)
		if code != 0 || !strings.Contains(out.String(), "upload") {
			t.Errorf("--format %s: exit %d, output %q", format, code, out.String())
		}
	}
}

// TestBenchFioStyle: fio's command-line jobs, a job file on standard input
// and fio's output formats; bad values and oversized jobs exit with 2.
func TestBenchFioStyle(t *testing.T) {
	args := []string{"bench", "--target", "sim:wd-red-sn700-500g", "--name=x", "--rw=randrw", "--bs=4k", "--filesize=16m",
		"--runtime=100ms", "--time_based", "--iodepth=4", "--output-format=json"}
	var out, errs bytes.Buffer
	if code := run(args, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	var doc struct {
		Version string `json:"fio version"`
		Jobs    []struct {
			Name        string `json:"jobname"`
			Read, Write struct {
				IOPS float64 `json:"iops"`
			}
		}
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(doc.Version, "nasemu") || len(doc.Jobs) != 1 || doc.Jobs[0].Read.IOPS == 0 || doc.Jobs[0].Write.IOPS == 0 {
		t.Fatalf("fio JSON %+v", doc)
	}

	stdin := filepath.Join(t.TempDir(), "job.fio")
	if err := os.WriteFile(stdin, []byte("[from-stdin]\nrw=read\nbs=64k\nfilesize=8m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(stdin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	old := os.Stdin
	os.Stdin = f
	out.Reset()
	code := run([]string{"bench", "--target", "sim:wd-red-sn700-500g", "--job", "-", "--output-format=terse"}, &out, &errs)
	os.Stdin = old
	if code != 0 || !strings.HasPrefix(out.String(), "3;fio-3.33 (nasemu);from-stdin;") {
		t.Fatalf("--job -: exit %d: %s%s", code, out.String(), errs.String())
	}

	for _, bad := range [][]string{
		{"--name=x", "--bs=0"},
		{"--name=x", "--rw=randread", "--bs=1g", "--iodepth=65536"},
		{"--name=x", "--iodepth=4096", "--numjobs=4096"},
		{"--name=x", "--output-format=xml"},
	} {
		start := time.Now()
		errs.Reset()
		code := run(append([]string{"bench", "--target", "sim:wd-red-sn700-500g"}, bad...), &out, &errs)
		if code != 2 || time.Since(start) > 5*time.Second {
			t.Errorf("%q: exit %d after %v: %s", bad, code, time.Since(start), errs.String())
		}
	}
}
