package validate_test

import (
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/nasemu/nasemu"
	"github.com/nasemu/nasemu/validate"
)

// Fidelity thresholds of the reference data. The goals are a median
// |error| of at most 15 % and 80 % of the cases within 25 %; the models
// meet both: 8.2 % and 86.3 % (seed 1). The test holds
// the line reached so far, so that a change cannot quietly make the
// predictions worse: raise minWithin25 as the models improve, never lower
// it to let a change through. Each review predicted with the calibrations
// set from its own rows at their class defaults (validate.Cross, what a
// system outside the reference set gets) is held to issue 16's goal.
const (
	minCases       = 300  // cases predicted of reviews 001-003
	maxMedianError = 8.4  // median |error| in percent (reached: 8.2)
	minWithin25    = 86.0 // percent of cases within 25 % (reached: 86.3; goal 80)
	maxLeftOut     = 15.0 // median |error| of each review left out (reached: 11.8, 11.0, 8.9)
)

var build = validate.SetupBuilder(nasemu.LoadSetup)

func loadReference(t *testing.T) []validate.Case {
	t.Helper()
	path := filepath.Join("..", "testdata", "reference", "cases.csv")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cases, err := validate.Load(path, f)
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

// TestReference runs every reference case in virtual time and fails when
// the summary falls below the thresholds.
func TestReference(t *testing.T) {
	cases := loadReference(t)
	start := time.Now()
	out := validate.Run(cases, validate.Options{Build: build, Files: os.DirFS(filepath.Join("..", "testdata", "reference")), Seed: 1})
	wall := time.Since(start)
	for _, o := range out {
		if o.Err != nil {
			t.Errorf("%s (line %d): %v", o.ID, o.Line, o.Err)
		}
	}
	s := validate.Summarize(out)
	t.Logf("%d cases in %v: median |error| %.1f %%, %.1f %% within 25 %%; %d not modelled", s.Cases, wall.Round(time.Millisecond), s.MedianAbsErrorPct, s.Within25Pct, s.NotModelled)
	for _, o := range validate.Worst(out, 10) {
		t.Logf("worst: %-55s measured %9.2f predicted %9.2f %-4s %+7.1f %%", o.ID, o.Measured, o.Predicted, o.Unit, o.ErrorPct)
	}
	if testing.Verbose() {
		seen := map[string]bool{}
		var slow []validate.Outcome
		for _, o := range out {
			if k := o.Setup + o.Workload; o.OK() && !seen[k] {
				seen[k] = true
				slow = append(slow, o)
			}
		}
		sort.Slice(slow, func(i, k int) bool { return slow[i].Wall > slow[k].Wall })
		for _, o := range slow[:min(8, len(slow))] {
			t.Logf("slow run: %v %s %s", o.Wall.Round(time.Millisecond), o.Setup, o.Workload)
		}
	}
	if os.Getenv("VALIDATE_DUMP") != "" {
		w, _ := os.Create(os.Getenv("VALIDATE_DUMP"))
		validate.WriteTable(w, out)
		w.Close()
	}
	if s.Cases < minCases {
		t.Errorf("%d cases predicted, want at least %d", s.Cases, minCases)
	}
	if s.MedianAbsErrorPct > maxMedianError {
		t.Errorf("median |error| %.1f %% > %.1f %%", s.MedianAbsErrorPct, maxMedianError)
	}
	if s.Within25Pct < minWithin25 {
		t.Errorf("%.1f %% of cases within 25 %%, want at least %.0f %%", s.Within25Pct, minWithin25)
	}
	folds, err := validate.Cross(cases, out, validate.Options{Files: os.DirFS(filepath.Join("..", "testdata", "reference")), Seed: 1},
		func(off []validate.Calibration) validate.Builder {
			return validate.SetupBuilder(nasemu.LoadSetup, off...)
		})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range folds {
		l := validate.Summarize(f.LeftOut)
		t.Logf("review %s left out (%v off): median |error| %.1f %%, %.1f %% within 25 %%", f.Review, f.Off, l.MedianAbsErrorPct, l.Within25Pct)
		if l.MedianAbsErrorPct > maxLeftOut {
			t.Errorf("review %s left out: median |error| %.1f %% > %.1f %%", f.Review, l.MedianAbsErrorPct, maxLeftOut)
		}
	}
}
