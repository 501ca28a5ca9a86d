package fault

import (
	"errors"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/devicetest"
	"github.com/nasemu/nasemu/models/fixed"
)

func disk(t testing.TB) *fixed.Device {
	d, err := fixed.New(fixed.Config{Capacity: 1 << 30, Units: 4, Read: 100 * time.Microsecond, Write: 50 * time.Microsecond, Other: 20 * time.Microsecond, BytesPerSecond: 500e6})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func inject(t testing.TB, seed uint64, rules ...string) *Device {
	t.Helper()
	var rs []Rule
	for _, s := range rules {
		r, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	d, err := New(disk(t), seed, rs...)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestConformance runs the device kit on the injector without rules and
// with rules that slow requests (failures are not the kit's business).
func TestConformance(t *testing.T) {
	for name, rules := range map[string][]string{
		"none":   nil,
		"delays": {"read p=0.05 delay=30ms", "write range=0:64MiB after=100 count=5 delay=5ms"},
		"stalls": {"block start=50ms p=0.01 stall=20ms"},
	} {
		t.Run(name, func(t *testing.T) {
			devicetest.Run(t, devicetest.Config{
				Parallel: true,
				New:      func(t testing.TB, seed uint64) models.Device { return inject(t, seed, rules...) },
			})
		})
	}
}

// An unreadable range fails the reads that overlap it, and only those;
// writes there and reads elsewhere are served.
func TestReadErrorRange(t *testing.T) {
	d := inject(t, 1, "read range=1MiB:1056768 fail")
	for _, c := range []struct {
		q    models.Request
		fail bool
	}{
		{models.Request{Op: models.Read, Offset: 1 << 20, Length: 4096}, true},
		{models.Request{Op: models.Read, Offset: 1<<20 - 4096, Length: 8192}, true},
		{models.Request{Op: models.Read, Offset: 1<<20 + 4096, Length: 4096}, true},
		{models.Request{Op: models.Read, Offset: 1<<20 + 8192, Length: 4096}, false},
		{models.Request{Op: models.Read, Offset: 1<<20 - 4096, Length: 4096}, false},
		{models.Request{Op: models.Write, Offset: 1 << 20, Length: 4096}, false},
		{models.Request{Op: models.Flush}, false},
	} {
		_, err := d.Submit(time.Second, c.q)
		if c.fail != (err != nil) || (err != nil && (!errors.Is(err, ErrInjected) || !errors.Is(err, models.ErrFailed))) {
			t.Errorf("%v: error %v, want failure %v wrapping ErrInjected and models.ErrFailed", c.q, err, c.fail)
		}
	}
	if got := d.Counters()[0]; got.Value != 3 {
		t.Errorf("%s = %v, want 3", got.Name, got.Value)
	}
}

// After and Count choose the requests by index; Start by time.
func TestAfterCountStart(t *testing.T) {
	d := inject(t, 1, "write after=3 count=2 fail", "read start=1s dead")
	var fails []int
	for i := range 8 {
		if _, err := d.Submit(time.Duration(i)*time.Millisecond, models.Request{Op: models.Write, Offset: int64(i) * 4096, Length: 4096}); err != nil {
			fails = append(fails, i)
		}
	}
	if len(fails) != 2 || fails[0] != 3 || fails[1] != 4 {
		t.Errorf("writes %v failed, want 3 and 4", fails)
	}
	if _, err := d.Submit(999*time.Millisecond, models.Request{Op: models.Read, Length: 4096}); err != nil {
		t.Fatalf("read before the death: %v", err)
	}
	if _, err := d.Submit(time.Second, models.Request{Op: models.Read, Length: 4096}); !errors.Is(err, ErrInjected) || !d.Dead() {
		t.Fatalf("read at the death: %v, dead %v", err, d.Dead())
	}
	// Dead: every later request fails, whatever its op.
	if _, err := d.Submit(2*time.Second, models.Request{Op: models.Write, Length: 4096}); !errors.Is(err, ErrInjected) {
		t.Fatalf("write after the death: %v", err)
	}
	d.Clear()
	if _, err := d.Submit(3*time.Second, models.Request{Op: models.Flush}); !errors.Is(err, ErrInjected) {
		t.Fatalf("a dead device stays dead after Clear: %v", err)
	}
	if ev := d.Events(); len(ev) != 3 || ev[2].Rule != 1 || ev[2].At != time.Second {
		t.Errorf("events %+v", ev)
	}
}

// A probability chooses about that share of the requests, the same ones
// for the same seed and others for another.
func TestProbability(t *testing.T) {
	run := func(seed uint64) []bool {
		d := inject(t, seed, "read p=0.25 fail")
		out := make([]bool, 4000)
		for i := range out {
			_, err := d.Submit(time.Duration(i)*time.Millisecond, models.Request{Op: models.Read, Offset: int64(i%1000) * 4096, Length: 4096})
			out[i] = err != nil
		}
		return out
	}
	a, b, c := run(1), run(1), run(2)
	n, same := 0, 0
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("request %d: seed 1 chose %v, then %v", i, a[i], b[i])
		}
		if a[i] {
			n++
		}
		if a[i] == c[i] {
			same++
		}
	}
	if n < 900 || n > 1100 {
		t.Errorf("%d of 4000 chosen at p=0.25", n)
	}
	if same == len(a) {
		t.Error("seeds 1 and 2 chose the same requests")
	}
}

// A delay lengthens the chosen request only; a stall holds every request
// submitted in its window until its end.
func TestDelayAndStall(t *testing.T) {
	plain := disk(t)
	q := models.Request{Op: models.Read, Offset: 0, Length: 4096}
	base, _ := plain.Submit(0, q)
	d := inject(t, 1, "read count=1 delay=30ms")
	if done, _ := d.Submit(0, q); done != base+30*time.Millisecond {
		t.Errorf("delayed read done at %v, want %v", done, base+30*time.Millisecond)
	}
	if done, _ := d.Submit(time.Second, q); done != time.Second+base {
		t.Errorf("next read done at %v, want %v", done, time.Second+base)
	}
	s := inject(t, 1, "write count=1 stall=2s")
	if _, err := s.Submit(time.Second, models.Request{Op: models.Write, Length: 4096}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ at, want time.Duration }{
		{500 * time.Millisecond, 500*time.Millisecond + base},
		{1500 * time.Millisecond, 3*time.Second + base},
		{3 * time.Second, 3*time.Second + base},
	} {
		if done, _ := s.Submit(c.at, q); done < c.want || done > c.want+time.Millisecond {
			t.Errorf("read at %v during a stall from 1s to 3s: done %v, want %v", c.at, done, c.want)
		}
	}
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Rule
	}{
		{"read range=0:1MiB after=10 count=1 fail", Rule{Ops: Reads, To: 1 << 20, After: 10, Count: 1, Fail: true}},
		{"write trim range=4096: p=0.5 delay=5ms", Rule{Ops: Writes | Trims, From: 4096, Probability: 0.5, Delay: 5 * time.Millisecond}},
		{"dead start=3s", Rule{Start: 3 * time.Second, Dead: true}},
		{"block files stall=1s", Rule{Ops: Block | Files, Stall: time.Second}},
	} {
		got, err := Parse(c.in)
		if err != nil || got != c.want {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
		if again, err := Parse(got.String()); err != nil || again != got {
			t.Errorf("Parse(%q) = %+v, %v; want %+v", got.String(), again, err, got)
		}
	}
	for _, bad := range []string{"", "read", "read fail range=5:5", "reed fail", "fail p=2", "fail after=-1", "fail range=1MiB", "fail color=red", "delay=soon"} {
		if _, err := Parse(bad); !errors.Is(err, models.ErrConfig) {
			t.Errorf("Parse(%q): error %v, want ErrConfig", bad, err)
		}
	}
}

// FuzzParse: any text either fails with ErrConfig or gives a valid rule
// whose text form reads back as the same rule.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"read range=0:1MiB after=10 count=1 fail", "dead start=3s", "write p=0.1 delay=5ms stall=1s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := Parse(s)
		if err != nil {
			if !errors.Is(err, models.ErrConfig) {
				t.Fatalf("Parse(%q): %v, not ErrConfig", s, err)
			}
			return
		}
		again, err := Parse(r.String())
		if err != nil || again != r {
			t.Fatalf("Parse(%q) = %+v; its text %q reads back as %+v, %v", s, r, r.String(), again, err)
		}
	})
}

