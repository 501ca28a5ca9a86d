//go:build unix

package emu_test

import (
	"math/rand/v2"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nasemu/nasemu/emu"
)

// BenchmarkWallClockPacing measures the processor time pacing costs per
// request with 32 requests in flight, each waiting 1 to 10 ms, as a
// share's queue-depth-32 random reads do at a time scale of a few:
// cpu-ns/wait is the process's user and system time per wait, late-µs/wait
// how late the waits ended on average. clock=gotimers is Go's timers alone
// (spin 0), for comparison.
func BenchmarkWallClockPacing(b *testing.B) {
	for _, bc := range []struct {
		name string
		spin time.Duration
	}{{"alarms", -1}, {"gotimers", 0}} {
		b.Run("clock="+bc.name, func(b *testing.B) {
			c := emu.NewWallClock(1, bc.spin)
			const inFlight = 32
			per := b.N/inFlight + 1
			var ru0, ru1 syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
			var wg sync.WaitGroup
			var mu sync.Mutex
			var late time.Duration
			for g := range inFlight {
				wg.Go(func() {
					rng := rand.New(rand.NewPCG(uint64(g), 1))
					var mine time.Duration
					for range per {
						at := c.Now() + time.Millisecond + time.Duration(rng.Int64N(int64(9*time.Millisecond)))
						c.SleepUntil(at)
						mine += c.Now() - at
					}
					mu.Lock()
					late += mine
					mu.Unlock()
				})
			}
			wg.Wait()
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
			cpu := ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano()
			n := float64(per * inFlight)
			b.ReportMetric(float64(cpu)/n, "cpu-ns/wait")
			b.ReportMetric(float64(late.Nanoseconds())/n/1e3, "late-µs/wait")
		})
	}
}
