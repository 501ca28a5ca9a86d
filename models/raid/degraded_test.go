package raid

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fixed"
)

// Redundant arrays keep serving with as many failed members as they
// tolerate; failed members get no I/O; degraded parity reads cost a read
// on every surviving member of the row, which at high queue depth halves
// a RAID 5's random read rate (1.5 member reads per read on N-1 members:
// N × drive / 2).
func TestDegradedKeepsServing(t *testing.T) {
	const M = int64(1) << 20
	for _, tc := range []struct {
		level   Level
		caps    []int64
		fail    []int
		healthy float64 // random 4 KiB reads/s at high QD, analytic
		want    float64 // degraded, analytic
	}{
		{RAID1, []int64{256 * M, 256 * M}, []int{0}, 2000, 1000},
		{RAID1, []int64{256 * M, 256 * M, 256 * M}, []int{2, 0}, 3000, 1000},
		{RAID5, []int64{256 * M, 256 * M, 256 * M, 256 * M}, []int{2}, 4000, 2000},
		{RAID5, []int64{256 * M, 256 * M, 256 * M, 256 * M, 256 * M}, []int{0}, 5000, 2500},
		// Two of five lost: 2/5 of the reads need 3 member reads: 1.8 per read on 3 members.
		{RAID6, []int64{256 * M, 256 * M, 256 * M, 256 * M, 256 * M}, []int{1, 3}, 5000, 3000 / 1.8},
		{RAID10, []int64{256 * M, 256 * M, 256 * M, 256 * M}, []int{0, 3}, 4000, 2000},
		{SHR, []int64{256 * M, 256 * M, 256 * M, 256 * M}, []int{3}, 4000, 2000},
		{SHR, []int64{128 * M, 256 * M, 256 * M}, []int{1}, 0, 0},
		{SHR, []int64{128 * M, 256 * M, 256 * M}, []int{0}, 0, 0},
	} {
		mib := make([]int64, len(tc.caps))
		for i, c := range tc.caps {
			mib[i] = c / M
		}
		name := fmt.Sprintf("%s%vMiB-fail%v", tc.level, mib, tc.fail)
		ms := make([]models.Device, len(tc.caps))
		qs := make([]*queueDev, len(tc.caps))
		for i, c := range tc.caps {
			qs[i] = &queueDev{capacity: c, read: time.Millisecond, write: time.Millisecond}
			ms[i] = qs[i]
		}
		a := mustNew(t, Config{Level: tc.level}, ms)
		const ops = 8000
		qd := 16 * len(ms)
		healthy, _ := closedLoop(t, a, 0, qd, ops, randomOps(3, models.Read, 4*KiB, a.Capacity()))
		now := 10 * time.Second
		for _, f := range tc.fail {
			if err := a.FailMember(now, f); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
		}
		if st := a.Status(now); st.State != Degraded || len(st.Failed) != len(tc.fail) {
			t.Errorf("%s: status %+v, want degraded with %d failed", name, st, len(tc.fail))
		}
		before := make([]int, len(qs))
		for i, q := range qs {
			before[i] = q.ios
		}
		// QD1 latency of a degraded read is still one member read: the
		// reconstruction reads run in parallel.
		if done, err := a.Submit(now, models.Request{Op: models.Read, Length: 4 * KiB}); err != nil || done-now != time.Millisecond {
			t.Errorf("%s: degraded QD1 read took %v, %v; want 1ms", name, done-now, err)
		}
		degraded, _ := closedLoop(t, a, now+time.Second, qd, ops, randomOps(4, models.Read, 4*KiB, a.Capacity()))
		// Writes (RMW, RCW, full rows) and flushes keep working too.
		_, _ = closedLoop(t, a, now+100*time.Second, qd, 2000, randomOps(5, models.Write, 4*KiB, a.Capacity()))
		_, _ = closedLoop(t, a, now+200*time.Second, 4, 200, seqOps(models.Write, 1*M, a.Capacity()))
		rng := rand.New(rand.NewPCG(9, 9))
		for i := 0; i < 500; i++ {
			off := rng.Int64N(a.Capacity() / 512)
			r := models.Request{Op: models.Op(rng.IntN(4)), Offset: off * 512, Length: 512 * (1 + rng.Int64N(min(a.Capacity()/512-off, 2048)))}
			at := now + 300*time.Second + time.Duration(rng.IntN(1000))*time.Millisecond
			if done, err := a.Submit(at, r); err != nil || done < at {
				t.Fatalf("%s: degraded %v at %v: done %v, %v", name, r, at, done, err)
			}
		}
		for _, f := range tc.fail {
			if qs[f].ios != before[f] {
				t.Errorf("%s: failed member %d got %d I/Os", name, f, qs[f].ios-before[f])
			}
		}
		t.Logf("%-28s random 4K reads/s at QD%d: healthy %5.0f, degraded %5.0f (%.0f degraded reads, %.0f RMW, %.0f RCW)",
			name, qd, healthy, degraded, counter(a, "degraded_reads"), counter(a, "read_modify_writes"), counter(a, "reconstruct_writes"))
		if tc.want != 0 && (!within(healthy, tc.healthy, 0.1) || !within(degraded, tc.want, 0.1)) {
			t.Errorf("%s: %.0f reads/s healthy, %.0f degraded; want %.0f and %.0f ±10%%", name, healthy, degraded, tc.healthy, tc.want)
		}
		if degraded >= healthy {
			t.Errorf("%s: degraded reads no slower than healthy", name)
		}
	}
}

