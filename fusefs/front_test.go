package fusefs

import (
	"os"
	"sync"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fixed"
)

// Behind smbd (FrontSMB) a file created, written, inspected and closed
// costs the model one Create and one Close, and the Close is charged
// before close(2) returns; a direct mount charges the inspections as
// stats too.
func TestFrontSMBChargesEachRequestOnce(t *testing.T) {
	for _, tc := range []struct {
		front     Front
		wantStats bool
	}{{FrontSMB, false}, {FrontDirect, true}} {
		s := mountShare(t, freeModel(t, 64<<20), nil, "", Options{Front: tc.front, Compensation: -1})
		f, err := os.Create(s.path("f"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(make([]byte, 4096)); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Stat(); err != nil {
			t.Fatal(err)
		}
		if err := f.Chmod(0o600); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		creates, closes, stats := volumeCount(s.fs, models.Create), volumeCount(s.fs, models.Close), volumeCount(s.fs, models.Stat)
		t.Logf("front %d: creates %d, closes %d, stats %d", tc.front, creates, closes, stats)
		if creates != 1 {
			t.Errorf("front %d: %d creates charged, want 1", tc.front, creates)
		}
		if tc.front == FrontSMB && closes != 1 {
			t.Errorf("front %d: %d closes charged when close(2) returned, want 1", tc.front, closes)
		}
		if (stats > 0) != tc.wantStats {
			t.Errorf("front %d: %d stats charged", tc.front, stats)
		}
	}
}

// Behind smbd the writes of one file reach the model in parallel: eight
// 20 ms writes on an eight-unit device take one service time, not eight
// (the kernel serialises a file's writes through its page cache).
func TestFrontSMBWritesInParallel(t *testing.T) {
	const service = 20 * time.Millisecond
	d, err := fixed.New(fixed.Config{Capacity: 64 << 20, Units: 8, Write: service})
	if err != nil {
		t.Fatal(err)
	}
	s := mountShare(t, d, nil, "", Options{Front: FrontSMB, Compensation: -1})
	if err := os.WriteFile(s.path("f"), make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(s.path("f"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var wg sync.WaitGroup
	start := time.Now()
	for i := range 8 {
		wg.Go(func() {
			if _, err := f.WriteAt(make([]byte, 4096), int64(i)*64<<10); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	t.Logf("8 parallel writes of %v each: %v", service, took)
	if took > 4*service {
		t.Errorf("8 parallel writes took %v: serialised (one takes %v)", took, service)
	}
}
