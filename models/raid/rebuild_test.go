package raid

import (
	"math"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fixed"
)

// fastDrive streams at 1 GB/s, faster than any rebuild rate used here, so
// an idle rebuild is paced by the rate alone.
var fastDrive = fixed.Config{Capacity: 256 * MiB, Read: 20 * time.Microsecond, Write: 20 * time.Microsecond, BytesPerSecond: 1e9}

// rebuildSeconds replaces member i of a, failed at t0, at t0 and returns
// how long the rebuild takes with no other load.
func idleRebuild(t *testing.T, a *Array, i int, t0 time.Duration) time.Duration {
	t.Helper()
	if err := a.FailMember(t0, i); err != nil {
		t.Fatal(err)
	}
	if err := a.ReplaceMember(t0, i, fixedMembers(t, 1, fastDrive)[0]); err != nil {
		t.Fatal(err)
	}
	st := a.Status(t0)
	if st.State != Rebuilding || st.Rebuilding != i || st.RebuildProgress > 0.01 {
		t.Fatalf("after replace: %+v", st)
	}
	st = a.Status(t0 + time.Hour)
	if st.State != Optimal || st.RebuildProgress != 1 || st.LastRebuildDone <= t0 {
		t.Fatalf("an hour later: %+v", st)
	}
	return st.LastRebuildDone - t0
}

// An idle rebuild takes member capacity / rebuild rate: exactly the
// configured rate, or md's speed_limit_max (200000 KiB/s) by default.
func TestRebuildIdleTime(t *testing.T) {
	for _, tc := range []struct {
		level Level
		n     int
		fail  int
		caps  []int64
	}{
		{RAID1, 2, 1, nil}, {RAID5, 4, 2, nil}, {RAID6, 5, 0, nil}, {RAID10, 4, 3, nil},
		{SHR, 4, 1, nil},
		{SHR, 3, 2, []int64{128 * MiB, 256 * MiB, 256 * MiB}}, // two layers on member 2
	} {
		for _, rate := range []float64{50, 0} {
			ms := fixedMembers(t, tc.n, fastDrive)
			if tc.caps != nil {
				for i, c := range tc.caps {
					cfg := fastDrive
					cfg.Capacity = c
					ms[i] = fixedMembers(t, 1, cfg)[0]
				}
			}
			a := mustNew(t, Config{Level: tc.level, RebuildRate: rate}, ms)
			used := a.used[tc.fail]
			bps := rate * 1e6
			if rate == 0 {
				bps = DefaultRebuildMaxKiBps * 1024
			}
			want := time.Duration(float64(used) / bps * float64(time.Second))
			got := idleRebuild(t, a, tc.fail, 5*time.Second)
			t.Logf("%-6s of %d: rebuild of member %d (%d MiB) at %3.0f MB/s: %v (capacity/rate %v)", tc.level, tc.n, tc.fail, used/MiB, bps/1e6, got.Round(time.Millisecond), want.Round(time.Millisecond))
			if !within(got.Seconds(), want.Seconds(), 0.01) {
				t.Errorf("%s of %d at %v MB/s: rebuild took %v, want %v ±1%%", tc.level, tc.n, rate, got, want)
			}
			if rb := counter(a, "rebuild_bytes"); rb != float64(used) {
				t.Errorf("%s: rebuild_bytes %v, want %d", tc.level, rb, used)
			}
		}
	}
}

// loadFor runs a closed loop of random 4 KiB reads at queue depth qd
// from start until end and returns the reads completed per second.
func loadFor(t *testing.T, a *Array, start, end time.Duration, qd int, seed uint64) float64 {
	t.Helper()
	next := randomOps(seed, models.Read, 4*KiB, a.Capacity())
	slots := make([]time.Duration, qd)
	for i := range slots {
		slots[i] = start
	}
	n := 0
	for {
		j := 0
		for k := range slots {
			if slots[k] < slots[j] {
				j = k
			}
		}
		if slots[j] >= end {
			return float64(n) / (end - start).Seconds()
		}
		done, err := a.Submit(slots[j], next(n))
		if err != nil {
			t.Fatal(err)
		}
		slots[j] = done
		n++
	}
}

// Under md's default pacing a rebuild crawls at speed_limit_min (1000
// KiB/s) while foreground I/O runs and speeds up to speed_limit_max when it
// stops.
func TestRebuildDefaultPacingUnderLoad(t *testing.T) {
	a := mustNew(t, Config{Level: RAID5}, fixedMembers(t, 4, fastDrive))
	t0 := time.Second
	_ = a.FailMember(t0, 1)
	_ = a.ReplaceMember(t0, 1, fixedMembers(t, 1, fastDrive)[0])
	const busy = 4 * time.Second
	loadFor(t, a, t0, t0+busy, 4, 1)
	st := a.Status(t0 + busy)
	minRate := float64(DefaultRebuildMinKiBps * 1024)
	wantPos := minRate * busy.Seconds()
	got := st.RebuildProgress * float64(a.used[1])
	t.Logf("raid5 of 4, md default pacing, 4 s of QD4 random reads: %.2f MB rebuilt (speed_limit_min × 4 s = %.2f MB)", got/1e6, wantPos/1e6)
	if math.Abs(got-wantPos) > 2*float64(MiB) {
		t.Errorf("rebuilt %.0f bytes under load, want about %.0f (speed_limit_min)", got, wantPos)
	}
	st = a.Status(t0 + time.Hour)
	rest := (float64(a.used[1]) - got) / (DefaultRebuildMaxKiBps * 1024)
	want := t0 + busy + time.Duration(rest*float64(time.Second))
	if st.State != Optimal || !within(st.LastRebuildDone.Seconds(), want.Seconds(), 0.02) {
		t.Errorf("rebuild done at %v (%v), want about %v", st.LastRebuildDone, st.State, want)
	}
}

