package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

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
			q, err := queueFactories[e](depth, []int{int(f.Fd())}, bufs, false)
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
				if _, err := q.wait(time.Second); err != nil {
					t.Fatal(err)
				}
				q.reap(1, collect)
			}
			if len(got) != 1 {
				t.Fatalf("reap(1) handed out %d completions", len(got))
			}
			for len(got) < depth && time.Now().Before(deadline) {
				if _, err := q.wait(time.Second); err != nil {
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

// TestQueueWaitOutlastsSignal checks that a raw wait which a signal
// interrupts (the runtime preempting the goroutine) goes on until an
// operation completes and tells when it saw it, for deferPreemption at
// most: a read from a pipe is in flight when the waiting thread gets
// SIGURG, the runtime's preemption signal, and its byte is written after
// a while.
func TestQueueWaitOutlastsSignal(t *testing.T) {
	defer func(d time.Duration) { deferPreemption = d }(deferPreemption)
	for _, c := range []struct {
		name     string
		deferFor time.Duration
		outlasts bool
	}{{"outlasts", time.Minute, true}, {"gives-up", time.Millisecond, false}} {
		t.Run(c.name, func(t *testing.T) {
			deferPreemption = c.deferFor
			signalledWait(t, 200*time.Millisecond, c.outlasts)
		})
	}
}

// signalledWait waits on a ring for a read from a pipe, signals the
// waiting thread, writes the byte gap later, and checks whether the
// wait saw the completion (outlasts) or gave up before it.
func signalledWait(t *testing.T, gap time.Duration, outlasts bool) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	defer unix.Close(p[0])
	defer unix.Close(p[1])
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := unix.Gettid()
	q, err := newURing(1, []int{p[0]}, nil, true)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	defer q.close()
	buf := make([]byte, 8)
	q.prep(0, 0, models.Read, 0, buf)
	if n, err := q.submit(); n != 1 || err != nil {
		t.Fatalf("submit: %d, %v", n, err)
	}
	var wrote atomic.Int64
	failed := make(chan error, 1)
	go func() {
		// Once the thread waits in io_uring_enter, signal it, then
		// give the read its byte.
		enter := fmt.Sprint(unix.SYS_IO_URING_ENTER) + " "
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
			b, err := os.ReadFile(fmt.Sprintf("/proc/self/task/%d/syscall", tid))
			if err == nil && strings.HasPrefix(string(b), enter) {
				break
			}
			if time.Now().After(deadline) {
				failed <- fmt.Errorf("the thread never waited in io_uring_enter (%q, %v)", b, err)
				unix.Write(p[1], []byte{1})
				return
			}
		}
		if err := unix.Tgkill(unix.Getpid(), tid, unix.SIGURG); err != nil {
			failed <- err
		}
		time.Sleep(gap)
		wrote.Store(monotonicNow())
		unix.Write(p[1], []byte{1})
		failed <- nil
	}()
	seen, err := q.wait(-1)
	if err != nil {
		t.Fatal(err)
	}
	if !outlasts {
		if seen != 0 {
			t.Fatalf("wait went on %v after the signal, until the byte came", gap)
		}
		for seen == 0 && err == nil {
			seen, err = q.wait(-1)
			if seen == 0 && atomic.LoadUint32(q.(*uring).cqTail) != atomic.LoadUint32(q.(*uring).cqHead) {
				break
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := <-failed; err != nil {
		t.Fatal(err)
	}
	if outlasts && (seen == 0 || seen < wrote.Load()) {
		t.Fatalf("wait returned at %d, the byte was written at %d: the signal ended the wait", seen, wrote.Load())
	}
	var res int64
	q.reap(0, func(i int, r int64) { res = r })
	if res != 1 {
		t.Fatalf("read returned %d, want 1 byte", res)
	}
}
