package emu_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/models/fixed"
)

// hostStore is a store whose every read and write takes the host the
// given time, on the test's clock: a backing store that is slow (or fast)
// next to the model.
type hostStore struct {
	*emu.MemStore
	clock *manualClock
	took  time.Duration
}

func (s hostStore) ReadAt(p []byte, off int64) (int, error) {
	s.clock.Advance(s.took)
	return s.MemStore.ReadAt(p, off)
}

func (s hostStore) WriteAt(p []byte, off int64) (int, error) {
	s.clock.Advance(s.took)
	return s.MemStore.WriteAt(p, off)
}

// A volume whose backing store takes longer than the model's service time
// answers late, counts it and says so in its log; one whose store keeps up
// says nothing.
func TestLateAnswers(t *testing.T) {
	const service = 100 * time.Microsecond
	for _, tc := range []struct {
		name string
		took time.Duration // the host's time per request
		late bool
	}{
		{"slow backing", 3 * time.Millisecond, true},
		{"fast backing", 10 * time.Microsecond, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &manualClock{}
			m := newFixed(t, fixed.Config{Capacity: 1 << 20, Read: service, Write: service})
			var log bytes.Buffer
			v, err := emu.NewVolume(m, hostStore{emu.NewMemStore(1 << 20), clock, tc.took},
				emu.Options{Clock: clock, Logger: slog.New(slog.NewTextHandler(&log, nil))})
			if err != nil {
				t.Fatal(err)
			}
			p := make([]byte, 4096)
			const n = 20
			for i := range n {
				if _, err := v.ReadAt(p, 0); err != nil {
					t.Fatal(err)
				}
				if _, err := v.WriteAt(p, int64(i)*4096); err != nil {
					t.Fatal(err)
				}
			}
			v.LogLate()
			l := v.Late()
			t.Logf("late %d, by %v in all, max %v; log:\n%s", l.Count, l.Total, l.Max, log.String())
			said := strings.Contains(log.String(), "answers later than the model")
			if !tc.late {
				if l.Count != 0 || l.Total != 0 || said {
					t.Errorf("a store that keeps up: %d late answers (%v), logged %v", l.Count, l.Total, said)
				}
				return
			}
			if want := tc.took - service; l.Count != 2*n || l.Total != 2*n*want || l.Max != want {
				t.Errorf("late %d by %v (max %v), want %d by %v (max %v)", l.Count, l.Total, l.Max, 2*n, 2*n*want, want)
			}
			// One line when answers start being late (then at most one per
			// LateLogInterval of wall time) and one in all at the end.
			if c := strings.Count(log.String(), "answers later than the model"); c != 2 {
				t.Errorf("%d log lines about late answers, want 2", c)
			}
			if !strings.Contains(log.String(), "late=40 of=40") {
				t.Errorf("the final line does not count 40 late answers of 40")
			}
		})
	}
}