// An array that has lost more members than it tolerates fails every
// request with an error that wraps models.ErrFailed and names the array
// and the lost members.
func TestTooManyFailures(t *testing.T) {
	const G = GiB
	for _, tc := range []struct {
		level Level
		n     int
		fail  []int
		want  string
	}{
		{Single, 1, []int{0}, "members [0]"},
		{RAID0, 4, []int{1}, "members [1]"},
		{JBOD, 3, []int{2}, "members [2]"},
		{RAID1, 2, []int{0, 1}, "members [0 1]"},
		{RAID5, 4, []int{3, 1}, "members [1 3]"},
		{RAID6, 5, []int{0, 2, 4}, "members [0 2 4]"},
		{RAID10, 4, []int{2, 3}, "members [2 3]"},
		{SHR, 3, []int{0, 1}, "members [0 1]"},
	} {
		cfg := Config{Level: tc.level, Name: "vol-" + tc.level.String()}
		a := mustNew(t, cfg, fixedMembers(t, tc.n, fixed.Config{Capacity: G}))
		for i, f := range tc.fail {
			if _, err := a.Submit(0, models.Request{Op: models.Read, Length: 4096}); err != nil {
				t.Fatalf("%s: read before failure %d: %v", tc.level, i, err)
			}
			if err := a.FailMember(time.Duration(i), f); err != nil {
				t.Fatal(err)
			}
		}
		for _, op := range []models.Op{models.Read, models.Write, models.Flush, models.Trim} {
			_, err := a.Submit(time.Second, models.Request{Op: op, Offset: 1 << 20, Length: 4096})
			if !errors.Is(err, models.ErrFailed) || !strings.Contains(err.Error(), cfg.Name) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s %v after failing %v: error %v, want ErrFailed naming %q and %s", tc.level, op, tc.fail, err, cfg.Name, tc.want)
			}
		}
		if st := a.Status(time.Second); st.State != Failed {
			t.Errorf("%s: state %v, want failed", tc.level, st.State)
		}
		if err := a.ReplaceMember(time.Second, tc.fail[0], fixedMembers(t, 1, fixed.Config{Capacity: G})[0]); !errors.Is(err, models.ErrFailed) {
			t.Errorf("%s: replacing a member of a failed array: %v", tc.level, err)
		}
	}
	a := mustNew(t, Config{Level: RAID5}, fixedMembers(t, 3, fixed.Config{Capacity: G}))
	if err := a.FailMember(0, 3); !errors.Is(err, models.ErrInvalid) {
		t.Errorf("failing member 3 of 3: %v", err)
	}
	if err := a.ReplaceMember(0, 1, fixedMembers(t, 1, fixed.Config{Capacity: G})[0]); !errors.Is(err, models.ErrInvalid) {
		t.Errorf("replacing a healthy member: %v", err)
	}
	_ = a.FailMember(0, 1)
	if err := a.FailMember(0, 1); !errors.Is(err, models.ErrInvalid) {
		t.Errorf("failing a failed member: %v", err)
	}
	if err := a.ReplaceMember(0, 1, fixedMembers(t, 1, fixed.Config{Capacity: G / 2})[0]); !errors.Is(err, models.ErrConfig) {
		t.Errorf("replacing with a smaller drive: %v", err)
	}
}

