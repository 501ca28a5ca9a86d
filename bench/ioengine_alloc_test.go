package bench

import (
	"fmt"
	"runtime"
	"testing"
)

// TestIOEngineAllocsPerIO checks that the asynchronous engines' hot path
// allocates nothing per I/O: an allocation per I/O is work fio does not
// do and, through the garbage collector, a latency tail it does not
// have. The same job runs with two I/O counts; what the runs allocate
// beyond their set-up, divided by the extra I/Os, must stay below one
// allocation per hundred I/Os (the per-second series grows by a sample
// a second, a histogram by a bucket now and then).
func TestIOEngineAllocsPerIO(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("io_uring and native AIO are Linux's")
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		engine Engine
		rw     RW
		qd     int
	}{
		{EngineIOUring, RandRead, 1},
		{EngineIOUring, RandWrite, 32},
		{EngineLibaio, RandRead, 8},
	} {
		t.Run(fmt.Sprintf("engine=%s/rw=%s/qd=%d", tc.engine, tc.rw, tc.qd), func(t *testing.T) {
			tg, err := OpenPath(dir)
			if err != nil {
				t.Fatal(err)
			}
			allocs := func(ios int64) float64 {
				j := Job{Name: "a", RW: tc.rw, BS: 4096, Size: 8 << 20, IODepth: tc.qd, Engine: tc.engine, NumberIOs: ios, Filename: "allocs.dat"}
				return testing.AllocsPerRun(3, func() {
					if _, err := Run(tg, []Job{j}, Options{Seed: 1}); err != nil {
						t.Fatal(err)
					}
				})
			}
			const few, many = 1000, 21000
			allocs(few) // lays the file out
			a, b := allocs(few), allocs(many)
			per := (b - a) / (many - few)
			t.Logf("%.0f allocations at %d I/Os, %.0f at %d: %.4f per I/O", a, few, b, many, per)
			if per > 0.01 {
				t.Errorf("%.4f allocations per I/O, want none", per)
			}
		})
	}
}

// TestVerifyWritesAllocateUpFront checks that a verify job's writes are
// remembered in memory set aside before its clock starts: a list grown
// while the I/Os run allocates about 180 bytes per write and brings the
// garbage collector, and its pauses, into the timed phase.
func TestVerifyWritesAllocateUpFront(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("io_uring and native AIO are Linux's")
	}
	tg, err := OpenPath(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// The fewest bytes of three runs: the package's other tests leave
	// goroutines behind that allocate now and then.
	bytes := func(ios int64) uint64 {
		least := ^uint64(0)
		for range 3 {
			least = min(least, verifyRunBytes(t, tg, ios))
		}
		return least
	}
	bytes(1000) // lays the file out
	const few, many = 1000, 21000
	a, b := bytes(few), bytes(many)
	per := (float64(b) - float64(a)) / (many - few)
	t.Logf("%d bytes allocated at %d writes, %d at %d: %.1f per write", a, few, b, many, per)
	// Other goroutines of the package add up to 20 bytes per write now
	// and then; a list grown during the run, 180.
	if per > 64 {
		t.Errorf("%.1f bytes allocated per write, want none", per)
	}
}

// verifyRunBytes runs a verify job of ios writes and returns the bytes
// allocated meanwhile.
func verifyRunBytes(t *testing.T, tg Target, ios int64) uint64 {
	j := Job{Name: "v", RW: Write, BS: 4096, Size: 128 << 20, IODepth: 8, Engine: EngineIOUring,
		NumberIOs: ios, Filename: "verify.dat", Verify: "crc32c", DoVerify: true}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := Run(tg, []Job{j}, Options{Seed: 1}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
