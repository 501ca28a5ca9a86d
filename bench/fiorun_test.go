package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models/catalog"
)

// sn700 is the simulated WD Red SN700 500GB, the drive fio's examples are
// run on.
func sn700(t testing.TB) *Sim {
	t.Helper()
	d, err := catalog.LookupDrive("wd-red-sn700-500g")
	if err != nil {
		t.Fatal(err)
	}
	dev, err := d.New(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	return NewSim("sim:wd-red-sn700-500g", SimSetup{Device: dev})
}

// TestFioJobFilesRun runs the repository's fio job files, which use the
// options fio's examples use, on a simulated drive and on a directory, and
// checks what each option promises.
func TestFioJobFilesRun(t *testing.T) {
	t.Setenv("NASEMU_FIO_TEST_SIZE", "1m")
	files, err := filepath.Glob("../testdata/fio/run-*.fio")
	if err != nil || len(files) < 7 {
		t.Fatalf("job files: %v %v", files, err)
	}
	for _, file := range files {
		jobs, err := LoadFio(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, kind := range []string{"sim", "dir"} {
			t.Run(filepath.Base(file)+"/"+kind, func(t *testing.T) {
				var tg Target = sn700(t)
				var dir string
				if kind == "dir" {
					dir = t.TempDir()
					p, err := OpenPath(dir)
					if err != nil {
						t.Fatal(err)
					}
					tg = p
				}
				rep, err := Run(tg, jobs, Options{Seed: 1})
				if err != nil {
					t.Fatal(err)
				}
				by := map[string]Result{}
				for _, r := range rep.Results {
					by[r.Name] = r
					if r.IOs == 0 && r.Name != "strided" && r.Name != "create-only" {
						t.Errorf("job %s did no I/O", r.Name)
					}
				}
				checkFioOptions(t, kind, by)
				if _, ok := by["grouped"]; ok {
					n := 0
					for _, e := range rep.fioEntries() {
						if e.name == "grouped" {
							n++
						}
					}
					if n != 1 {
						t.Errorf("group_reporting: %d fio reports of job grouped, want 1", n)
					}
				}
				if _, ok := by["create-only"]; ok && kind == "dir" { // create_only lays the file out
					if fi, err := os.Stat(filepath.Join(dir, "create-only.0.0")); err != nil || fi.Size() != 1<<20 {
						t.Errorf("create_only: %v, %v", fi, err)
					}
				}
				if kind == "dir" {
					logs := t.TempDir()
					if err := rep.WriteLogs(logs); err != nil {
						t.Fatal(err)
					}
					if _, ok := by["clones"]; ok {
						for _, n := range []string{"clones_bw.3.log", "clones_clat.1.log", "clones_iops.2.log", "clones_clat_hist.1.log"} {
							b, err := os.ReadFile(filepath.Join(logs, n))
							if err != nil || len(b) == 0 {
								t.Errorf("log %s: %v, %d bytes", n, err, len(b))
							}
						}
					}
				}
			})
		}
	}
}

// checkFioOptions checks the figures that options of the job files fix.
func checkFioOptions(t *testing.T, kind string, by map[string]Result) {
	t.Helper()
	ios := func(r *DirResult) int64 {
		if r == nil {
			return 0
		}
		return r.IOs
	}
	for name, r := range by {
		if kind == "dir" && (r.Seconds > 0.15 || r.IOs < 50) { // the wall clock's runtime may have cut it (a loaded host)
			switch name {
			case "number-ios", "io-size", "percent", "part-random", "ranges", "splits", "rate", "trimwrite", "spr", "covered", "drawn":
				continue
			}
		}
		switch name {
		case "number-ios", "trimwrite":
			if got := r.IOs; name == "number-ios" && got != 100 || name == "trimwrite" && (ios(r.Trim) != ios(r.Write) || kind == "sim" && ios(r.Trim) != 100) {
				t.Errorf("%s: %d I/Os (read %d, write %d, trim %d)", name, got, ios(r.Read), ios(r.Write), ios(r.Trim))
			}
		case "io-size":
			if r.Bytes != 6<<20 {
				t.Errorf("io_size=6m moved %d bytes", r.Bytes)
			}
		case "percent":
			if r.Bytes != 4<<20 {
				t.Errorf("size=50%% of 8m moved %d bytes", r.Bytes)
			}
		case "verify", "backlog":
			if ios(r.Read) != ios(r.Write) || ios(r.Write) == 0 {
				t.Errorf("%s: %d writes read back by %d verify reads", name, ios(r.Write), ios(r.Read))
			}
		case "trim-verify":
			// half the 128 writes trimmed (fio draws each with trim_percentage),
			// every write read back, the trimmed ones as zeros
			if w, tr := ios(r.Write), ios(r.Trim); w != 128 || tr < 40 || tr > 88 || ios(r.Read) != w {
				t.Errorf("%s: %d writes, %d trims, %d verify reads", name, w, tr, ios(r.Read))
			}
		case "trim-noverify-zero":
			// every write trimmed, and none read back (trim_verify_zero=0)
			if w := ios(r.Write); w != 64 || ios(r.Trim) != 64 || ios(r.Read) != 0 {
				t.Errorf("%s: %d writes, %d trims, %d verify reads", name, w, ios(r.Trim), ios(r.Read))
			}
		case "create-only":
			if r.IOs != 0 {
				t.Errorf("create_only: %d I/Os", r.IOs)
			}
		case "part-random", "ranges", "splits", "rate":
			if r.Read == nil || r.Write == nil || r.Read.IOs+r.Write.IOs != r.IOs {
				t.Errorf("%s: mixed job without its per-direction split: %+v %+v", name, r.Read, r.Write)
			}
		case "trim", "randtrim":
			if ios(r.Trim) == 0 || r.Read != nil || r.Write != nil {
				t.Errorf("%s: trims %d, reads %v, writes %v", name, ios(r.Trim), r.Read, r.Write)
			}
		case "latency-target":
			if !slices.ContainsFunc(r.Notes, func(n string) bool { return strings.HasPrefix(n, "latency_target: ") }) {
				t.Errorf("latency_target: no depth reported in %q", r.Notes)
			}
		case "steady":
			if kind == "sim" && r.Seconds >= 9 {
				t.Errorf("steady state on a steady device: ran %.1f s of 10", r.Seconds)
			}
		case "rate-iops":
			if kind == "sim" && (r.IOPS < 400 || r.IOPS > 600) {
				t.Errorf("rate_iops=500: %.0f IOPS", r.IOPS)
			}
		case "reader":
			if kind == "sim" && r.Seconds > 0.1 {
				t.Errorf("exitall: the time-based reader ran %.3f s after the writer ended", r.Seconds)
			}
		case "spr":
			// about the logical 2 MiB plus 20 % over-provisioning (fio's
			// physical size, its budget; the rewrites drawn may end it
			// a little earlier)
			if want := sprPhysical(0.2, 2<<20, 4096); r.Bytes > want || r.Bytes < want*95/100 {
				t.Errorf("sprandom wrote %d bytes, want %d", r.Bytes, want)
			}
		case "covered", "drawn":
			if r.IOs != 256 {
				t.Errorf("%s: %d writes of a 1 MiB file, want 256", name, r.IOs)
			}
		case "nothing", "discard", "allocate":
			if kind == "sim" && (r.Seconds < 0.19 || r.IOs < 1000) {
				t.Errorf("%s: %d I/Os in %.3f s: time-based I/O that reaches no device takes the host's time", name, r.IOs, r.Seconds)
			}
		case "heavy":
			light := by["light"]
			if ratio := float64(r.IOs) / float64(max(light.IOs, 1)); kind == "sim" && (ratio < 2.7 || ratio > 3.3) {
				t.Errorf("flow=3 against flow=1: %d and %d I/Os, ratio %.2f", r.IOs, light.IOs, ratio)
			}
		case "clones":
			if len(r.clones) != 3 {
				t.Errorf("numjobs=3 without group_reporting: %d clone reports", len(r.clones))
			}
		case "grouped":
			if len(r.clones) != 2 {
				t.Errorf("numjobs=2 with group_reporting: %d instances' statistics, want each its own", len(r.clones))
			}
		}
	}
}

// TestVerifyDetectsCorruption: data changed between a write job and a
// verifying read job fails the read, with the file and offset.
func TestVerifyDetectsCorruption(t *testing.T) {
	dir := t.TempDir()
	p, err := OpenPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	write, err := ParseFio("w.fio", strings.NewReader("[w]\nfilename=data\nfilesize=1m\nrw=write\nverify=crc32c\n"))
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, p, write, Options{Seed: 1})
	read, err := ParseFio("r.fio", strings.NewReader("[r]\nfilename=data\nfilesize=1m\nrw=read\nverify=crc32c\n"))
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, p, read, Options{Seed: 1})
	f, err := os.OpenFile(filepath.Join(dir, "data"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{1, 2, 3}, 300000); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := Run(p, read, Options{Seed: 1}); !errors.Is(err, errVerify) || !strings.Contains(err.Error(), "data at offset 300000") {
		t.Fatalf("read of corrupted data: %v", err)
	}
}

// TestFioArgsAndIncludes: fio's command-line form and include directives
// give the jobs a job file gives.
func TestFioArgsAndIncludes(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "common.inc"), []byte("bs=8k ; block size\nsize=4m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "job.fio")
	if err := os.WriteFile(file, []byte("[global]\ninclude common.inc\nrw=randread\n[a]\niodepth=4\n[b]\nrw=write\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fromFile, err := LoadFio(file)
	if err != nil {
		t.Fatal(err)
	}
	fromArgs, err := ParseFioArgs([]string{"--bs=8k", "--size=4m", "--rw=randread", "--name=a", "--iodepth=4", "--name=b", "--rw=write"})
	if err != nil {
		t.Fatal(err)
	}
	if len(fromFile) != 2 || len(fromArgs) != 2 {
		t.Fatalf("%d and %d jobs", len(fromFile), len(fromArgs))
	}
	for i := range fromFile {
		a, b := fromFile[i], fromArgs[i]
		a.Pos, b.Pos = "", ""
		if describeJob(a) != describeJob(b) {
			t.Errorf("job %d:\nfile %s\nargs %s", i, describeJob(a), describeJob(b))
		}
	}
	if fromFile[0].BS != 8192 || fromFile[0].IODepth != 4 || fromFile[1].RW != Write {
		t.Errorf("jobs %s / %s", describeJob(fromFile[0]), describeJob(fromFile[1]))
	}
}

// TestFioOutputSchema pins the shape of the fio JSON (json+) output with
// a golden file, and checks the per-direction figures against the
// report's own.
func TestFioOutputSchema(t *testing.T) {
	jobs, err := ParseFio("mixed.fio", strings.NewReader(
		"[mixed]\nrw=randrw\nrwmixread=70\nbs=4k\nfilesize=64m\niodepth=4\nruntime=200ms\ntime_based\nnumjobs=2\n[trims]\nstonewall\nrw=randtrim\nbs=64k\nfilesize=64m\nnumber_ios=100\n"))
	if err != nil {
		t.Fatal(err)
	}
	rep := mustRun(t, sn700(t), jobs, Options{Seed: 1})
	var b bytes.Buffer
	if err := rep.WriteFio(&b, "json+", time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	shape, err := JSONShape(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range shape {
		// bins and percentiles are keyed by values
		if i := strings.Index(k, ".bins."); i >= 0 {
			k = k[:i+5] + ".NS:number"
		}
		if i := strings.Index(k, ".percentile."); i >= 0 {
			k = k[:i+11] + ".P:number"
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	got := strings.Join(keys, "\n") + "\n"
	golden := "../testdata/fio/fio-json-plus.golden"
	if *rewrite {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("fio json+ schema changed (go test -run TestFioOutputSchema -rewrite):\n%s", got)
	}
	var doc fioOutput
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Jobs) != 3 || doc.Jobs[0].JobName != "mixed" || doc.Jobs[2].GroupID != 1 {
		t.Fatalf("jobs: %d, want the 2 clones of mixed and trims in group 1", len(doc.Jobs))
	}
	r := rep.Results[0]
	if reads := doc.Jobs[0].Read.TotalIOs + doc.Jobs[1].Read.TotalIOs; reads != r.Read.IOs {
		t.Errorf("fio reads %d, report %d", reads, r.Read.IOs)
	}
	if doc.Jobs[2].Trim.TotalIOs != 100 || doc.Jobs[2].Read.TotalIOs != 0 {
		t.Errorf("trims %d", doc.Jobs[2].Trim.TotalIOs)
	}
	if p := doc.Jobs[0].Read.Clat.Percentile["50.000000"]; p == 0 || float64(p) > 1.1*r.Read.Lat.Max*1e3 {
		t.Errorf("clat p50 %d ns", p)
	}
	for _, f := range []string{"normal", "terse"} {
		var o bytes.Buffer
		if err := rep.WriteFio(&o, f, time.Unix(0, 0)); err != nil || !strings.Contains(o.String(), "mixed") {
			t.Errorf("%s output: %v\n%s", f, err, o.String())
		}
	}
}

// TestFioJSONPlusClat2CSV: fio's own fio_jsonplus_clat2csv (Debian's fio
// package) reads the json+ output of a sim run and writes its CSV.
func TestFioJSONPlusClat2CSV(t *testing.T) {
	tool, err := exec.LookPath("fio_jsonplus_clat2csv")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("this test needs fio_jsonplus_clat2csv (Debian's fio package), which this CI host lacks")
		}
		t.Skip("fio_jsonplus_clat2csv is not installed (in CI, with CI=true, this fails)")
	}
	jobs, err := ParseFioArgs([]string{"--name=rr", "--rw=randrw", "--bs=4k", "--filesize=64m", "--iodepth=8", "--runtime=50ms", "--time_based"})
	if err != nil {
		t.Fatal(err)
	}
	rep := mustRun(t, sn700(t), jobs, Options{Seed: 1})
	dir := t.TempDir()
	src := filepath.Join(dir, "out.json")
	var b bytes.Buffer
	if err := rep.WriteFio(&b, "json+", time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(src, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(tool, src, filepath.Join(dir, "lat.csv")).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", tool, err, out)
	}
	csv, err := os.ReadFile(filepath.Join(dir, "lat_job0.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "nsec, read_slat_ns_count") {
		t.Fatalf("CSV:\n%s", csv)
	}
}

// TestFioLatPercentiles checks fio's lat_percentiles: with it, fio's JSON
// gives total latency (lat) the percentiles it gives clat, and none
// without it.
func TestFioLatPercentiles(t *testing.T) {
	for _, on := range []bool{false, true} {
		file := "[r]\nrw=randread\nbs=4k\nfilesize=64m\nnumber_ios=500\n"
		if on {
			file += "lat_percentiles=1\n"
		}
		jobs, err := ParseFio("lat.fio", strings.NewReader(file))
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := mustRun(t, sn700(t), jobs, Options{Seed: 1}).WriteFio(&b, "json", time.Unix(0, 0)); err != nil {
			t.Fatal(err)
		}
		var out struct {
			Jobs []struct {
				Read struct {
					Clat struct {
						Percentile map[string]uint64 `json:"percentile"`
					} `json:"clat_ns"`
					Lat struct {
						Percentile map[string]uint64 `json:"percentile"`
					} `json:"lat_ns"`
				} `json:"read"`
			} `json:"jobs"`
		}
		if err := json.Unmarshal(b.Bytes(), &out); err != nil {
			t.Fatal(err)
		}
		r := out.Jobs[0].Read
		clat, lat := r.Clat.Percentile["99.900000"], r.Lat.Percentile["99.900000"]
		switch {
		case clat == 0:
			t.Errorf("lat_percentiles=%v: no clat p99.9", on)
		case on && lat < clat:
			t.Errorf("lat_percentiles=1: lat p99.9 %d ns, clat p99.9 %d ns", lat, clat)
		case !on && r.Lat.Percentile != nil:
			t.Errorf("lat percentiles without lat_percentiles: %v", r.Lat.Percentile)
		}
	}
}

// TestOverrideSizeKeepsABlock: --size scales a job down but not below
// one I/O of its largest block, and a zoned job keeps whole zones; a
// file-by-file copy keeps its small files.
func TestOverrideSizeKeepsABlock(t *testing.T) {
	jobs, err := ParseFio("o.fio", strings.NewReader("[big]\nrw=randtrim\nbs=256m\n[zoned]\nrw=randwrite\nbs=2m\nzonemode=zbd\nzonesize=256m\nsize=8z\n"))
	if err != nil {
		t.Fatal(err)
	}
	copyJobs, err := Suite("copy")
	if err != nil {
		t.Fatal(err)
	}
	out := Overrides{Size: 32 << 20}.Apply(append(jobs, copyJobs[len(copyJobs)-1]))
	if out[0].FileSize != 256<<20 || out[1].FileSize != 256<<20 {
		t.Errorf("file sizes %d and %d, want a 256 MiB block and a 256 MiB zone", out[0].FileSize, out[1].FileSize)
	}
	if c := out[2]; c.FileSize >= c.BS {
		t.Errorf("copy job %q: files of %d bytes, block %d", c.Name, c.FileSize, c.BS)
	}
}

// TestFioVerifyPhaseRuntime: as in fio, a write job's verify phase gives
// its reads the phase's runtime and its writes the time before it, so
// that each direction's IOPS is its own phase's rate.
func TestFioVerifyPhaseRuntime(t *testing.T) {
	jobs, err := ParseFio("v.fio", strings.NewReader("[v]\nrw=write\nbs=4k\nfilesize=16m\niodepth=4\nverify=crc32c\n"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := mustRun(t, sn700(t), jobs, Options{Seed: 1}).WriteFio(&b, "json", time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	type dir struct {
		IOPS     float64 `json:"iops"`
		Runtime  int64   `json:"runtime"`
		TotalIOs int64   `json:"total_ios"`
	}
	var out struct {
		Jobs []struct {
			Runtime     int64 `json:"job_runtime"`
			Read, Write dir
		} `json:"jobs"`
	}
	if err := json.Unmarshal(b.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	j := out.Jobs[0]
	r, w := j.Read, j.Write
	if r.TotalIOs != 4096 || w.TotalIOs != 4096 || r.Runtime <= 0 || w.Runtime <= 0 {
		t.Fatalf("read %+v, write %+v", r, w)
	}
	if d := r.Runtime + w.Runtime - j.Runtime; d < -2 || d > 2 {
		t.Errorf("read runtime %d ms and write runtime %d ms, job runtime %d ms: want the phases to add up to it", r.Runtime, w.Runtime, j.Runtime)
	}
	if got := float64(r.TotalIOs) * 1000 / float64(r.Runtime); got/r.IOPS < 0.999 || got/r.IOPS > 1.001 {
		t.Errorf("read IOPS %v over %d ms of %d I/Os", r.IOPS, r.Runtime, r.TotalIOs)
	}
}

// TestRateRestartsAfterRamp: as in fio, a rate-limited job's schedule
// starts again when its ramp ends, so that what the ramp fell behind by
// is not made up in the measured window.
func TestRateRestartsAfterRamp(t *testing.T) {
	// The first 1000 I/Os take 100 ms at 10,000 IOPS, then the job thinks
	// for 30 ms: 300 I/Os behind its schedule, which a drive at about
	// 17,000 IOPS at QD1 would make up until after the ramp (150 ms);
	// without the restart the window held 14,776 IOPS.
	jobs, err := ParseFio("r.fio", strings.NewReader("[r]\nrw=randread\nbs=4k\nfilesize=64m\nrate_iops=10000\nramp_time=150ms\nruntime=40ms\ntime_based\nthinktime=30ms\nthinktime_blocks=1000\n"))
	if err != nil {
		t.Fatal(err)
	}
	res := mustRun(t, sn700(t), jobs, Options{Seed: 1}).Results[0]
	if res.IOPS > 10000*1.02 || res.IOPS < 10000*0.98 {
		t.Errorf("%.0f IOPS in the measured window, rate_iops=10000", res.IOPS)
	}
}
