package nas

import (
	"math/rand/v2"
	"testing"

	"github.com/nasemu/nasemu/models"
)

// Work reserved on a core for a future time (a read's post-processing when
// its data arrives) must not keep the core from work that fits before it:
// with 4 random reads in flight on 1 core and 4 spindles, the array, not the CPU, sets
// the pace.
func TestCoresFillGaps(t *testing.T) {
	for _, direct := range []bool{true, false} {
		c, err := New(Config{CPU: CPU{Cores: 1}, DirectIO: direct, RAM: models.Bytes(256 * models.MiB), OSReserved: models.Bytes(128 * models.MiB)}, hddArray(t))
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(9, 9))
		const n = 20000
		d := closedLoop(t, c, 0, 4, n, func(int) models.Request {
			return models.Request{Op: models.Read, Offset: rng.Int64N(16*models.GiB/4096) * 4096, Length: 4096}
		})
		iops := n / last(d).Seconds()
		array := 4 / (8e-3 + 4096/150e6)
		t.Logf("direct=%v: %.0f IOPS, array %.0f", direct, iops, array)
		if iops < array*0.97 {
			t.Errorf("direct=%v: %.0f IOPS, want the array's %.0f", direct, iops, array)
		}
	}
}
