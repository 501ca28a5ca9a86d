package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models/fixed"
)

// TestDiskspdWallTime runs the whole diskspd suite (2 × (5 s warm-up +
// 120 s) of virtual time, 8 threads × 2 outstanding) on a fast fixed model
// and checks that it takes seconds of wall time at most.
func TestDiskspdWallTime(t *testing.T) {
	jobs, err := Suite("diskspd")
	if err != nil {
		t.Fatal(err)
	}
	// 4 units of 500 µs: 8000 IOPS, 2 million simulated I/Os in all.
	tg := fixedSim(t, fixed.Config{Capacity: 8 << 30, Units: 4, Read: 500 * time.Microsecond, Write: 500 * time.Microsecond})
	start := time.Now()
	rep := mustRun(t, tg, jobs, Options{Suite: "diskspd"})
	wall := time.Since(start)
	var ios int64
	for _, r := range rep.Results {
		ios += r.IOs
		if r.Seconds < 120 || r.Seconds > 120.01 || r.IOPS < 7999 || r.IOPS > 8001 {
			t.Errorf("%s: %.3f s, %.1f IOPS; want 120 s at 8000 IOPS", r.Name, r.Seconds, r.IOPS)
		}
	}
	t.Logf("diskspd suite: %d measured I/Os (plus warm-up and a 4 GiB layout) in %v of wall time: %.2f M simulated I/Os per second",
		ios, wall, float64(ios)/wall.Seconds()/1e6)
	if wall > 10*time.Second {
		t.Errorf("the diskspd suite took %v of wall time", wall)
	}
}

// BenchmarkVirtualEngine measures the engine's overhead per simulated I/O
// with a model that costs next to nothing (fixed service time, one unit):
// each op is a run of ioCount random 4 KiB reads; ns/io is the figure.
func BenchmarkVirtualEngine(b *testing.B) {
	const ioCount = 1 << 18
	for _, c := range []struct{ qd, jobs int }{{1, 1}, {2, 8}, {32, 1}, {32, 16}} {
		b.Run(fmt.Sprintf("qd=%d/numjobs=%d", c.qd, c.jobs), func(b *testing.B) {
			// Instances share one file; each does its share of ioCount.
			job := Job{Name: "b", RW: RandRead, IODepth: c.qd, NumJobs: c.jobs, Filename: "b.dat",
				Size: int64(ioCount/c.jobs) * 4096}
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				tg := fixedSim(b, fixed.Config{Capacity: 8 << 30, Read: time.Nanosecond})
				b.StartTimer()
				if _, err := Run(tg, []Job{job}, Options{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/ioCount, "ns/io")
		})
	}
}

// BenchmarkPathRead measures the engine on a real file whose data sits in
// the page cache (buffered 4 KiB random reads at QD1): ns/io is the cost
// of one pread plus the engine's bookkeeping.
func BenchmarkPathRead(b *testing.B) {
	tg := cachedFile(b)
	job := Job{Name: "rr", RW: RandRead, Size: 64 << 20, TimeBased: true, Runtime: time.Second}
	b.ReportAllocs()
	var ios int64
	for b.Loop() {
		rep, err := Run(tg, []Job{job}, Options{})
		if err != nil {
			b.Fatal(err)
		}
		ios += rep.Results[0].IOs
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(ios), "ns/io")
}

// cachedFile returns a path target on a 64 MiB file just written, so
// that its data sits in the page cache.
func cachedFile(b *testing.B) *Path {
	file := filepath.Join(b.TempDir(), "f")
	if err := os.WriteFile(file, make([]byte, 64<<20), 0o644); err != nil {
		b.Fatal(err)
	}
	tg, err := OpenPath(file)
	if err != nil {
		b.Fatal(err)
	}
	return tg
}
