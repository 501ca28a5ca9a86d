package bench

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestFillCountsInLat: fio takes a write's start time before it fills
// the buffer with the verify pattern (get_io_u stamps start_time, do_io
// then calls populate_verify_io_u) and its issue time after, so the fill
// counts in lat (in slat where the engine queues) and not in clat.
// Writes of 8 MiB on a real target: lat exceeds clat by the fill at
// least (half of it, for a loaded host's noise; without the fill's
// time, lat less clat is a synchronous engine's 0 or an asynchronous
// one's submission of a direct write, a fraction of the fill).
func TestFillCountsInLat(t *testing.T) {
	const n = 8 << 20
	buf := make([]byte, n)
	fill := time.Duration(1 << 62)
	for range 3 {
		start := time.Now()
		fillPattern(buf, 1, 0, nil)
		fill = min(fill, time.Since(start))
	}
	for _, engine := range []string{"psync", "libaio"} {
		t.Run(engine, func(t *testing.T) {
			jobs, err := ParseFio("fill.fio", strings.NewReader(fmt.Sprintf(
				"[w]\nrw=write\nbs=8m\nfilesize=64m\nnumber_ios=8\ndirect=1\nioengine=%s\nverify=crc32c\ndo_verify=0\n", engine)))
			if err != nil {
				t.Fatal(err)
			}
			tg, err := OpenPath(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			w := mustRun(t, tg, jobs, Options{Seed: 1}).Results[0].Write
			if w == nil || w.IOs != 8 {
				t.Fatalf("writes: %+v", w)
			}
			lead := time.Duration((w.Lat.Mean - w.Clat.Mean) * float64(time.Microsecond))
			if lead < fill/2 {
				t.Errorf("lat %.0f µs, clat %.0f µs: lat less clat %v, want the pattern's fill (%v) in it", w.Lat.Mean, w.Clat.Mean, lead, fill)
			}
			if engine == "libaio" && w.Slat.Mean > 0 && w.Slat.Mean*float64(time.Microsecond) < float64(fill/2) {
				t.Errorf("slat %.0f µs, want the pattern's fill (%v) in it", w.Slat.Mean, fill)
			}
		})
	}
}
