package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
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
			// An io_uring ring is single-issuer: every submission must come
			// from the thread that set it up, or io_uring_enter answers
			// EEXIST. A subtest's goroutine may move between threads.
			runtime.LockOSThread() // for good: the thread ends with the test (see prepareStream)
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
			// No garbage collection meanwhile: its stop of the world
			// would wait on the raw wait (a minute, here) while the
			// goroutine that writes the byte stood still, and the
			// wait would end without it.
			defer debug.SetGCPercent(debug.SetGCPercent(-1))
			signalledWait(t, 200*time.Millisecond, c.outlasts)
		})
	}
}

// TestQueueWaitDeferralBounded checks that signals which come again and
// again, as the runtime's do while it waits to stop the world, do not
// renew a raw wait's deferral: the wait ends deferPreemption after the
// first of them, though the read it waits for completes much later.
// Renewed at each signal, it held a garbage collection (and with it
// every goroutine, the pipe's writer too) for good.
func TestQueueWaitDeferralBounded(t *testing.T) {
	defer func(d time.Duration) { deferPreemption = d }(deferPreemption)
	deferPreemption = 50 * time.Millisecond
	p := testPipe(t)
	runtime.LockOSThread() // for good: the thread ends with the test (see prepareStream)
	q := ringReading(t, p[0], 8, true)
	stop := signalStorm(t, 200*time.Microsecond)
	start := time.Now()
	seen, err := q.wait(-1)
	took := time.Since(start)
	stop()
	unix.Write(p[1], []byte{1})
	if err != nil {
		t.Fatal(err)
	}
	if seen != 0 || took > time.Second {
		t.Fatalf("wait went on for %v under repeated signals (saw a completion at %d), past its %v deferral", took, seen, deferPreemption)
	}
	for deadline := time.Now().Add(10 * time.Second); atomic.LoadUint32(q.cqTail) == atomic.LoadUint32(q.cqHead) && time.Now().Before(deadline); {
		if _, err := q.wait(time.Second); err != nil {
			t.Fatal(err)
		}
	}
	var res int64
	q.reap(0, func(i int, r int64) { res = r })
	if res != 1 {
		t.Fatalf("read returned %d, want 1 byte", res)
	}
}

// testPipe returns a pipe's read and write ends, closed when the test
// ends.
func testPipe(t *testing.T) [2]int {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		unix.Close(p[0])
		unix.Close(p[1])
	})
	return p
}

