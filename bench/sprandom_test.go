package bench

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
)

// recorder is a device that records the writes it is given and completes
// each block request after a fixed time (file operations take none, as on
// a bare drive).
type recorder struct {
	writes []int64
	cap    int64
}

func (r *recorder) Submit(at time.Duration, q models.Request) (time.Duration, error) {
	if err := models.CheckRange(q, r.cap); err != nil {
		return at, err
	}
	if q.Op == models.Write {
		r.writes = append(r.writes, q.Offset)
	}
	if q.Op.IsFileOp() {
		return at, nil
	}
	return at + 10*time.Microsecond, nil
}

func (r *recorder) Capacity() int64 { return r.cap }

func recordJob(t *testing.T, job string) *recorder {
	t.Helper()
	jobs, err := ParseFio("t.fio", strings.NewReader(job))
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{cap: 1 << 30}
	mustRun(t, NewSim("sim:rec", SimSetup{Device: rec}), jobs, Options{Seed: 1})
	return rec
}

// TestRandomMap: without norandommap a random job writes every block of
// its file once per pass, as fio's random map makes it; with it, offsets
// repeat (about 1 − 1/e of the blocks are hit).
func TestRandomMap(t *testing.T) {
	distinct := func(w []int64) int {
		m := map[int64]bool{}
		for _, o := range w {
			m[o] = true
		}
		return len(m)
	}
	rec := recordJob(t, "[m]\nrw=randwrite\nbs=4k\nfilesize=4m\nloops=2\n")
	if len(rec.writes) != 2048 || distinct(rec.writes[:1024]) != 1024 || distinct(rec.writes[1024:]) != 1024 {
		t.Errorf("random map: %d writes, %d distinct in the first pass", len(rec.writes), distinct(rec.writes[:min(1024, len(rec.writes))]))
	}
	rec = recordJob(t, "[m]\nrw=randwrite\nbs=4k\nfilesize=4m\nnorandommap\n")
	if d := distinct(rec.writes); d > 700 || d < 600 { // 1024·(1−1/e) = 647
		t.Errorf("norandommap: %d distinct of %d writes", d, len(rec.writes))
	}
}

// TestSPRandom: SPRandom writes every block, the physical capacity in
// all, and leaves each region with the invalid share Desnoyers' steady
// state gives it: the first region most invalid, the last valid.
func TestSPRandom(t *testing.T) {
	const regions = 10
	rec := recordJob(t, "[p]\nrw=randwrite\nbs=4k\nfilesize=16m\nsprandom=1\nspr_num_regions=10\nspr_op=0.15\n")
	blocks := int64(16 << 20 / 4096)
	phys := sprPhysical(0.15, 16<<20, 4096) / 4096
	if got := int64(len(rec.writes)); math.Abs(float64(got-phys)) > float64(phys)/50 {
		t.Errorf("%d writes, want about the physical capacity, %d blocks", got, phys)
	}
	last := map[int64]int{}
	for i, o := range rec.writes {
		last[o] = i
	}
	if int64(len(last)) != blocks {
		t.Errorf("%d blocks written of %d", len(last), blocks)
	}
	want := sprValidity(regions, 0.15)
	per := len(rec.writes) / regions
	for r := range regions {
		invalid := 0
		for i := r * per; i < (r+1)*per; i++ {
			if last[rec.writes[i]] != i {
				invalid++
			}
		}
		got := float64(invalid) / float64(per)
		if math.Abs(got-(1-want[r])) > 0.05 {
			t.Errorf("region %d: %.3f invalid, want %.3f", r, got, 1-want[r])
		}
	}
	if w := sprValidity(regions, 0.15); math.Abs(w[0]-(1-1/(0.5/0.15+0.7))) > 1e-9 || w[regions-1] != 1 {
		t.Errorf("validity %v: the first region at the collected block's validity, the last all valid", w)
	}
}

// TestHostCalls: I/O that reaches no device costs the host's time, one
// at a time per job instance whatever the depth; a time-based job whose
// I/O costs nothing stops with an error instead of running forever.
// cpp_null is fio's null engine built as an external one (fio's
// examples/cpp_null.fio): it costs what null costs.
func TestHostCalls(t *testing.T) {
	jobs, err := ParseFio("h.fio", strings.NewReader("[null]\nioengine=null\niodepth=8\nsize=1g\nruntime=10ms\ntime_based\n"+
		"[devnull]\nstonewall\nfilename=/dev/null\nrw=write\nbs=128k\nruntime=10ms\ntime_based\n"+
		"[cpp_null]\nstonewall\nioengine=cpp_null\nsize=1g\nruntime=10ms\ntime_based\n"))
	if err != nil {
		t.Fatal(err)
	}
	rep := mustRun(t, sn700(t), jobs, Options{Seed: 1})
	for i, per := range []time.Duration{nullEngineTime, noDeviceIOTime, nullEngineTime} {
		want := float64(time.Second) / float64(per)
		if got := rep.Results[i].IOPS; math.Abs(got-want) > want/100 {
			t.Errorf("%s: %.0f IOPS, want %.0f (one call at a time)", rep.Results[i].Name, got, want)
		}
	}
	jobs, err = ParseFio("s.fio", strings.NewReader("[stat]\nioengine=filestat\nnrfiles=4\nfilesize=4k\nruntime=1s\ntime_based\n"))
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{cap: 1 << 30}
	if _, err := Run(NewSim("sim:rec", SimSetup{Device: rec}), jobs, Options{Seed: 1}); err == nil || !strings.Contains(err.Error(), "takes no simulated time") {
		t.Errorf("a time-based job of timeless I/O: %v", err)
	}
}

// TestRandMapPasses: the map hands out every block once per pass, for
// sizes that fill and do not fill its last word and its summary, and
// starts a new pass when full.
func TestRandMapPasses(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []uint64{1, 63, 64, 65, 4096, 4097, 70000} {
		m := newRandMap(n)
		for pass := range 2 {
			seen := make([]bool, n)
			for range n {
				b := m.pick(rng)
				if b >= n || seen[b] {
					t.Fatalf("n=%d pass %d: block %d twice or out of range", n, pass, b)
				}
				seen[b] = true
				m.mark(b, 1)
			}
		}
	}
}
