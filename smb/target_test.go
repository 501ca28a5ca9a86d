package smb

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/nasemu/nasemu/bench"
	"github.com/nasemu/nasemu/models/fixed"
)

// shortened cuts a suite to what a test can afford.
func shortened(t *testing.T, suite string, runtime time.Duration, size int64) []bench.Job {
	t.Helper()
	jobs, err := bench.Suite(suite)
	if err != nil {
		t.Fatal(err)
	}
	return bench.Overrides{Runtime: runtime, Size: size}.Apply(jobs)
}

func openTarget(t *testing.T, addr string) *Target {
	t.Helper()
	tg, err := bench.NewRegistry(Factory()).Open(addr, bench.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg.(*Target)
}

// TestSuitesOverSamba runs cdm, diskspd and copy, shortened, against a
// plain Samba share and checks that every job moved data, that the files
// went over the wire to the share, that numjobs got sessions of their own
// and that the report has the schema of a sim: run.
func TestSuitesOverSamba(t *testing.T) {
	srv := startSamba(t)
	if err := os.Mkdir(filepath.Join(srv.dir, "bench"), 0o777); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		suite   string
		runtime time.Duration
		size    int64
	}{
		{"cdm", 250 * time.Millisecond, 16 << 20},
		{"diskspd", 400 * time.Millisecond, 16 << 20},
		{"copy", 2 * time.Second, 4 << 20},
	} {
		t.Run("suite="+tc.suite, func(t *testing.T) {
			tg := openTarget(t, srv.urlWithPassword("/bench"))
			jobs := shortened(t, tc.suite, tc.runtime, tc.size)
			for i := range jobs { // 10000 files take 15 s to lay out and remove
				if j := &jobs[i]; j.NrFiles > 2000 {
					j.NrFiles, j.Size = 2000, 2000*j.FileSize
				}
			}
			rep, err := bench.Run(tg, jobs, bench.Options{Suite: tc.suite, Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Results) != len(jobs) {
				t.Fatalf("%d results for %d jobs", len(rep.Results), len(jobs))
			}
			for _, r := range rep.Results {
				if r.IOs == 0 || r.Bytes == 0 || r.IOPS <= 0 || r.MBps <= 0 || r.Lat.Mean <= 0 {
					t.Errorf("%s: no I/O measured: %+v", r.Name, r)
				}
				if strings.HasPrefix(r.Name, "copy") && r.FilesPerS <= 0 {
					t.Errorf("%s: no files/s", r.Name)
				}
				t.Logf("%-28s %9.0f IOPS %8.1f MB/s %8.1f files/s  lat %.0f µs", r.Name, r.IOPS, r.MBps, r.FilesPerS, r.Lat.Mean)
			}
			if rep.Mode != bench.Real || rep.Target != srv.URL("bench") {
				t.Errorf("report of %q in mode %s", rep.Target, rep.Mode)
			}
			switch tc.suite {
			case "diskspd": // 8 threads: 8 sessions
				if n := tg.Sessions(); n != 8 {
					t.Errorf("diskspd T8 used %d sessions, want 8", n)
				}
				if _, err := os.Stat(filepath.Join(srv.dir, "bench", "diskspd.dat")); err != nil {
					t.Errorf("diskspd's file is not on the share: %v", err)
				}
			default: // one file at a time: one session
				if n := tg.Sessions(); n != 1 {
					t.Errorf("%s used %d sessions, want 1", tc.suite, n)
				}
			}
			sim := simReport(t, jobs, tc.suite)
			if a, b := schema(t, sim), schema(t, rep); !reflect.DeepEqual(a, b) {
				t.Errorf("JSON schemas differ:\nsim %v\nsmb %v", a, b)
			}
			if a, b := tableShape(t, sim), tableShape(t, rep); a != b {
				t.Errorf("table shapes differ:\nsim %s\nsmb %s", a, b)
			}
		})
	}
	// cdm and copy remove their files: only diskspd's is left.
	var left []string
	filepath.Walk(filepath.Join(srv.dir, "bench"), func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			left = append(left, filepath.Base(p))
		}
		return nil
	})
	if !reflect.DeepEqual(left, []string{"diskspd.dat"}) {
		t.Errorf("files left on the share: %v", left)
	}
}

// simReport runs jobs on a fixed-cost simulated device.
func simReport(t *testing.T, jobs []bench.Job, suite string) *bench.Report {
	t.Helper()
	d, err := fixed.New(fixed.Config{Capacity: 8 << 30, Units: 4, Read: 100 * time.Microsecond, Write: 100 * time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := bench.Run(bench.NewSim("sim:fixed", bench.SimSetup{Device: d, Description: "fixed 100 µs × 4"}), jobs, bench.Options{Suite: suite, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// schema returns the JSON shape of a report (bench.JSONShape), less
// disk_util: as in fio, a run reports it for the block devices under its
// files, which a local sim: device has and an SMB share does not.
func schema(t *testing.T, r *bench.Report) map[string]bool {
	t.Helper()
	sh, err := r.Shape()
	if err != nil {
		t.Fatal(err)
	}
	for k := range sh {
		if strings.HasPrefix(k, "disk_util[]") {
			delete(sh, k)
		}
	}
	return sh
}

// tableShape returns the table's header row and its number of job rows.
func tableShape(t *testing.T, r *bench.Report) string {
	t.Helper()
	sh, err := r.TableShape()
	if err != nil {
		t.Fatal(err)
	}
	return sh
}

// TestSessionCap: numjobs instances share sessions once the cap is
// reached, and still all run.
func TestSessionCap(t *testing.T) {
	srv := startSamba(t)
	tg := openTarget(t, srv.urlWithPassword("?sessions=2"))
	jobs := []bench.Job{{Name: "r", RW: bench.RandRead, BS: 4096, IODepth: 2, NumJobs: 5, Size: 1 << 20, Filename: "cap.dat", TimeBased: true, Runtime: 200 * time.Millisecond}}
	rep, err := bench.Run(tg, jobs, bench.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := tg.Sessions(); n != 2 {
		t.Errorf("%d sessions, want the cap of 2", n)
	}
	if rep.Results[0].IOs == 0 {
		t.Error("no I/O")
	}
}

// TestShortRunCountsInFlight: a 1 MiB job at QD8 whose runtime ends
// before the first I/O can complete still counts the eight I/Os it had
// in flight, as fio waits for and counts them.
func TestShortRunCountsInFlight(t *testing.T) {
	srv := startSamba(t)
	tg := openTarget(t, srv.urlWithPassword(""))
	jobs := []bench.Job{{Name: "r", RW: bench.Read, BS: 1 << 20, IODepth: 8, Size: 16 << 20, Filename: "short.dat", TimeBased: true, Runtime: time.Millisecond}}
	rep, err := bench.Run(tg, jobs, bench.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Results[0]; r.IOs < 8 || r.IOPS <= 0 {
		t.Errorf("%d I/Os, %.0f IOPS: want the 8 in flight counted", r.IOs, r.IOPS)
	}
}