// signalledWait waits on a ring for a read from a pipe, signals the
// waiting thread, writes the byte gap later, and checks whether the
// wait saw the completion (outlasts) or gave up before it.
func signalledWait(t *testing.T, gap time.Duration, outlasts bool) {
	p := testPipe(t)
	runtime.LockOSThread() // for good: the thread ends with the test (see prepareStream)
	tid := unix.Gettid()
	q := ringReading(t, p[0], 8, true)
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
			if seen == 0 && atomic.LoadUint32(q.cqTail) != atomic.LoadUint32(q.cqHead) {
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

// TestIOEngineUnderSignals runs many short jobs on each asynchronous
// engine, waiting in raw system calls (two Ps) and in ordinary ones
// (one), while every thread of the process gets SIGURG, the runtime's
// preemption signal, every 100 µs: far more often than the runtime sends
// it, so that signals land in every system call of the engines, the
// submissions' included. Each job must end with exactly its I/Os done;
// a submission counted twice or a completion lost would leave an I/O
// in flight that never completes, which stallLimit turns into an error
// naming the queue's state instead of a hang.
func TestIOEngineUnderSignals(t *testing.T) {
	tg := stallingAfter(t, 5*time.Second)
	const ios = 200
	job := Job{Name: "s", BS: 4096, Size: 4 << 20, NumberIOs: ios, Filename: "signals.dat"}
	// The file is laid out first: fallocate may fail with EINTR (tmpfs),
	// which is not what this test is about.
	layout := job
	layout.RW, layout.Engine, layout.NumberIOs = Read, EnginePsync, 1
	if _, err := Run(tg, []Job{layout}, Options{}); err != nil {
		t.Fatal(err)
	}
	stop := signalStorm(t, 100*time.Microsecond)
	defer stop()
	for _, procs := range []int{1, 2} {
		for _, e := range []Engine{EngineIOUring, EngineLibaio} {
			for _, c := range []struct {
				rw     RW
				qd     int
				direct bool
			}{{RandRead, 1, true}, {RandWrite, 8, true}, {RandRead, 4, false}, {RandWrite, 1, false}} {
				t.Run(fmt.Sprintf("procs=%d/engine=%s/rw=%s/qd=%d/direct=%v", procs, e, c.rw, c.qd, c.direct), func(t *testing.T) {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
					for seed := range uint64(6) {
						j := job
						j.RW, j.IODepth, j.Engine, j.Direct = c.rw, c.qd, e, c.direct
						rep, err := Run(tg, []Job{j}, Options{Seed: seed})
						if err != nil {
							t.Fatal(err)
						}
						if got := rep.Results[0].IOs; got != ios {
							t.Fatalf("seed %d: %d I/Os done, want %d", seed, got, ios)
						}
						if used := tg.clock.Engines(); !slices.Contains(used, EngineUse{Job: "s", Requested: e, Used: e}) {
							t.Fatalf("did not run on %s: %+v", e, used)
						}
					}
				})
			}
		}
	}
	if n := stop(); n == 0 {
		t.Fatal("no signal was sent")
	}
}

// signalStorm sends SIGURG to every thread of the process every gap
// until the returned function is called; that returns how many signals
// were sent (and may be called again).
func signalStorm(t *testing.T, gap time.Duration) (stop func() int64) {
	done := make(chan struct{})
	var sent atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		pid := unix.Getpid()
		for {
			select {
			case <-done:
				return
			case <-time.After(gap):
			}
			tasks, err := os.ReadDir("/proc/self/task")
			if err != nil {
				t.Error(err)
				return
			}
			for _, task := range tasks {
				if tid, err := strconv.Atoi(task.Name()); err == nil && unix.Tgkill(pid, tid, unix.SIGURG) == nil {
					sent.Add(1)
				}
			}
		}
	})
	var once sync.Once
	return func() int64 {
		once.Do(func() { close(done); wg.Wait() })
		return sent.Load()
	}
}

// dropFirst is a queue that loses its first completion: the engine then
// counts an operation in flight that the kernel has finished, as a lost
// completion or a submission counted twice would leave it.
type dropFirst struct {
	ioQueue
	dropped bool
}

func (d *dropFirst) reap(max int, fn func(i int, res int64)) {
	d.ioQueue.reap(max, func(i int, res int64) {
		if !d.dropped {
			d.dropped = true
			return
		}
		fn(i, res)
	})
}

// TestIOEngineStallFails checks that a queue whose operation never
// completes fails its job after stallLimit, with an error that gives the
// queue's state, and is kept rather than closed (the kernel could still
// write to its buffers).
func TestIOEngineStallFails(t *testing.T) {
	tg := stallingAfter(t, 300*time.Millisecond)
	for _, e := range []Engine{EngineIOUring, EngineLibaio} {
		t.Run(string(e), func(t *testing.T) {
			mk := queueFactories[e]
			var q *dropFirst
			queueFactories[e] = func(depth int, fds []int, bufs [][]byte, o queueOpts) (ioQueue, error) {
				inner, err := mk(depth, fds, bufs, o)
				if err != nil {
					return nil, err
				}
				q = &dropFirst{ioQueue: inner}
				return q, nil
			}
			defer func() { queueFactories[e] = mk }()
			abandoned.Lock()
			before := len(abandoned.queues)
			abandoned.Unlock()
			j := Job{Name: "stall", RW: RandRead, BS: 4096, Size: 1 << 20, IODepth: 1, Engine: e, Direct: true, NumberIOs: 100, Filename: "stall.dat"}
			start := time.Now()
			_, err := Run(tg, []Job{j}, Options{Seed: 1})
			took := time.Since(start)
			if err == nil || !strings.Contains(err.Error(), "no I/O completed in 300ms with 1 in flight") || !strings.Contains(err.Error(), "1 operations taken by the kernel") {
				t.Fatalf("error %v, want a stall with the queue's state", err)
			}
			if took > stallLimit+waitSlice+5*time.Second {
				t.Errorf("the stall took %v to tell", took)
			}
			abandoned.Lock()
			defer abandoned.Unlock()
			if len(abandoned.queues) != before+1 || abandoned.queues[before] != q {
				t.Fatalf("the stalled queue was not kept (%d kept, %d before)", len(abandoned.queues), before)
			}
			// Nothing is in flight in fact: release it.
			abandoned.queues, abandoned.slots = abandoned.queues[:before], abandoned.slots[:before]
			q.close()
		})
	}
}

