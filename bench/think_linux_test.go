package bench

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestThinktimeSpinReal: on a real target thinktime_spin is spent
// spinning on the CPU, the rest of the thinktime asleep, as fio's
// usec_spin and usec_sleep spend them; the stall lasts thinktime either
// way. Ten stalls of 30 ms with 25 ms of spinning each spin 250 ms,
// and the spinning thread uses the CPU meanwhile (the test asks for a
// fifth of it, what a host loaded four times over its cores leaves a
// spinning thread). The spin's CPU is the spinning thread's own: the
// process's would also count the sleeps' last stretch, which spins
// for nanosleep's granularity, large on a loaded host.
func TestThinktimeSpinReal(t *testing.T) {
	for _, engine := range []string{"psync", "libaio"} {
		t.Run(engine, func(t *testing.T) {
			for _, spin := range []bool{false, true} {
				file := fmt.Sprintf("[j]\nrw=read\nbs=4k\nfilesize=1m\nnumber_ios=10\nioengine=%s\nthinktime=30ms\n", engine)
				if spin {
					file += "thinktime_spin=25ms\n"
				}
				jobs, err := ParseFio("spin.fio", strings.NewReader(file))
				if err != nil {
					t.Fatal(err)
				}
				tg, err := OpenPath(t.TempDir())
				if err != nil {
					t.Fatal(err)
				}
				r := mustRun(t, tg, jobs, Options{Seed: 1}).Results[0]
				// (a loaded host's sleeps overshoot: only the floor is firm)
				if r.IOs != 10 || r.Seconds < 0.3 || r.Seconds > 1.5 {
					t.Errorf("spin=%v: %d I/Os in %.3f s, want 10 in 10 stalls of 30 ms", spin, r.IOs, r.Seconds)
				}
				// Each spin ends 25 ms after its stall began, which the
				// thread that spins learns of a little after (and a loaded host
				// may take it off the CPU as it ends).
				want := map[bool]time.Duration{true: 250 * time.Millisecond}[spin]
				if got := time.Duration(tg.clock.spun.Load()); got < want*4/5 || got > want*3/2 {
					t.Errorf("spin=%v: spun %v, want %v", spin, got, want)
				}
				if cpu := time.Duration(tg.clock.spunCPU.Load()); cpu < want/5 || cpu > want*3/2 {
					t.Errorf("spin=%v: the spinning thread used %v of CPU, want %v", spin, cpu, want)
				}
			}
		})
	}
}
