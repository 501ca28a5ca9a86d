package devicetest

import (
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fixed"
)

// flaw is a device that breaks one rule of the kit: a fixed-cost device
// with one thing wrong.
type flaw struct {
	*fixed.Device
	kind   string
	shared *int64 // state shared by every instance ("shared")
	calls  int64
	busy   time.Duration
	sink   []byte
}

var sharedState int64

func newFlaw(t testing.TB, kind string) models.Device {
	d, err := fixed.New(fixed.Config{Capacity: 64 << 20, Units: 4, Read: 100 * time.Microsecond, Write: 50 * time.Microsecond, Other: 20 * time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	return &flaw{Device: d, kind: kind, shared: &sharedState}
}

func (f *flaw) Submit(at time.Duration, r models.Request) (time.Duration, error) {
	switch f.kind {
	case "early":
		if r.Op == models.Write {
			return at - time.Microsecond, nil
		}
	case "shared":
		*f.shared++
		at += time.Duration(*f.shared % 3)
	case "leaky":
		if err := models.CheckRange(r, f.Capacity()); err != nil {
			f.Device.Submit(at, models.Request{Op: models.Read, Length: 4096})
			return at, err
		}
	case "unchecked":
		if r.Op == models.Read && r.End() > f.Capacity() {
			return at + time.Millisecond, nil
		}
	case "collapse": // one server that thrashes when requests queue
		if err := models.CheckRange(r, f.Capacity()); err != nil {
			return at, err
		}
		svc := 100 * time.Microsecond
		if at < f.busy {
			svc = 2 * time.Millisecond
		}
		f.busy = max(at, f.busy) + svc
		return f.busy, nil
	case "alloc":
		f.sink = make([]byte, 64)
	case "fileops":
		if r.Op.IsFileOp() {
			return at + time.Microsecond, nil
		}
	case "flush":
		if r.Op == models.Flush {
			f.calls++
			return at + time.Duration(f.calls)*time.Millisecond, nil
		}
	}
	return f.Device.Submit(at, r)
}

// Counters breaks the rules of "observed" (reading changes the device)
// and "miscount" (writes counted twice).
func (f *flaw) Counters() []models.Counter {
	cs := f.Device.Counters()
	switch f.kind {
	case "observed":
		f.Device.Submit(0, models.Request{Op: models.Write, Length: 4096})
	case "miscount":
		for i := range cs {
			if cs[i].Name == "writes" {
				cs[i].Value *= 2
			}
		}
	}
	return cs
}

// TestFlawedDevice runs the kit on the flawed device named by
// DEVICETEST_FLAW, for TestKitCatchesFlaws; without it there is nothing
// to run.
func TestFlawedDevice(t *testing.T) {
	kind := os.Getenv("DEVICETEST_FLAW")
	if kind == "" {
		return
	}
	Run(t, Config{New: func(t testing.TB, _ uint64) models.Device { return newFlaw(t, kind) }})
}

// TestKitCatchesFlaws runs the kit on devices that each break one rule
// and checks that the check for that rule, and only checks that can see
// the flaw, fail: a kit that passes everything proves nothing.
func TestKitCatchesFlaws(t *testing.T) {
	if os.Getenv("DEVICETEST_FLAW") != "" {
		return
	}
	// The fixed device itself passes.
	Run(t, Config{Parallel: true, New: func(t testing.TB, _ uint64) models.Device { return newFlaw(t, "none") }})
	for kind, want := range map[string]string{
		"early":     "NotBeforeSubmission",
		"shared":    "Deterministic",
		"observed":  "ObservationChangesNothing",
		"leaky":     "RejectedChangesNothing",
		"unchecked": "Range",
		"collapse":  "QueueDepth",
		"miscount":  "Counters",
		"flush":     "Flush",
		"fileops":   "FileOps",
		"alloc":     "Allocs",
	} {
		t.Run(kind, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestFlawedDevice$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), "DEVICETEST_FLAW="+kind)
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("the kit passed a device with flaw %q:\n%s", kind, out)
			}
			if !strings.Contains(string(out), "--- FAIL: TestFlawedDevice/"+want+" ") {
				t.Errorf("flaw %q: check %s did not fail:\n%s", kind, want, out)
			}
		})
	}
}

// threads is a device that records the thread of each request and serves
// it in a fixed time.
type threads struct {
	*fixed.Device
	seen []int
}

func (d *threads) Submit(at time.Duration, r models.Request) (time.Duration, error) {
	d.seen = append(d.seen, r.Thread)
	return at + time.Millisecond, nil
}

// A closed loop tags each slot as a thread of its own unless told to keep
// the generator's threads, and reports every completion in issue order.
func TestClosedThreads(t *testing.T) {
	f, err := fixed.New(fixed.Config{Capacity: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	next := func(i int) models.Request {
		return models.Request{Op: models.Read, Offset: 0, Length: 4096, Thread: 7}
	}
	for _, own := range []bool{false, true} {
		d := &threads{Device: f}
		l := Closed{Start: time.Second, QD: 3, N: 6, OwnThreads: own}.Run(t, d, next)
		want := []int{0, 1, 2, 0, 1, 2}
		if own {
			want = []int{7, 7, 7, 7, 7, 7}
		}
		if !slices.Equal(d.seen, want) {
			t.Errorf("OwnThreads %v: threads %v, want %v", own, d.seen, want)
		}
		s, ms := time.Second, time.Millisecond
		if done := []time.Duration{s + ms, s + ms, s + ms, s + 2*ms, s + 2*ms, s + 2*ms}; !slices.Equal(l.Done, done) || l.Elapsed != 2*ms {
			t.Errorf("OwnThreads %v: completions %v, elapsed %v", own, l.Done, l.Elapsed)
		}
	}
}