// With a fixed rate close to what the members can stream, a rebuild and
// foreground I/O slow each other down: the rebuild takes longer than
// capacity / rate, and foreground reads run slower than on a healthy
// array.
func TestRebuildCompetesWithForeground(t *testing.T) {
	drive := fixed.Config{Capacity: 256 * MiB, Read: 200 * time.Microsecond, Write: 200 * time.Microsecond, BytesPerSecond: 500e6}
	const rate = 450 // MB/s
	build := func() *Array { return mustNew(t, Config{Level: RAID5, RebuildRate: rate}, fixedMembers(t, 4, drive)) }
	t0 := time.Second

	h := build()
	healthy := loadFor(t, h, t0, t0+3*time.Second, 16, 2)

	idle := build()
	_ = idle.FailMember(t0, 0)
	_ = idle.ReplaceMember(t0, 0, fixedMembers(t, 1, drive)[0])
	idleTook := idle.Status(t0+time.Hour).LastRebuildDone - t0

	a := build()
	_ = a.FailMember(t0, 0)
	_ = a.ReplaceMember(t0, 0, fixedMembers(t, 1, drive)[0])
	during := loadFor(t, a, t0, t0+idleTook, 16, 2)
	loadFor(t, a, t0+idleTook, t0+10*idleTook, 16, 3)
	loadedTook := a.Status(t0+time.Hour).LastRebuildDone - t0
	t.Logf("raid5 of 4 at %d MB/s rebuild: idle rebuild %v (capacity/rate %v), under QD16 random reads %v; random 4K reads/s healthy %.0f, while rebuilding %.0f",
		rate, idleTook.Round(time.Millisecond), time.Duration(256*MiB*1000/rate)*time.Microsecond/1000, loadedTook.Round(time.Millisecond), healthy, during)
	if loadedTook < idleTook*11/10 {
		t.Errorf("rebuild under load took %v, idle %v: want at least 10%% longer", loadedTook, idleTook)
	}
	if during > 0.8*healthy {
		t.Errorf("foreground reads at %.0f/s while rebuilding, %.0f/s healthy: want a clear drop", during, healthy)
	}
}

// Two replacements in a RAID 6 are rebuilt one after the other; failing
// the member being rebuilt stops its rebuild and leaves the array
// degraded, and one more failure fails it.
func TestRebuildQueueAndRefail(t *testing.T) {
	a := mustNew(t, Config{Level: RAID6, RebuildRate: 100}, fixedMembers(t, 5, fastDrive))
	_ = a.FailMember(0, 1)
	_ = a.FailMember(0, 3)
	_ = a.ReplaceMember(0, 3, fixedMembers(t, 1, fastDrive)[0])
	_ = a.ReplaceMember(0, 1, fixedMembers(t, 1, fastDrive)[0])
	st := a.Status(time.Second)
	if st.State != Rebuilding || st.Rebuilding != 3 || len(st.Waiting) != 1 || st.Waiting[0] != 1 {
		t.Fatalf("status %+v, want member 3 rebuilding and 1 waiting", st)
	}
	if _, err := a.Submit(time.Second, models.Request{Op: models.Read, Length: 1 << 20}); err != nil {
		t.Fatal(err)
	}
	st = a.Status(time.Hour)
	want := 2 * float64(a.used[1]) / 100e6
	if st.State != Optimal || !within(st.LastRebuildDone.Seconds(), want, 0.01) {
		t.Errorf("two rebuilds done at %v (%v), want %.2fs", st.LastRebuildDone, st.State, want)
	}

	b := mustNew(t, Config{Level: RAID5, RebuildRate: 100}, fixedMembers(t, 4, fastDrive))
	_ = b.FailMember(0, 2)
	_ = b.ReplaceMember(0, 2, fixedMembers(t, 1, fastDrive)[0])
	_ = b.FailMember(time.Second, 2)
	st = b.Status(2 * time.Second)
	if st.State != Degraded || st.Rebuilding != -1 || len(st.Failed) != 1 {
		t.Errorf("after the replacement failed: %+v", st)
	}
	if _, err := b.Submit(2*time.Second, models.Request{Op: models.Write, Length: 4096}); err != nil {
		t.Error(err)
	}
	_ = b.FailMember(3*time.Second, 0)
	if _, err := b.Submit(3*time.Second, models.Request{Op: models.Read, Length: 4096}); err == nil {
		t.Error("raid5 with two failed members served a read")
	}
}
