package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models/fixed"
)

// TestIOEngines runs random writes, then random reads of the same file,
// on each engine, and checks which engine ran, that the writes reached
// the file and that the reads returned what is there (a short read, a
// wrong length or an error fails the job).
func TestIOEngines(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("io_uring and native AIO are Linux's")
	}
	for _, tc := range []struct {
		engine Engine
		direct bool
		want   Engine
	}{
		{EngineIOUring, true, EngineIOUring},
		{EngineIOUring, false, EngineIOUring},
		{EngineLibaio, true, EngineLibaio},
		{EngineLibaio, false, EngineLibaio},
		{EngineAuto, true, EngineIOUring},
		{EnginePsync, true, EnginePsync},
		{"pvsync2", false, "pvsync2"},
	} {
		t.Run(string(tc.engine)+"/direct="+map[bool]string{true: "1", false: "0"}[tc.direct], func(t *testing.T) {
			used, written := runEngine(t, tc.engine, tc.direct)
			if used != tc.want {
				t.Errorf("ran on %q, want %q", used, tc.want)
			}
			if written == 0 {
				t.Error("no write reached the file")
			}
		})
	}
}

// TestIOEngineFallback takes the asynchronous engines away one by one and
// checks that jobs still run, on the engine next in line: io_uring, then
// libaio for direct I/O only, then a thread per outstanding operation.
func TestIOEngineFallback(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("io_uring and native AIO are Linux's")
	}
	refuse := func(int, []int, [][]byte, queueOpts) (ioQueue, error) { return nil, syscall.ENOSYS }
	for _, tc := range []struct {
		name    string
		missing []Engine
		engine  Engine
		direct  bool
		want    Engine
	}{
		{"no io_uring, direct", []Engine{EngineIOUring}, EngineIOUring, true, EngineLibaio},
		{"no io_uring, buffered", []Engine{EngineIOUring}, EngineIOUring, false, engineThreads},
		{"no io_uring, auto", []Engine{EngineIOUring}, EngineAuto, true, EngineLibaio},
		{"neither", []Engine{EngineIOUring, EngineLibaio}, EngineAuto, true, engineThreads},
		{"no libaio", []Engine{EngineLibaio}, EngineLibaio, true, engineThreads},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, e := range tc.missing {
				old := queueFactories[e]
				queueFactories[e] = refuse
				t.Cleanup(func() { queueFactories[e] = old })
			}
			used, written := runEngine(t, tc.engine, tc.direct)
			if used != tc.want {
				t.Errorf("ran on %q, want %q", used, tc.want)
			}
			if written == 0 {
				t.Error("no write reached the file")
			}
		})
	}
}

// runEngine writes 4 KiB blocks at random on a sparse file at QD 8, then
// reads them back, and returns the engine the writes ran on and how many
// blocks hold data.
func runEngine(t *testing.T, e Engine, direct bool) (Engine, int) {
	t.Helper()
	dir := t.TempDir()
	tg, err := OpenPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	const size = 4 << 20
	// A count of I/Os, not a time: a loaded disk may take 10 ms over a
	// direct write into a hole, and how fast the host is is not what
	// this checks.
	const ios = 64
	w := Job{Name: "w", RW: RandWrite, BS: 4096, Size: size, IODepth: 8, Direct: direct, Engine: e, Fallocate: FallocateNone,
		NumberIOs: ios, Filename: "f"}
	r := w
	r.Name, r.RW, r.Stonewall = "r", RandRead, true
	rep, err := Run(tg, []Job{w, r}, Options{Seed: 3})
	if errors.Is(err, ErrTarget) && strings.Contains(err.Error(), "O_DIRECT") {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the test directory's file system has no O_DIRECT: %v", err)
		}
		t.Skipf("the test directory's file system has no O_DIRECT: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range rep.Results {
		if res.IOs != ios {
			t.Errorf("%s: %d I/Os, want %d", res.Name, res.IOs, ios)
		}
		if res.Lat.P50 <= 0 {
			t.Errorf("%s: p50 latency %v", res.Name, res.Lat.P50)
		}
	}
	used := tg.clock.Engines()
	if len(used) != 2 || used[0].Job != "w" || used[1].Used != used[0].Used {
		t.Fatalf("engines used: %+v", used)
	}
	data, err := os.ReadFile(filepath.Join(dir, "f"))
	if err != nil {
		t.Fatal(err)
	}
	written, zero := 0, make([]byte, 4096)
	for off := 0; off+4096 <= len(data); off += 4096 {
		if !bytes.Equal(data[off:off+4096], zero) {
			written++
		}
	}
	return used[0].Used, written
}

