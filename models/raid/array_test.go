package raid

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fixed"
)

// everyLevel lists one array of each level (and a mixed SHR) with its
// member capacities.
var everyLevel = []struct {
	level Level
	caps  []int64
}{
	{Single, []int64{GiB}},
	{RAID0, []int64{GiB, GiB, GiB}},
	{RAID1, []int64{GiB, GiB}},
	{RAID5, []int64{GiB, GiB, GiB, GiB}},
	{RAID6, []int64{GiB, GiB, GiB, GiB, GiB}},
	{RAID10, []int64{GiB, GiB, GiB, GiB}},
	{JBOD, []int64{GiB, 2 * GiB, GiB / 2}},
	{SHR, []int64{GiB, GiB, GiB}},
	{SHR, []int64{GiB / 2, GiB, 2 * GiB, 2 * GiB}},
}

func buildLevel(t testing.TB, level Level, caps []int64) *Array {
	ms := make([]models.Device, len(caps))
	for i, c := range caps {
		ms[i] = fixedMembers(t, 1, fixed.Config{Capacity: c, Read: 100 * time.Microsecond, Write: 150 * time.Microsecond, Other: time.Millisecond, BytesPerSecond: 200e6})[0]
	}
	return mustNew(t, Config{Level: level}, ms)
}

// randomWorkload submits a random mix of requests at random, unordered
// times and returns their completion times.
func randomWorkload(t *testing.T, a *Array, seed uint64, n int) []time.Duration {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 11))
	out := make([]time.Duration, 0, n)
	for i := 0; i < n; i++ {
		off := rng.Int64N(a.Capacity()/512) * 512
		r := models.Request{Op: models.Op(rng.IntN(5)), Offset: off, Length: min(a.Capacity()-off, 512*(1+rng.Int64N(1024)))}
		at := time.Duration(rng.Int64N(int64(time.Second)))
		done, err := a.Submit(at, r)
		if err != nil {
			t.Fatalf("%v at %v: %v", r, at, err)
		}
		if done < at {
			t.Fatalf("%v at %v completed at %v", r, at, done)
		}
		out = append(out, done)
	}
	return out
}

// Every level accepts submissions out of time order, is deterministic,
// rejects requests beyond its capacity, completes file ops at once and
// flushes every member.
func TestEveryLevelContract(t *testing.T) {
	for _, tc := range everyLevel {
		name := fmt.Sprintf("%s-%d", tc.level, len(tc.caps))
		t.Run(name, func(t *testing.T) {
			a, b := buildLevel(t, tc.level, tc.caps), buildLevel(t, tc.level, tc.caps)
			want, _, err := Usable(Config{Level: tc.level}, tc.caps)
			if err != nil || a.Capacity() != want {
				t.Fatalf("capacity %d, Usable %d, %v", a.Capacity(), want, err)
			}
			x, y := randomWorkload(t, a, 1, 2000), randomWorkload(t, b, 1, 2000)
			for i := range x {
				if x[i] != y[i] {
					t.Fatalf("request %d: %v, then %v: not deterministic", i, x[i], y[i])
				}
			}
			for _, r := range []models.Request{
				{Op: models.Read, Offset: a.Capacity() - 4096, Length: 8192},
				{Op: models.Write, Offset: a.Capacity(), Length: 1},
				{Op: models.Trim, Offset: a.Capacity() + 1, Length: 0},
			} {
				if _, err := a.Submit(0, r); !errors.Is(err, models.ErrOutOfRange) {
					t.Errorf("%v: %v, want ErrOutOfRange", r, err)
				}
			}
			if _, err := a.Submit(0, models.Request{Op: models.Read, Offset: -1, Length: 1}); !errors.Is(err, models.ErrOutOfRange) && !errors.Is(err, models.ErrInvalid) {
				t.Errorf("negative offset: %v", err)
			}
			if _, err := a.Submit(0, models.Request{Op: models.Write, Length: -1}); !errors.Is(err, models.ErrInvalid) {
				t.Errorf("negative length: %v", err)
			}
			if done, err := a.Submit(7*time.Second, models.Request{Op: models.Stat}); done != 7*time.Second || err != nil {
				t.Errorf("stat: %v, %v", done, err)
			}
			// Flush: to every member, done when the slowest is.
			at := 100 * time.Second
			done, err := a.Submit(at, models.Request{Op: models.Flush})
			if err != nil || done != at+time.Millisecond {
				t.Errorf("flush of an idle array: %v, %v; want %v", done, err, at+time.Millisecond)
			}
			if got := len(a.Children()); got != len(tc.caps) {
				t.Errorf("%d children, want %d", got, len(tc.caps))
			}
		})
	}
}

