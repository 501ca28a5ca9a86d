package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
)

// BenchmarkPathQueue measures the asynchronous engines on a real file
// whose data sits in the page cache (buffered 4 KiB random reads, which
// the kernel completes while they are submitted). ns/io is wall time per
// I/O; cpu-ns/io the process's CPU time (user and system) per I/O, which
// on a shared host does not depend on how much CPU the other tenants
// leave the run: one submission plus the engine's bookkeeping, what
// bounds nasemu's IOPS against fio's on fast storage.
func BenchmarkPathQueue(b *testing.B) {
	tg := cachedFile(b)
	cpu := func() time.Duration {
		var ru syscall.Rusage
		if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
			b.Fatal(err)
		}
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	for _, e := range []Engine{EngineIOUring, EngineLibaio} {
		for _, qd := range []int{1, 32} {
			b.Run(fmt.Sprintf("engine=%s/qd=%d", e, qd), func(b *testing.B) {
				job := Job{Name: "rr", RW: RandRead, Size: 64 << 20, IODepth: qd, Engine: e, NumberIOs: 1 << 16}
				b.ReportAllocs()
				var ios int64
				var used time.Duration
				for b.Loop() {
					c0 := cpu()
					rep, err := Run(tg, []Job{job}, Options{})
					if err != nil {
						b.Fatal(err)
					}
					used += cpu() - c0
					ios += rep.Results[0].IOs
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(ios), "ns/io")
				b.ReportMetric(float64(used.Nanoseconds())/float64(ios), "cpu-ns/io")
			})
		}
	}
}

// TestQueueReapsAtMost checks that a queue hands out no more completions
// per reap than asked (fio's iodepth_batch_complete_max) and keeps the
// rest for the next: four buffered reads of a cached file complete while
// they are submitted, then come out one, then the other three.
func TestQueueReapsAtMost(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, make([]byte, 4<<12), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const depth = 4
	bufs := make([][]byte, depth)
	for i := range bufs {
		bufs[i] = make([]byte, 4096)
	}
	for _, e := range []Engine{EngineIOUring, EngineLibaio} {
		t.Run(string(e), func(t *testing.T) {
			q, err := queueFactories[e](depth, []int{int(f.Fd())}, bufs, queueOpts{})
			if err != nil {
				if os.Getenv("CI") == "true" {
					t.Fatalf("%s: %v", e, err)
				}
				t.Skipf("%s: %v", e, err)
			}
			defer q.close()
			for i := range depth {
				q.prep(i, 0, models.Read, int64(i)<<12, bufs[i])
			}
			if n, err := q.submit(); n != depth || err != nil {
				t.Fatalf("submit: %d, %v", n, err)
			}
			var got []int
			collect := func(i int, res int64) {
				if res != 4096 {
					t.Errorf("slot %d: result %d", i, res)
				}
				got = append(got, i)
			}
			deadline := time.Now().Add(10 * time.Second)
			for len(got) == 0 && time.Now().Before(deadline) {
				if err := q.wait(time.Second); err != nil {
					t.Fatal(err)
				}
				q.reap(1, collect)
			}
			if len(got) != 1 {
				t.Fatalf("reap(1) handed out %d completions", len(got))
			}
			for len(got) < depth && time.Now().Before(deadline) {
				if err := q.wait(time.Second); err != nil {
					t.Fatal(err)
				}
				q.reap(0, collect)
			}
			slices.Sort(got)
			if !slices.Equal(got, []int{0, 1, 2, 3}) {
				t.Fatalf("completions %v, want each slot once", got)
			}
		})
	}
}

// TestURingRegistersFilesOnlyWhenAsked: as fio's io_uring engine, a ring
// registers the job's files only with registerfiles; by default each
// operation names its file descriptor. The kernel's fdinfo of the ring
// counts the registered files (UserFiles), and reads work either way.
func TestURingRegistersFilesOnlyWhenAsked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, make([]byte, 4096), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for _, register := range []bool{false, true} {
		q, err := newURing(1, []int{int(f.Fd())}, nil, queueOpts{registerFiles: register})
		if err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatal(err)
			}
			t.Skip(err)
		}
		info, err := os.ReadFile(fmt.Sprintf("/proc/self/fdinfo/%d", q.(*uring).fd))
		if err != nil {
			q.close()
			t.Fatal(err)
		}
		want := map[bool]string{false: "UserFiles:\t0\n", true: "UserFiles:\t1\n"}[register]
		if !strings.Contains(string(info), want) {
			t.Errorf("registerFiles=%v: the ring's fdinfo has no %q:\n%s", register, want, info)
		}
		q.prep(0, 0, models.Read, 0, buf)
		if n, err := q.submit(); n != 1 || err != nil {
			q.close()
			t.Fatalf("registerFiles=%v: submit: %d, %v", register, n, err)
		}
		var res int64 = -1
		for deadline := time.Now().Add(10 * time.Second); res < 0 && time.Now().Before(deadline); {
			if err := q.wait(time.Second); err != nil {
				t.Fatal(err)
			}
			q.reap(1, func(_ int, r int64) { res = r })
		}
		q.close()
		if res != 4096 {
			t.Errorf("registerFiles=%v: read returned %d", register, res)
		}
	}
}
