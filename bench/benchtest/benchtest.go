// Package benchtest holds the checks that tests of several packages make
// on bench reports: a real target's run against the simulation of the
// same model.
package benchtest

import (
	"math"
	"testing"

	"github.com/nasemu/nasemu/bench"
)

// AgreeIOPS logs each job's IOPS and MB/s on a real target (real, named
// what) beside the simulation's (sim, the same jobs), and fails t for a
// job whose IOPS are off the simulation's by more than tol (a fraction).
func AgreeIOPS(t testing.TB, what string, real, sim *bench.Report, tol float64) {
	t.Helper()
	if len(real.Results) != len(sim.Results) {
		t.Fatalf("%s ran %d jobs, the simulation %d", what, len(real.Results), len(sim.Results))
	}
	for i, r := range real.Results {
		s := sim.Results[i]
		dev := r.IOPS/s.IOPS - 1
		t.Logf("%s: %s %.1f IOPS %.1f MB/s, sim %.1f IOPS %.1f MB/s (%+.1f%%)", r.Name, what, r.IOPS, r.MBps, s.IOPS, s.MBps, 100*dev)
		if math.Abs(dev) > tol {
			t.Errorf("%s: %s %.1f IOPS, sim %.1f: %+.1f%%, want within ±%.0f%%", r.Name, what, r.IOPS, s.IOPS, 100*dev, 100*tol)
		}
	}
}