// Trim maps to member ranges; on parity levels only whole rows are
// trimmed, data and parity.
func TestTrim(t *testing.T) {
	trims := func(fs []*fakeDev) (n int, bytes int64) {
		for _, f := range fs {
			for _, io := range f.log {
				if io.op == models.Trim {
					n++
					bytes += io.n
				}
			}
			f.log = f.log[:0]
		}
		return
	}
	for _, tc := range []struct {
		level      Level
		n          int
		off, len   int64
		ios        int
		trimmedPer int64 // bytes trimmed on the members in all
	}{
		{RAID0, 4, 0, 512 * KiB, 4, 512 * KiB},
		{RAID1, 3, 4 * KiB, 60 * KiB, 3, 180 * KiB},
		{RAID10, 4, 0, 256 * KiB, 4, 512 * KiB},
		{RAID5, 4, 0, 192 * KiB, 4, 256 * KiB},         // one row: 3 data + 1 parity chunk
		{RAID5, 4, 4 * KiB, 188 * KiB, 0, 0},           // a partial row: nothing
		{RAID5, 4, 100 * KiB, 400 * KiB, 4, 256 * KiB}, // rows 0 and 2 partial, row 1 whole
		{RAID6, 5, 0, 384 * KiB, 5, 640 * KiB},         // two whole rows, each member one contiguous trim
	} {
		fs := make([]*fakeDev, tc.n)
		ms := make([]models.Device, tc.n)
		for i := range fs {
			fs[i] = &fakeDev{capacity: GiB}
			ms[i] = fs[i]
		}
		a := mustNew(t, Config{Level: tc.level}, ms)
		if _, err := a.Submit(0, models.Request{Op: models.Trim, Offset: tc.off, Length: tc.len}); err != nil {
			t.Fatal(err)
		}
		if n, b := trims(fs); n != tc.ios || b != tc.trimmedPer {
			t.Errorf("%s of %d: trim [%d, +%d): %d member trims of %d bytes, want %d of %d", tc.level, tc.n, tc.off, tc.len, n, b, tc.ios, tc.trimmedPer)
		}
	}
}

// Submit does not allocate on any level, healthy or degraded.
func TestSubmitDoesNotAllocate(t *testing.T) {
	for _, tc := range everyLevel {
		a := buildLevel(t, tc.level, tc.caps)
		rng := rand.New(rand.NewPCG(1, 2))
		reqs := make([]models.Request, 256)
		for i := range reqs {
			off := rng.Int64N(a.Capacity()/4096-64) * 4096
			reqs[i] = models.Request{Op: models.Op(rng.IntN(4)), Offset: off, Length: 4096 * (1 + rng.Int64N(63))}
		}
		i := 0
		check := func(state string) {
			allocs := testing.AllocsPerRun(1000, func() {
				if _, err := a.Submit(time.Duration(i)*time.Microsecond, reqs[i%len(reqs)]); err != nil {
					t.Fatal(err)
				}
				i++
			})
			if allocs != 0 {
				t.Errorf("%s of %d (%s): %.1f allocations per Submit", tc.level, len(tc.caps), state, allocs)
			}
		}
		check("healthy")
		if Tolerates(tc.level, len(tc.caps)) > 0 {
			_ = a.FailMember(time.Duration(i)*time.Microsecond, 1)
			check("degraded")
			if err := a.ReplaceMember(time.Duration(i)*time.Microsecond, 1, fixedMembers(t, 1, fixed.Config{Capacity: tc.caps[1]})[0]); err != nil {
				t.Fatal(err)
			}
			check("rebuilding")
			if st := a.Status(time.Duration(i) * time.Microsecond); st.State != Rebuilding {
				t.Errorf("%s: state %v after the allocation check, want rebuilding", tc.level, st.State)
			}
		}
	}
}