// TestURingCountsTakenEntries checks that a submission which the kernel
// finds nothing to take (the queue counting an entry it already
// submitted) is an error that names the ring's state, not a wait that
// never ends.
func TestURingCountsTakenEntries(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Truncate(4096); err != nil {
		t.Fatal(err)
	}
	runtime.LockOSThread() // for good: the thread ends with the test (see prepareStream)
	q := ringReading(t, int(f.Fd()), 4096, false)
	q.inRing++ // as if the entry had been counted twice
	n, err := q.submit()
	if n != 0 || err == nil || !strings.Contains(err.Error(), "took 0 of the 1 entries") || !strings.Contains(err.Error(), "submission ring head 1, tail 1") {
		t.Fatalf("submit: %d, %v; want an error naming the ring's state", n, err)
	}
}

// ringReading sets up a ring of one slot on fd, on the calling thread
// (which the caller has locked), with a read of n bytes at offset 0
// submitted; the ring is closed when the test ends.
func ringReading(t *testing.T, fd, n int, raw bool) *uring {
	t.Helper()
	q, err := newURing(1, []int{fd}, nil, queueOpts{raw: raw})
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	buf := make([]byte, n)
	t.Cleanup(func() {
		q.close()
		runtime.KeepAlive(buf) // the kernel's until then
	})
	q.prep(0, 0, models.Read, 0, buf)
	if got, err := q.submit(); got != 1 || err != nil {
		t.Fatalf("submit: %d, %v", got, err)
	}
	return q.(*uring)
}

// stallingAfter sets stallLimit to d until the test ends and returns a
// target on a directory of the test's.
func stallingAfter(t *testing.T, d time.Duration) *Path {
	old := stallLimit
	stallLimit = d
	t.Cleanup(func() { stallLimit = old })
	tg, err := OpenPath(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return tg
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
	runtime.LockOSThread() // for good: the thread ends with the test (see prepareStream)
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
			if _, err := q.wait(time.Second); err != nil {
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

// TestURingThreadPerRing checks that each job's ring runs on a thread of
// its own that ends with the job: the kernel keeps a ring's pool of
// workers per thread, sized by the first ring the thread submitted to,
// and a later ring on the same thread would inherit it (see
// prepareStream).
func TestURingThreadPerRing(t *testing.T) {
	var mu sync.Mutex
	var tids []int
	orig := queueFactories[EngineIOUring]
	queueFactories[EngineIOUring] = func(depth int, fds []int, bufs [][]byte, o queueOpts) (ioQueue, error) {
		mu.Lock()
		tids = append(tids, unix.Gettid())
		mu.Unlock()
		return orig(depth, fds, bufs, o)
	}
	t.Cleanup(func() { queueFactories[EngineIOUring] = orig })
	tg, err := OpenPath(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var jobs []Job
	for i, qd := range []int{1, 32, 4} {
		jobs = append(jobs, Job{Name: fmt.Sprint("j", i), RW: RandWrite, BS: 4096, Size: 1 << 20, IODepth: qd, Engine: EngineIOUring,
			NumberIOs: 64, Filename: "f", Stonewall: true})
	}
	if _, err := Run(tg, jobs, Options{Seed: 1}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(tids) != len(jobs) {
		t.Fatalf("%d rings set up for %d jobs", len(tids), len(jobs))
	}
	for i, tid := range tids {
		if slices.Index(tids, tid) != i {
			t.Errorf("jobs %d and %d set their rings up on the same thread %d", slices.Index(tids, tid), i, tid)
		}
		// The thread ends once its goroutine has; allow it a moment.
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid)); os.IsNotExist(err) {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("job %d's thread %d still runs after the job", i, tid)
				break
			}
		}
	}
}
