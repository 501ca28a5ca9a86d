package raid

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/nasemu/nasemu/internal/golden"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/catalog"
	"github.com/nasemu/nasemu/models/fixed"
)

// TestGolden pins every completion time, error and counter (the array's
// and its members') over seeded traces (testdata/arrays.golden). Speed
// work on the array (fewer loops over members, cheaper address
// arithmetic) must not move a single nanosecond. Rewrite it (-rewrite)
// only for a deliberate change of the model's behaviour, and say so.
func TestGolden(t *testing.T) {
	golden.Check(t, "arrays", goldenTables(t, 20000))
}

// goldenArray is one array of the tables: a level over fixed or HDD
// members, optionally degraded (a member failed) or rebuilding (failed and
// replaced) before the trace starts.
type goldenArray struct {
	level   Level
	n       int
	hdd     bool
	chunk   int64
	degrade int // -1: healthy; else the member to fail
	rebuild bool
}

// name names the array in the tables: level, members, their kind, chunk
// and what was failed or replaced before the trace.
func (g goldenArray) name() string {
	kind := "fixed"
	if g.hdd {
		kind = "hdd"
	}
	s := fmt.Sprintf("%v-%dx%s-%dk", g.level, g.n, kind, g.chunk>>10)
	if g.degrade >= 0 {
		s += fmt.Sprintf("-fail%d", g.degrade)
		if g.rebuild {
			s += "-rebuild"
		}
	}
	return s
}

func goldenTables(t testing.TB, n int) string {
	runs := golden.NewTable(append([]string{"array"}, golden.Header...)...)
	state := golden.NewTable("array", "state", "rebuilding", "rebuild_progress", "rebuild_bytes")
	counters := golden.NewTable("array", "device", "counter", "value")
	drive, err := catalog.LookupDrive("wd-red-1tb")
	if err != nil {
		t.Fatal(err)
	}
	fast := fixed.Config{Capacity: 1 << 30, Units: 2, Read: 100 * time.Microsecond, Write: 200 * time.Microsecond, BytesPerSecond: 500e6}
	members := func(hdd bool, n int, seed uint64) []models.Device {
		if !hdd {
			return fixedMembers(t, n, fast)
		}
		ms := make([]models.Device, n)
		for i := range ms {
			if ms[i], err = drive.New(2<<30, seed+uint64(i)); err != nil {
				t.Fatal(err)
			}
		}
		return ms
	}
	arrays := []goldenArray{
		{RAID5, 4, false, 64 << 10, -1, false},
		{RAID5, 4, true, 64 << 10, -1, false},
		{RAID5, 5, true, 16 << 10, 2, false},
		{RAID5, 4, false, 64 << 10, 0, true},
		{RAID6, 6, false, 32 << 10, -1, false},
		{RAID6, 5, true, 64 << 10, 1, false},
		{RAID6, 6, false, 64 << 10, 4, true},
		{RAID1, 2, true, 0, -1, false},
		{RAID1, 3, false, 0, 1, false},
		{RAID10, 4, true, 64 << 10, -1, false},
		{RAID10, 4, false, 64 << 10, 3, true},
		{RAID0, 3, false, 128 << 10, -1, false},
	}
	for ai, g := range arrays {
		a := mustNew(t, Config{Level: g.level, Chunk: models.Bytes(g.chunk)}, members(g.hdd, g.n, uint64(10*ai+1)))
		if g.degrade >= 0 {
			if err := a.FailMember(time.Millisecond, g.degrade); err != nil {
				t.Fatal(err)
			}
			if g.rebuild {
				if err := a.ReplaceMember(2*time.Millisecond, g.degrade, members(g.hdd, 1, 99)[0]); err != nil {
					t.Fatal(err)
				}
			}
		}
		rng := rand.New(rand.NewPCG(uint64(ai), 7))
		capa := a.Capacity()
		slots := make([]time.Duration, 32)
		for i := range slots {
			slots[i] = 3 * time.Millisecond
		}
		seq, errs := int64(0), 0
		row := golden.NewSeries()
		for i := range n {
			j := rng.IntN(len(slots))
			at := slots[j]
			switch rng.IntN(10) {
			case 0: // a part booked ahead, as a layer above may
				at += time.Duration(rng.IntN(20_000_000))
			case 1: // a part submitted late, before earlier arrivals
				at = max(at-time.Duration(rng.IntN(3_000_000)), 0)
			}
			var r models.Request
			switch k := rng.IntN(20); {
			case k < 8: // small random
				r = models.Request{Op: models.Read, Offset: rng.Int64N(capa/4096) * 4096, Length: 4096 << rng.IntN(3)}
			case k < 14: // small random writes (read-modify-write)
				r = models.Request{Op: models.Write, Offset: rng.Int64N(capa/4096) * 4096, Length: 4096 << rng.IntN(3)}
			case k < 18: // sequential, large, crossing stripes
				r = models.Request{Op: models.Read, Offset: seq, Length: 64 << 10 << rng.IntN(4)}
				if r.End() > capa {
					r.Offset = 0
				}
				seq = r.End() % capa
				if rng.IntN(2) == 0 {
					r.Op = models.Write
				}
			case k < 19:
				r = models.Request{Op: models.Flush}
			default:
				r = models.Request{Op: models.Trim, Offset: rng.Int64N(capa/65536) * 65536, Length: 256 << 10}
			}
			if rng.IntN(300) == 0 {
				r.Offset = capa - 1024 // out of range: an error
			}
			done, err := a.Submit(at, r)
			row.Done(i, at, done, err)
			if err != nil {
				errs++
			}
			slots[j] = max(slots[j], done)
		}
		// A trace of errors would pin nothing: only the rare out-of-range
		// requests may fail.
		if errs > n/100 {
			t.Errorf("array %d (%v): %d of %d requests failed", ai, g.level, errs, n)
		}
		st := a.Status(slots[0])
		runs.Row(append([]string{g.name()}, row.Cells()...)...)
		state.Row(g.name(), st.State.String(), strconv.Itoa(st.Rebuilding),
			strconv.FormatFloat(st.RebuildProgress, 'f', -1, 64), strconv.FormatInt(st.RebuildBytes, 10))
		golden.StackCounters(counters, g.name(), a)
	}
	return "# raid: seeded traces over each array (golden_test.go); latencies in exact µs\n" +
		runs.String() + "\n" + state.String() + "\n" + counters.String()
}
