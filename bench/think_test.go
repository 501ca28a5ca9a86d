package bench

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models/fixed"
)

// thinkRun runs a job file's single job on a device of 16 units that
// serves every request in 100 µs, and returns its result.
func thinkRun(t *testing.T, file string) Result {
	t.Helper()
	jobs, err := ParseFio("think.fio", strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	tg := fixedSim(t, fixed.Config{Capacity: 1 << 30, Units: 16, Read: 100 * time.Microsecond, Write: 100 * time.Microsecond})
	return mustRun(t, tg, jobs, Options{Seed: 1}).Results[0]
}

// TestThinktime checks fio's thinktime family against the cycles it
// makes on a device whose every request takes 100 µs: the I/Os of a
// cycle, the wait for those in flight, then the thinktime, which fio
// counts in the job's runtime (the last one ends at the runtime).
func TestThinktime(t *testing.T) {
	const head = "[j]\nrw=randread\nbs=4k\nfilesize=64m\ntime_based\n"
	for _, c := range []struct {
		name, opts string
		want       float64 // IOPS
	}{
		// One I/O (100 µs), then 400 µs of thinking: 200 cycles in 100 ms.
		{"complete-qd1", "runtime=100ms\nthinktime=400us\n", 1 / 500e-6},
		// Spinning is part of the thinktime, and at most all of it: in
		// virtual time neither changes the cycle.
		{"spin", "runtime=100ms\nthinktime=400us\nthinktime_spin=150us\n", 1 / 500e-6},
		{"spin-beyond", "runtime=100ms\nthinktime=400us\nthinktime_spin=1ms\n", 1 / 500e-6},
		// Issued, 4 I/Os go out together and take 100 µs, then 400 µs
		// of thinking: 4 I/Os per 500 µs, whatever iodepth allows.
		// Counted at completion (fio's default), the queue fills first.
		{"issue", "runtime=100ms\niodepth=8\nthinktime=400us\nthinktime_blocks=4\nthinktime_blocks_type=issue\n", 4 / 500e-6},
		// 10 ms of I/O (100 I/Os), then 1 ms of thinking: 10 cycles of
		// 11 ms; thinktime_blocks alone would think after every I/O.
		{"iotime", "runtime=110ms\nthinktime=1ms\nthinktime_iotime=10ms\n", 100 / 11e-3},
		// With thinktime_blocks, whichever comes first: 30 I/Os (3 ms)
		// before 10 ms, then 1 ms; or 10 ms before 150 I/Os.
		{"iotime-blocks-first", "runtime=100ms\nthinktime=1ms\nthinktime_iotime=10ms\nthinktime_blocks=30\n", 30 / 4e-3},
		{"iotime-first", "runtime=110ms\nthinktime=1ms\nthinktime_iotime=10ms\nthinktime_blocks=150\n", 100 / 11e-3},
		// fio reads a bare thinktime_iotime in seconds.
		{"iotime-seconds", "runtime=2200ms\nthinktime=200ms\nthinktime_iotime=2\n", 20000 / 2.2},
		// rate_iops=1000 with 20 ms of thinking after every 20 I/Os:
		// fio catches up on what the thinking missed, or, with
		// rate_ignore_thinktime, moves its schedule on by the
		// thinktime less one I/O (19 ms): the 20 I/Os due at 0..19 ms,
		// the next cycle's due at 39 ms. 25 cycles in 975 ms.
		{"rate-ignore", "runtime=975ms\nrate_iops=1000\nthinktime=20ms\nthinktime_blocks=20\nrate_ignore_thinktime=1\n", 20 / 39e-3},
		// Without it the job catches up after the first 19.1 ms of I/O
		// and 20 ms of thinking, and stays behind: 20 I/Os back to back
		// (2 ms), 20 ms of thinking, 43 times.
		{"rate-catch-up", "runtime=985100us\nrate_iops=1000\nthinktime=20ms\nthinktime_blocks=20\n", 880 / 985.1e-3},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := thinkRun(t, head+c.opts)
			if math.Abs(r.IOPS/c.want-1) > 1e-6 {
				t.Errorf("%.3f IOPS (%d I/Os in %v s), want %.3f", r.IOPS, r.IOs, r.Seconds, c.want)
			}
		})
	}
}

// TestThinktimeQuiesce: a stall waits for the I/Os in flight before it
// begins, as fio's io_u_quiesce, and the count it remembers is the one
// that triggered it, so that the I/Os drained after it count toward the
// next; fio checks after each submission, or, when that filled the
// queue, after the completion it then reaps, and not once its loop has
// issued all it should. fio 3.33 with libaio at iodepth=8 on a disk,
// thinktime=10ms, thinktime_blocks=4 and number_ios=27, completed its
// I/Os in bursts of 11, 1, 10, 1 and 4, with no thinking after the last.
func TestThinktimeQuiesce(t *testing.T) {
	// A device of one unit serves the queue in order, 100 µs each.
	jobs, err := ParseFio("q.fio", strings.NewReader("[j]\nrw=randread\nbs=4k\nfilesize=64m\niodepth=8\nthinktime=10ms\nthinktime_blocks=4\nnumber_ios=27\nwrite_lat_log=q\nlog_offset=1\n"))
	if err != nil {
		t.Fatal(err)
	}
	tg := fixedSim(t, fixed.Config{Capacity: 1 << 30, Units: 1, Read: 100 * time.Microsecond})
	rep := mustRun(t, tg, jobs, Options{Seed: 1})
	r := rep.Results[0]
	// 8 I/Os end at 0.1-0.8 ms and the 3 the first completions let out
	// at 1.1 ms: 10 ms of thinking. 1 I/O: 11.2 ms. 8, and 2 more, end
	// by 22.2 ms; 1 at 32.3 ms; the last 4 at 42.7 ms.
	if want := 0.0427; r.IOs != 27 || math.Abs(r.Seconds-want) > 1e-9 {
		t.Errorf("%d I/Os in %.6f s, want 27 in %.6f s", r.IOs, r.Seconds, want)
	}
	dir := t.TempDir()
	if err := rep.WriteLogs(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "q_clat.1.log"))
	if err != nil {
		t.Fatal(err)
	}
	// bursts of completions 5 ms apart at least
	var bursts []int
	last := -100.0
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		ms, err := strconv.ParseFloat(strings.TrimSpace(strings.Split(l, ",")[0]), 64)
		if err != nil {
			t.Fatal(err)
		}
		if ms-last > 5 {
			bursts = append(bursts, 0)
		}
		bursts[len(bursts)-1]++
		last = ms
	}
	if want := []int{11, 1, 10, 1, 4}; !slices.Equal(bursts, want) {
		t.Errorf("bursts of %v I/Os, want %v", bursts, want)
	}
}
