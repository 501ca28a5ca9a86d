package validate_test

import (
	"math"
	"testing"
	"time"

	"github.com/nasemu/nasemu/validate"
)

// TestShortRunsSteady backs the shortened diskspd runs of the reference
// data: on an SSD array and on an HDD array behind the SSD cache, 10 s of
// virtual time give the 120 s result within 5 %.
func TestShortRunsSteady(t *testing.T) {
	var cases []validate.Case
	for _, rt := range []time.Duration{10 * time.Second, 0} {
		for _, s := range []string{"ds1817-raid1-ssd-smb-1g", "ds1817-raid5-hdd-cache-iscsi-1g"} {
			for _, d := range []string{"read", "write"} {
				cases = append(cases, validate.Case{ID: s + " " + d, System: "x", Measured: 1, Unit: validate.IOPS,
					Setup: s, Workload: "suite:diskspd", Job: "diskspd 4K random " + d + " T8 O2", Runtime: rt})
			}
		}
	}
	out := validate.Run(cases, validate.Options{Build: build, Seed: 1})
	half := len(out) / 2
	for i, short := range out[:half] {
		full := out[half+i]
		if short.Err != nil || full.Err != nil {
			t.Fatalf("%s: %v %v", short.ID, short.Err, full.Err)
		}
		d := short.Predicted/full.Predicted - 1
		t.Logf("%s: 10 s %.0f IOPS, 120 s %.0f IOPS (%+.1f %%)", short.ID, short.Predicted, full.Predicted, 100*d)
		if math.Abs(d) > 0.05 {
			t.Errorf("%s: 10 s gives %.0f IOPS, 120 s %.0f: not steady", short.ID, short.Predicted, full.Predicted)
		}
	}
}
