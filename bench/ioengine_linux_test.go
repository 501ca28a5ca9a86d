package bench

import (
	"fmt"
	"syscall"
	"testing"
	"time"
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