// TestIOEngineNumJobs runs three instances of a job on io_uring, which
// share the job's statistics (and, being more than the Ps less one, wait
// in ordinary system calls).
func TestIOEngineNumJobs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("io_uring is Linux's")
	}
	tg, err := OpenPath(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	j := Job{Name: "rw", RW: RandRW, BS: 4096, Size: 2 << 20, IODepth: 4, NumJobs: 3, Engine: EngineIOUring,
		TimeBased: true, Runtime: 100 * time.Millisecond, Fsync: 16, EndFsync: true}
	r := mustRun(t, tg, []Job{j}, Options{Seed: 1}).Results[0]
	if r.IOs < 30 || r.IOPS <= 0 {
		t.Errorf("%d I/Os, %.0f IOPS", r.IOs, r.IOPS)
	}
	if used := tg.clock.Engines(); len(used) != 1 || used[0].Used != EngineIOUring {
		t.Errorf("engines used: %+v", used)
	}
}

// TestIOEngineFioJob runs a fio job file on a directory with io_uring:
// ioengine both names the kind of I/O (block) and picks the submission
// engine, and fio's options that the queue must honour (verify's
// patterns written and checked, trims done beside the queue, O_SYNC
// writes) run on it. The null engine, which submits nothing, stays on a
// thread.
func TestIOEngineFioJob(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("io_uring is Linux's")
	}
	const file = `[global]
filesize=1m
bs=4k
iodepth=8
ioengine=io_uring
[verify]
rw=randwrite
verify=crc32c
number_ios=128
[trimwrite]
rw=randtrimwrite
sync=1
number_ios=64
stonewall
[null]
ioengine=null
number_ios=64
stonewall
`
	jobs, err := ParseFio("engines.fio", strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs[:2] {
		if j.Kind != KindBlock || j.Engine != EngineIOUring {
			t.Errorf("%s: kind %v, engine %q", j.Name, j.Kind, j.Engine)
		}
	}
	if j := jobs[2]; j.Kind != KindNull || j.Engine != EnginePsync {
		t.Errorf("null: kind %v, engine %q", j.Kind, j.Engine)
	}
	tg, err := OpenPath(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(tg, jobs, Options{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]Result{}
	for _, r := range rep.Results {
		by[r.Name] = r
	}
	if v := by["verify"]; v.Read == nil || v.Write == nil || v.Read.IOs != v.Write.IOs || v.Write.IOs != 128 {
		t.Errorf("verify: %+v %+v, want 128 writes read back", v.Read, v.Write)
	}
	if tw := by["trimwrite"]; tw.Trim == nil || tw.Write == nil || tw.Trim.IOs != 64 || tw.Write.IOs != 64 {
		t.Errorf("trimwrite: trims %+v, writes %+v, want 64 each", tw.Trim, tw.Write)
	}
	used := tg.clock.Engines()
	if len(used) != 2 || used[0].Requested != EngineIOUring || used[1].Requested != EngineIOUring {
		t.Errorf("engines used: %+v (the null job submits nothing)", used)
	}
}

// TestIOEngineLatencySplit checks that latency is split as fio splits it:
// on the asynchronous engines an I/O's completion latency (clat) runs
// from the return of the system call that submitted it and its total
// latency (lat) from its preparation, so lat exceeds clat by the
// submission time of every I/O; psync has no submission step and no
// slat, but its lat too runs from the preparation and its clat from the
// issue, which a write's buffer filling lies between (fio 3.33, this
// job with psync: lat 4661 ns, clat 4599 ns).
func TestIOEngineLatencySplit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("io_uring and native AIO are Linux's")
	}
	for _, e := range []Engine{EngineIOUring, EngineLibaio, EnginePsync} {
		t.Run(string(e), func(t *testing.T) {
			tg, err := OpenPath(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			j := Job{Name: "w", RW: RandWrite, BS: 4096, Size: 16 << 20, IODepth: 4, Engine: e, NumberIOs: 2000, Fallocate: FallocateNone}
			r := mustRun(t, tg, []Job{j}, Options{Seed: 2}).Results[0]
			ds := r.clones[0].dir[DirWrite]
			if ds == nil || ds.ios != 2000 {
				t.Fatalf("%d writes counted, want 2000", r.IOs)
			}
			clat, lat := ds.cm.mean(), ds.lm.mean()
			if ds.lm.min < ds.cm.min || lat < clat {
				t.Errorf("lat (min %v, mean %.0f ns) below clat (min %v, mean %.0f ns)", ds.lm.min, lat, ds.cm.min, clat)
			}
			var out bytes.Buffer
			rep := &Report{Target: "dir", Results: []Result{r}}
			if err := rep.WriteFio(&out, "json", time.Unix(0, 0)); err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Jobs []struct {
					Write struct {
						Slat struct {
							N    int64   `json:"N"`
							Mean float64 `json:"mean"`
							Min  uint64  `json:"min"`
						} `json:"slat_ns"`
						Clat struct{ Mean float64 } `json:"clat_ns"`
						Lat  struct{ Mean float64 } `json:"lat_ns"`
					} `json:"write"`
				} `json:"jobs"`
			}
			if err := json.Unmarshal(out.Bytes(), &doc); err != nil || len(doc.Jobs) != 1 {
				t.Fatalf("fio JSON: %v\n%s", err, out.String())
			}
			fs := doc.Jobs[0].Write
			if e == EnginePsync {
				if r.Write.Slat != (Latency{}) || fs.Slat.N != 0 { // fio records no slat for synchronous engines
					t.Errorf("psync: slat %+v, fio's N %d: want none", r.Write.Slat, fs.Slat.N)
				}
				return
			}
			if ds.lm.min <= ds.cm.min || lat <= clat {
				t.Errorf("lat (min %v, mean %.0f ns) not above clat (min %v, mean %.0f ns): no submission time counted", ds.lm.min, lat, ds.cm.min, clat)
			}
			// slat is each I/O's lat less its clat: the means add up
			if fs.Slat.N != 2000 || fs.Slat.Min == 0 || math.Abs(fs.Slat.Mean+fs.Clat.Mean-fs.Lat.Mean) > 0.01*fs.Lat.Mean {
				t.Errorf("fio slat_ns N %d min %d mean %.0f, clat mean %.0f, lat mean %.0f", fs.Slat.N, fs.Slat.Min, fs.Slat.Mean, fs.Clat.Mean, fs.Lat.Mean)
			}
			if s := r.Write.Slat; s.Mean <= 0 || s.P50 <= 0 || s.Max < s.P999 || r.Write.Clat.Mean <= 0 {
				t.Errorf("nasemu JSON: slat %+v clat %+v", s, r.Write.Clat)
			}
		})
	}
}