// Degraded partial-stripe writes skip the lost member: with the row's
// parity lost the data is just written; with the written chunk lost only
// the parity is rewritten, from the rest of the row (a reconstruct-write);
// with an untouched chunk lost the write is a read-modify-write.
func TestDegradedWritePlans(t *testing.T) {
	for _, tc := range []struct {
		level         Level
		n             int
		fail          []int
		reads, writes int
	}{
		// Row 0 of a RAID 5 of 4: data chunks 0, 1, 2 on members 0, 1, 2,
		// parity on member 3. The write covers part of chunk 0.
		{RAID5, 4, nil, 2, 2},      // healthy: RCW (a tie) reads members 1 and 2
		{RAID5, 4, []int{3}, 0, 1}, // parity lost: write the data alone
		{RAID5, 4, []int{0}, 2, 1}, // written chunk lost: RCW, write the parity only
		{RAID5, 4, []int{1}, 2, 2}, // untouched chunk lost: RMW (member 0 and P)
		// Row 0 of a RAID 6 of 5: P on member 4, Q on 0, data chunks 0, 1, 2
		// on members 1, 2, 3.
		{RAID6, 5, nil, 2, 3},         // healthy: RCW reads members 2 and 3
		{RAID6, 5, []int{2}, 3, 3},    // untouched chunk lost: RMW reads member 1, P, Q
		{RAID6, 5, []int{1, 4}, 2, 1}, // written chunk and P lost: RCW, write Q only
		{RAID6, 5, []int{4, 0}, 0, 1}, // both parities lost: write the data alone
		// Written and untouched chunks lost: neither way works; read member
		// 3, P and Q, solve for the lost data, write P and Q.
		{RAID6, 5, []int{1, 2}, 3, 2},
	} {
		fs := make([]*fakeDev, tc.n)
		ms := make([]models.Device, tc.n)
		for i := range fs {
			fs[i] = &fakeDev{capacity: GiB}
			ms[i] = fs[i]
		}
		a := mustNew(t, Config{Level: tc.level}, ms)
		for _, f := range tc.fail {
			_ = a.FailMember(0, f)
		}
		if _, err := a.Submit(0, models.Request{Op: models.Write, Offset: 0, Length: 4 * KiB}); err != nil {
			t.Fatal(err)
		}
		reads, writes := 0, 0
		for i, f := range fs {
			for _, io := range f.log {
				if slices.Contains(tc.fail, i) {
					t.Errorf("%s fail %v: lost member %d got %v", tc.level, tc.fail, i, io.op)
				}
				if io.op == models.Read {
					reads++
				} else {
					writes++
				}
			}
		}
		if reads != tc.reads || writes != tc.writes {
			t.Errorf("%s of %d, members %v lost: a 4 KiB write to chunk 0 took %d reads + %d writes, want %d + %d",
				tc.level, tc.n, tc.fail, reads, writes, tc.reads, tc.writes)
		}
	}
}
