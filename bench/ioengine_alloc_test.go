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