// TestIOEngineFixedBufs runs io_uring with fio's fixedbufs (the slots'
// buffers registered with the ring) and registerfiles (the files
// registered), each and both, and without, writing and reading back
// verified data every way.
func TestIOEngineFixedBufs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("io_uring is Linux's")
	}
	for _, opt := range []string{"", "fixedbufs=1\n", "registerfiles=1\n", "fixedbufs=1\nregisterfiles=1\n"} {
		jobs, err := ParseFio("fixed.fio", strings.NewReader("[v]\nioengine=io_uring\nrw=randwrite\nbs=4k\niodepth=8\nfilesize=1m\nverify=crc32c\nnumber_ios=256\n"+opt))
		if err != nil {
			t.Fatal(err)
		}
		tg, err := OpenPath(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		r := mustRun(t, tg, jobs, Options{Seed: 4}).Results[0]
		if r.Read == nil || r.Write == nil || r.Read.IOs != 256 || r.Write.IOs != 256 {
			t.Errorf("%q: reads %+v, writes %+v, want 256 verified", opt, r.Read, r.Write)
		}
		if used := tg.clock.Engines(); len(used) != 1 || used[0].Used != EngineIOUring {
			t.Errorf("%q: engines %+v", opt, used)
		}
	}
}

// TestShortRunCountsInFlight runs 1 MiB sequential reads at QD32 for a
// runtime far shorter than filling the job's buffers with random data
// (32 MiB) or setting its engine up takes, on each engine of a path
// target and on a simulated device whose every I/O outlasts the runtime.
// As in fio, the runtime counts from the first submission and the I/Os
// in flight when it ends are waited for and counted: every target shows
// at least the queue it filled, and its time covers their completion.
func TestShortRunCountsInFlight(t *testing.T) {
	const qd = 32
	job := Job{Name: "r", RW: Read, BS: 1 << 20, Size: 64 << 20, IODepth: qd, TimeBased: true, Runtime: time.Millisecond}
	check := func(t *testing.T, r Result, atLeast int64) {
		t.Helper()
		if r.IOs < atLeast || r.IOPS <= 0 || r.Seconds <= 0 {
			t.Errorf("%d I/Os, %.0f IOPS in %.4f s, want at least %d I/Os", r.IOs, r.IOPS, r.Seconds, atLeast)
		}
	}
	if runtime.GOOS == "linux" {
		dir := t.TempDir()
		for _, tc := range []struct {
			engine Engine
			direct bool
			want   int64
		}{
			{EngineIOUring, true, qd},
			{EngineIOUring, false, qd},
			{EngineLibaio, true, qd},
			{EnginePsync, false, 1}, // one I/O in flight whatever iodepth says
		} {
			t.Run(fmt.Sprintf("engine=%s/direct=%t", tc.engine, tc.direct), func(t *testing.T) {
				tg, err := OpenPath(dir)
				if err != nil {
					t.Fatal(err)
				}
				j := job
				j.Engine, j.Direct, j.Filename = tc.engine, tc.direct, "short.dat"
				rep, err := Run(tg, []Job{j}, Options{Seed: 1})
				if errors.Is(err, ErrTarget) && strings.Contains(err.Error(), "O_DIRECT") {
					t.Skipf("the test directory's file system has no O_DIRECT: %v", err)
				}
				if err != nil {
					t.Fatal(err)
				}
				check(t, rep.Results[0], tc.want)
			})
		}
	}
	t.Run("target=sim", func(t *testing.T) {
		// One unit, 20 ms per I/O: the queue's I/Os complete one after
		// another long after the 1 ms runtime, the last at 32 × 20 ms.
		tg := fixedSim(t, fixed.Config{Capacity: 1 << 30, Units: 1, Read: 20 * time.Millisecond})
		r := mustRun(t, tg, []Job{job}, Options{Seed: 1}).Results[0]
		check(t, r, qd)
		if r.IOs != qd || r.Seconds < qd*0.020 {
			t.Errorf("%d I/Os over %.3f s, want the %d in flight, the last done at %.3f s", r.IOs, r.Seconds, qd, qd*0.020)
		}
	})
}