// An injector keeps the first MaxEvents events and counts them all.
func TestEventsBounded(t *testing.T) {
	d := inject(t, 1, "read fail")
	for i := range 2 * MaxEvents {
		d.Submit(time.Duration(i), models.Request{Op: models.Read, Length: 4096})
	}
	if n, c := len(d.Events()), d.Counters()[0].Value; n != MaxEvents || c != 2*MaxEvents {
		t.Errorf("%d events kept, %v counted; want %d and %d", n, c, MaxEvents, 2*MaxEvents)
	}
}

// TestRulesBounded: an injector reports what each rule matched and chose,
// and refuses a rule past MaxRules (control planes add them at run time).
func TestRulesBounded(t *testing.T) {
	d := inject(t, 1, "read count=1 fail")
	for range 2 {
		d.Submit(0, models.Request{Op: models.Read, Length: 4096})
	}
	if got := d.Rules(); len(got) != 1 || got[0].Seen != 1 || got[0].Chosen != 1 || got[0].String() != "read count=1 fail" {
		t.Errorf("Rules: %+v", got)
	}
	for len(d.Rules()) < MaxRules {
		if err := d.Add(Rule{Delay: time.Millisecond}); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Add(Rule{Delay: time.Millisecond}); !errors.Is(err, models.ErrConfig) {
		t.Errorf("rule %d: %v, want refused", MaxRules+1, err)
	}
	d.Clear()
	if err := d.Add(Rule{Delay: time.Millisecond}); err != nil {
		t.Errorf("a rule after Clear: %v", err)
	}
}
