package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nasemu/nasemu"
	"github.com/nasemu/nasemu/validate"
)

const header = "id,system,measured,unit,setup,workload,job,runtime,reason\n"

// quickJob is a short fio job file for the validate tests: one second of
// 1 MiB sequential reads over SMB 3 on 1GbE, which the link caps at its
// payload rate (≈118 MB/s with 1500-byte frames).
const quickJob = `[global]
filename=q.dat
size=64m
bs=1m
iodepth=8
direct=1
time_based=1
runtime=1s

[read]
rw=read
`

func writeData(t *testing.T, csv string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "quick.fio"), []byte(quickJob), 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "cases.csv")
	if err := os.WriteFile(p, []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestValidateJSON(t *testing.T) {
	data := writeData(t, header+
		"q1,test,112,MB/s,ds1817-raid1-ssd-smb-1g,fio:quick.fio,read,,\n"+
		"q2,test,1.75,x,,,,,a ratio of figures the text does not give\n")
	var out, errOut bytes.Buffer
	if code := run([]string{"validate", "--data", data, "--format", "json"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var doc struct {
		Cases []struct {
			ID        string   `json:"id"`
			Measured  float64  `json:"measured"`
			Predicted *float64 `json:"predicted"`
			Unit      string   `json:"unit"`
			ErrorPct  *float64 `json:"error_pct"`
			Reason    string   `json:"not_modelled"`
		} `json:"cases"`
		Summary struct {
			Cases       int     `json:"cases"`
			Median      float64 `json:"median_abs_error_pct"`
			Within25Pct float64 `json:"within_25_pct"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if len(doc.Cases) != 2 || doc.Summary.Cases != 1 {
		t.Fatalf("cases %+v, summary %+v", doc.Cases, doc.Summary)
	}
	q := doc.Cases[0]
	// The 1GbE link's TCP payload rate bounds a large sequential read:
	// 125 MB/s × 1448/1538 ≈ 117.7 MB/s; SMB headers take a little more.
	if q.Predicted == nil || *q.Predicted < 105 || *q.Predicted > 119 {
		t.Errorf("q1 predicted %v MB/s, want the 1GbE payload rate (105-119)", q.Predicted)
	}
	if q.ErrorPct == nil || abs(doc.Summary.Median-abs(*q.ErrorPct)) > 0.01 {
		t.Errorf("median %v, want |error| of the one case %v", doc.Summary.Median, q.ErrorPct)
	}
	if r := doc.Cases[1]; r.Predicted != nil || r.Reason == "" {
		t.Errorf("a case not modelled must say why and predict nothing: %+v", r)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestValidateTable(t *testing.T) {
	data := writeData(t, header+"q1,test system,112,MB/s,ds1817-raid1-ssd-smb-1g,fio:quick.fio,read,,\n")
	var out, errOut bytes.Buffer
	if code := run([]string{"validate", "--data", data}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{"test system", "q1", "MB/s", "summary: 1 cases predicted"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

func TestValidateBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, csv string
		args      []string
		want      string
	}{
		{"bad number", header + "q1,s,fast,MB/s,ds1817-raid1-ssd-smb-1g,fio:quick.fio,read,,\n", nil, "cases.csv:2: q1: measured \"fast\""},
		{"bad header", "id,what\n", nil, "cases.csv:1:"},
		{"no reason", header + "q1,s,1,MB/s,,,,,\n", nil, "cases.csv:2: q1: a modelled case needs setup"},
		{"bad workload", header + "q1,s,1,MB/s,x,bogus:1,read,,\n", nil, "cases.csv:2: q1: workload kind \"bogus\""},
		{"duplicate", header + "q1,s,1,MB/s,,,,,r\nq1,s,1,MB/s,,,,,r\n", nil, "cases.csv:3: id q1 already defined on line 2"},
		{"unknown setup", header + "q1,s,1,MB/s,no-such-setup,fio:quick.fio,read,,\n", nil, "cases.csv:2: q1"},
		{"format", header + "q1,s,1,MB/s,,,,,r\n", []string{"--format", "xml"}, "unknown format"},
	} {
		data := writeData(t, tc.csv)
		var out, errOut bytes.Buffer
		code := run(append([]string{"validate", "--data", data}, tc.args...), &out, &errOut)
		if code != 2 || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and %q", tc.name, code, errOut.String(), tc.want)
		}
	}
	var out bytes.Buffer
	if code := run([]string{"validate", "--data", filepath.Join(t.TempDir(), "none.csv")}, &out, &out); code != 2 {
		t.Errorf("a missing data file: exit %d, want 2", code)
	}
}

// The reference data is built in: outside the source tree, the default
// cases load and every job file they name is there beside them.
func TestValidateBuiltInData(t *testing.T) {
	t.Chdir(t.TempDir())
	name, f, files, err := openCases("")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cases, err := validate.Load(name, f)
	if err != nil {
		t.Fatal(err)
	}
	jobs := 0
	for _, c := range cases {
		if file, ok := strings.CutPrefix(c.Workload, "fio:"); ok {
			jobs++
			if _, err := fs.Stat(files, file); err != nil {
				t.Errorf("%s: %v", c.ID, err)
			}
		}
	}
	if len(cases) < 300 || jobs == 0 {
		t.Errorf("%d built-in cases, %d with a job file; want the ~300 reviewed ones", len(cases), jobs)
	}
}

// TestBenchAgreesWithValidate runs a sample of the reference rows both
// ways — "nasemu validate" on the row, and "nasemu bench --target
// sim:SETUP" with the row's workload as a user would run it (every job of
// the suite or job file, unbuffered jobs unbuffered) — and wants the same
// figure. The sample covers each client path: on the machine itself (fio
// direct=1 on a local array), over SMB and over iSCSI.
func TestBenchAgreesWithValidate(t *testing.T) {
	raw, err := fs.ReadFile(nasemu.Reference, nasemu.ReferenceCases)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		id, _, _ := strings.Cut(line, ",")
		rows[id] = line
	}
	for _, id := range []string{
		"s001-iometer-raid5-wdse-seqread",          // local, fio job file
		"s003-diskspd-smb-1g-mbps-raid5-hdd-write", // SMB, unbuffered write-through
		"s003-diskspd-iscsi-1g-mbps-raid5-hdd-read",
		"s003-diskspd-smb-1g-iops-raid5-hdd-read", // SMB, a built-in suite
	} {
		row, ok := rows[id]
		if !ok {
			t.Fatalf("no reference row %s", id)
		}
		f := strings.Split(row, ",")
		unit, setupName, workload, job, runtime := f[3], f[4], f[5], f[6], f[7]

		dir := t.TempDir()
		data := filepath.Join(dir, "cases.csv")
		if err := os.WriteFile(data, []byte(header+row+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		args := []string{"bench", "--target", "sim:" + setupName, "--format", "json", "--quiet"}
		kind, arg, _ := strings.Cut(workload, ":")
		if kind == "fio" {
			body, err := fs.ReadFile(nasemu.Reference, arg)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, arg), body, 0o644); err != nil {
				t.Fatal(err)
			}
			args = append(args, "--job", filepath.Join(dir, arg))
		} else {
			args = append(args, "--suite", arg)
		}
		if runtime != "" {
			args = append(args, "--runtime", runtime)
		}

		var vout, bout, errOut bytes.Buffer
		if code := run([]string{"validate", "--data", data, "--format", "json"}, &vout, &errOut); code != 0 {
			t.Fatalf("%s: validate exit %d: %s", id, code, errOut.String())
		}
		var v struct {
			Cases []struct {
				Predicted float64 `json:"predicted"`
			} `json:"cases"`
		}
		if err := json.Unmarshal(vout.Bytes(), &v); err != nil || len(v.Cases) != 1 {
			t.Fatalf("%s: validate: %v: %s", id, err, vout.String())
		}
		if code := run(args, &bout, &errOut); code != 0 {
			t.Fatalf("%s: bench exit %d: %s", id, code, errOut.String())
		}
		var b struct {
			Results []struct {
				Name string  `json:"name"`
				IOPS float64 `json:"iops"`
				MBps float64 `json:"mbps"`
			} `json:"results"`
		}
		if err := json.Unmarshal(bout.Bytes(), &b); err != nil {
			t.Fatalf("%s: bench: %v", id, err)
		}
		got := -1.0
		for _, r := range b.Results {
			if r.Name == job {
				got = r.MBps
				if unit == "IOPS" {
					got = r.IOPS
				}
			}
		}
		want := v.Cases[0].Predicted
		t.Logf("%s: validate %.1f, bench %.1f %s", id, want, got, unit)
		if got <= 0 || abs(got/want-1) > 0.02 {
			t.Errorf("%s: bench sim:%s %q gives %.1f %s, validate %.1f", id, setupName, job, got, unit, want)
		}
	}
}

// TestValidateCross: --cross reports fitted and left-out error per review
// and for all; --leave-out predicts one review's rows; a review that is
// not in the data is bad input.
func TestValidateCross(t *testing.T) {
	data := writeData(t, header+
		"q1,001 a,112,MB/s,ds1817-raid1-ssd-smb-1g,fio:quick.fio,read,,\n"+
		"q2,003 b,112,MB/s,ds1817-raid1-ssd-smb-1g,fio:quick.fio,read,,\n")
	var out, errOut bytes.Buffer
	if code := run([]string{"validate", "--data", data, "--cross", "--format", "json"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	var doc struct {
		Reviews []struct {
			Review  string   `json:"review"`
			Off     []string `json:"calibrations_off"`
			Fitted  struct{ Cases int }
			LeftOut struct {
				Cases  int
				Median float64 `json:"median_abs_error_pct"`
			} `json:"left_out"`
		} `json:"reviews"`
		LeftOut struct{ Cases int } `json:"left_out"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if len(doc.Reviews) != 2 || doc.Reviews[0].Review != "001" || doc.Reviews[1].Review != "003" || doc.LeftOut.Cases != 2 {
		t.Fatalf("%s", out.String())
	}
	if len(doc.Reviews[1].Off) == 0 || doc.Reviews[0].Fitted.Cases != 1 || doc.Reviews[0].LeftOut.Cases != 1 {
		t.Errorf("%s", out.String())
	}
	out.Reset()
	if code := run([]string{"validate", "--data", data, "--leave-out", "003"}, &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	if s := out.String(); !strings.Contains(s, "review 003 left out") || !strings.Contains(s, "q2") || strings.Contains(s, "q1") {
		t.Errorf("--leave-out 003:\n%s", s)
	}
	errOut.Reset()
	if code := run([]string{"validate", "--data", data, "--leave-out", "007"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "007") {
		t.Errorf("unknown review: exit %d, %s", code, errOut.String())
	}
}
