package raid

import (
	"errors"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fault"
)

// faulty wraps member i of ms with an injector of the rules.
func faulty(t *testing.T, ms []models.Device, i int, rules ...string) *fault.Device {
	t.Helper()
	var rs []fault.Rule
	for _, s := range rules {
		r, err := fault.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
	}
	f, err := fault.New(ms[i], uint64(i), rs...)
	if err != nil {
		t.Fatal(err)
	}
	ms[i] = f
	return f
}

// A member that dies under load is failed by the array, as md fails a
// member on an I/O error: the request that found it dead is served from
// the redundancy left, the array goes degraded, a replacement rebuilds.
func TestMemberDiesUnderLoad(t *testing.T) {
	for _, level := range []Level{RAID1, RAID5, RAID6, RAID10} {
		ms := fixedMembers(t, 4, fastDrive)
		f := faulty(t, ms, 1, "start=1s dead")
		a := mustNew(t, Config{Level: level, RebuildRate: 200}, ms)
		at := time.Duration(0)
		for i := range 4000 {
			r := models.Request{Op: models.Read, Offset: int64(i*7919%4096) * 16 * KiB, Length: 16 * KiB}
			if i%3 == 0 {
				r.Op = models.Write
			}
			done, err := a.Submit(at, r)
			if err != nil {
				t.Fatalf("%v: request %d %v at %v: %v", level, i, r, at, err)
			}
			at = max(at+time.Millisecond, done-time.Millisecond)
		}
		if !f.Dead() {
			t.Fatalf("%v: the member never died", level)
		}
		st := a.Status(at)
		if st.State != Degraded || len(st.Failed) != 1 || st.Failed[0] != 1 {
			t.Fatalf("%v: after the death: %+v, want degraded with member 1 failed", level, st)
		}
		if level == RAID5 || level == RAID6 {
			if v, _ := models.Sum(a, "degraded_reads"); v == 0 {
				t.Errorf("%v: no degraded reads after the death", level)
			}
		}
		if err := a.ReplaceMember(at, 1, fixedMembers(t, 1, fastDrive)[0]); err != nil {
			t.Fatal(err)
		}
		if st := a.Status(at + time.Hour); st.State != Optimal {
			t.Errorf("%v: an hour after the replacement: %+v", level, st)
		}
	}
}

// An unreadable range on a surviving member reaches the rebuild: the
// rebuild's read of it fails that member too, which a RAID 5 does not
// survive (the array fails and says which members) and a RAID 6 does
// (the rebuild goes on from the members left).
func TestReadErrorDuringRebuild(t *testing.T) {
	for _, c := range []struct {
		level Level
		want  State
	}{{RAID5, Failed}, {RAID6, Rebuilding}} {
		ms := fixedMembers(t, 5, fastDrive)
		f := faulty(t, ms, 2, "read range=64MiB:65MiB fail")
		a := mustNew(t, Config{Level: c.level, RebuildRate: 100}, ms)
		if err := a.FailMember(0, 4); err != nil {
			t.Fatal(err)
		}
		if err := a.ReplaceMember(0, 4, fixedMembers(t, 1, fastDrive)[0]); err != nil {
			t.Fatal(err)
		}
		// At 100 MB/s the rebuild reaches member offset 64 MiB after
		// about 0.67 s; by 1 s it has read the bad range.
		st := a.Status(time.Second)
		if st.State != c.want || len(st.Failed) == 0 || st.Failed[0] != 2 {
			t.Fatalf("%v: %+v, want %v with member 2 failed", c.level, st, c.want)
		}
		if len(f.Events()) == 0 {
			t.Fatalf("%v: the bad range was never read", c.level)
		}
		_, err := a.Submit(time.Second, models.Request{Op: models.Read, Length: 4096})
		if (c.want == Failed) != errors.Is(err, models.ErrFailed) {
			t.Errorf("%v: read after the rebuild's read error: %v", c.level, err)
		}
		if c.want == Rebuilding {
			if st := a.Status(time.Hour); st.State != Degraded || len(st.Failed) != 1 {
				t.Errorf("%v: an hour later: %+v, want degraded (member 4 rebuilt, 2 failed)", c.level, st)
			}
		}
	}
}

// A replacement that fails the rebuild's writes is failed again and the
// array stays degraded; a second replacement waiting behind it starts.
func TestReplacementFailsRebuild(t *testing.T) {
	ms := fixedMembers(t, 4, fastDrive)
	a := mustNew(t, Config{Level: RAID6, RebuildRate: 100}, ms)
	for _, m := range []int{0, 3} {
		if err := a.FailMember(0, m); err != nil {
			t.Fatal(err)
		}
	}
	bad := fixedMembers(t, 1, fastDrive)
	faulty(t, bad, 0, "write after=20 dead")
	if err := a.ReplaceMember(0, 0, bad[0]); err != nil {
		t.Fatal(err)
	}
	if err := a.ReplaceMember(0, 3, fixedMembers(t, 1, fastDrive)[0]); err != nil {
		t.Fatal(err)
	}
	st := a.Status(time.Hour)
	if st.State != Degraded || len(st.Failed) != 1 || st.Failed[0] != 0 {
		t.Fatalf("an hour later: %+v, want degraded with the bad replacement (0) failed, 3 rebuilt", st)
	}
}
