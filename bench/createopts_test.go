package bench

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fixed"
)

// flushCounter counts the flushes a device is asked for.
type flushCounter struct {
	models.Device
	flushes int
}

func (f *flushCounter) Submit(at time.Duration, r models.Request) (time.Duration, error) {
	if r.Op == models.Flush {
		f.flushes++
	}
	return f.Device.Submit(at, r)
}

func parseJobs(t *testing.T, text string) []Job {
	t.Helper()
	jobs, err := ParseFio("t.fio", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

const createJob = "[r]\nrw=randread\nbs=4k\nsize=4m\nfilename=f.dat\ntime_based\nruntime=10ms\n"

// fio fsyncs a file it lays out unless create_fsync=0; the reads that
// follow flush nothing.
func TestCreateFsyncSim(t *testing.T) {
	for _, c := range []struct {
		opt  string
		want int
	}{{"", 1}, {"create_fsync=1\n", 1}, {"create_fsync=0\n", 0}} {
		d, err := fixed.New(fixed.Config{Capacity: 1 << 30, Read: 100 * time.Microsecond, Write: 100 * time.Microsecond})
		if err != nil {
			t.Fatal(err)
		}
		dev := &flushCounter{Device: d}
		sim := NewSim("sim:x", SimSetup{Device: dev})
		mustRun(t, sim, parseJobs(t, createJob+c.opt), Options{Seed: 1})
		if dev.flushes != c.want {
			t.Errorf("%q: %d flushes, want %d", c.opt, dev.flushes, c.want)
		}
		if sim.noCreateFsync {
			t.Errorf("%q: create_fsync=0 outlived its job's layout", c.opt)
		}
	}
}

// On a path target, create_fsync=0 lays out without fsync: writeLayout
// on /dev/null (which takes writes and refuses fsync) fails only when it
// syncs.
func TestCreateFsyncPath(t *testing.T) {
	f, err := os.OpenFile("/dev/null", os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := writeLayout(f, 0, 1<<20, true); err == nil {
		t.Error("fsync of /dev/null succeeded: the test cannot tell a sync")
	}
	if err := writeLayout(f, 0, 1<<20, false); err != nil {
		t.Errorf("layout without sync: %v", err)
	}
	dir := t.TempDir()
	p, err := OpenPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	mustRun(t, p, parseJobs(t, createJob+"create_fsync=0\n"), Options{Seed: 1})
	if fi, err := os.Stat(filepath.Join(dir, "f.dat")); err != nil || fi.Size() != 4<<20 {
		t.Fatalf("layout: %v, %v", fi, err)
	}
	if p.noCreateFsync {
		t.Error("create_fsync=0 outlived its job's layout")
	}
}

// allow_file_create=0 fails a job whose file does not exist and runs one
// whose file does, on a path target and on sim.
func TestAllowFileCreate(t *testing.T) {
	jobs := parseJobs(t, createJob+"allow_file_create=0\n")
	dir := t.TempDir()
	p, err := OpenPath(dir)
	if err != nil {
		t.Fatal(err)
	}
	sim := fixedSim(t, fixed.Config{Capacity: 1 << 30, Read: 100 * time.Microsecond, Write: 100 * time.Microsecond})
	for _, tg := range []Target{p, sim} {
		_, err := Run(tg, jobs, Options{Seed: 1})
		if !errors.Is(err, ErrTarget) || !strings.Contains(err.Error(), "allow_file_create=0") {
			t.Errorf("%s: missing file: %v, want an error naming allow_file_create=0", tg.Name(), err)
		}
		if _, err := os.Stat(filepath.Join(dir, "f.dat")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the refused job created its file (%v)", tg.Name(), err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "f.dat"), make([]byte, 4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRun(t, p, jobs, Options{Seed: 1})
	// on sim, a file an earlier group wrote is there for the next
	write := parseJobs(t, "[w]\nrw=write\nbs=1m\nsize=4m\nfilename=f.dat\n")
	mustRun(t, sim, append(write, jobs[0]), Options{Seed: 1})
}
