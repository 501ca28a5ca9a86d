package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
