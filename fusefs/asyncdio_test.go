package fusefs

import (
	"encoding/json"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/models/fixed"
)

// TestAsyncDirectIO checks that a queue of O_DIRECT requests submitted
// with libaio (CrystalDiskMark's Q32, fio's iodepth) reaches the model
// together: on a model of 8 units serving a read in 2 ms, fio at queue
// depth 8 could get 4000 reads per second; without asynchronous direct
// I/O the kernel sends such a queue one request at a time (500 per
// second). The bound is half the model's rate: on this kind of host
// (2 shared processors) fio gets 0.6-0.85 of it, the rest lost to answers
// that go out late when eight paced requests and fio share two processors;
// what is checked here is the queue, not that precision.
func TestAsyncDirectIO(t *testing.T) {
	requireFuse(t)
	if _, err := exec.LookPath("fio"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("this test needs fio, which this CI host lacks")
		}
		t.Skip("no fio on this host")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 8)
	model, err := fixed.New(fixed.Config{Capacity: 1 << 30, Units: 8, Read: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s := mountShare(t, model, emu.NewWallClock(1, -1), "", Options{})
	var iops float64
	for attempt := range 3 {
		out, err := exec.Command("fio", "--output-format=json", "--name=q8", "--directory="+s.mnt,
			"--filename=q8.dat", "--size=16m", "--rw=randread", "--bs=4k", "--direct=1",
			"--ioengine=libaio", "--iodepth=8", "--runtime=1", "--time_based").Output()
		if err != nil {
			t.Fatalf("fio: %v\n%s", err, out)
		}
		var res struct {
			Jobs []struct {
				Read struct {
					IOPS float64 `json:"iops"`
				} `json:"read"`
			} `json:"jobs"`
		}
		if err := json.Unmarshal(out, &res); err != nil || len(res.Jobs) != 1 {
			t.Fatalf("fio's output: %v\n%s", err, out)
		}
		iops = res.Jobs[0].Read.IOPS
		t.Logf("attempt %d: libaio QD8 on 8 units of 2 ms: %.0f IOPS (model 4000)", attempt+1, iops)
		if iops >= 2000 && iops <= 4400 {
			return
		}
	}
	t.Errorf("libaio QD8: %.0f IOPS, want 2000-4400 (model 4000, one at a time 500)", iops)
}
