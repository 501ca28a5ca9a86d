package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const smallSweep = "../../testdata/sweeps/ci-small.yaml"

func runOK(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, errb.String())
	}
	return out.String()
}

// TestSweepShardsMerge runs the small sweep in one process, then as three
// shards that take their index from JOB_COMPLETION_INDEX as a Kubernetes
// Indexed Job's pods do (and one from SLURM_ARRAY_TASK_ID), and checks
// that merging their directories prints the same CSV byte for byte; a
// shard run again resumes from its file and prints what it printed.
func TestSweepShardsMerge(t *testing.T) {
	want := runOK(t, "sweep", smallSweep, "--format", "csv", "--quiet")
	if n := strings.Count(want, "\n"); n != 1+6*8+2 {
		t.Errorf("CSV has %d lines, want a header, 6 points × 8 jobs and 2 refused points:\n%s", n, want)
	}
	if !strings.Contains(want, "raid6 needs at least 4 drives") {
		t.Errorf("CSV does not say why RAID 6 on 2 drives is refused:\n%s", want)
	}
	dir := t.TempDir()
	outs := []string{dir, dir, filepath.Join(dir, "slurm")}
	var shard0 string
	for k := range 3 {
		if k == 2 {
			t.Setenv("JOB_COMPLETION_INDEX", "")
			t.Setenv("SLURM_ARRAY_TASK_ID", "7")
			t.Setenv("SLURM_ARRAY_TASK_MIN", "5")
		} else {
			t.Setenv("JOB_COMPLETION_INDEX", strconv.Itoa(k))
		}
		out := runOK(t, "sweep", smallSweep, "--shards", "3", "--out", outs[k], "--format", "csv", "--quiet")
		if k == 0 {
			shard0 = out
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "slurm", "shard-2-of-3.jsonl")); err != nil {
		t.Errorf("the Slurm task's shard: %v", err)
	}
	if got := runOK(t, "sweep", "merge", "--format", "csv", dir, filepath.Join(dir, "slurm")); got != want {
		t.Errorf("merged CSV differs from one process's:\n%s\nwant\n%s", got, want)
	}
	if got := runOK(t, "sweep", smallSweep, "--shard", "0/3", "--out", dir, "--format", "csv", "--quiet"); got != shard0 {
		t.Errorf("shard 0 resumed prints\n%s\nwant\n%s", got, shard0)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"sweep", "merge", "--format", "csv", dir}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "points are missing") {
		t.Errorf("merge without shard 2: exit %d, %s", code, errb.String())
	}
}

func TestSweepBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("base: ds1817-raid5-hdd-smb-1g\nworkloads: [{suite: cdm}]\naxes:\n  - {key: drives.model, values: [wd-red-9tb]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("JOB_COMPLETION_INDEX", "")
	t.Setenv("SLURM_ARRAY_TASK_ID", "")
	t.Setenv("SLURM_ARRAY_TASK_COUNT", "")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{bad}, `bad.yaml:4: axes[0].values[0]: drives.model=wd-red-9tb: drives.model: unknown drive "wd-red-9tb"`},
		{[]string{filepath.Join(dir, "none.yaml")}, "none.yaml: no such file"},
		{[]string{smallSweep, "--shards", "4"}, "neither is set"},
		{[]string{smallSweep, "--shard", "4/4"}, "want K/N with 0 ≤ K < N"},
		{[]string{smallSweep, "--format", "xml"}, `unknown format "xml"`},
		{[]string{"merge", dir}, "holds no shard files"},
	} {
		var out, errb bytes.Buffer
		if code := run(append([]string{"sweep"}, c.args...), &out, &errb); code != 2 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("sweep %s: exit %d, %q; want exit 2 and %q", strings.Join(c.args, " "), code, errb.String(), c.want)
		}
	}
	t.Setenv("JOB_COMPLETION_INDEX", "5")
	var out, errb bytes.Buffer
	if code := run([]string{"sweep", smallSweep, "--shards", "4"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "outside 0..3") {
		t.Errorf("index 5 of 4 shards: exit %d, %q", code, errb.String())
	}
}
