package fusefs

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fixed"
)

// Behind smbd, a read or a write answers earlier by the host's time to
// move its bytes (SetTransferEarly), per MiB and per direction, and never
// before it arrived.
func TestTransferEarly(t *testing.T) {
	model, err := fixed.New(fixed.Config{Capacity: 64 << 20, Units: 8, Read: 40 * time.Millisecond, Write: 40 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	clock := &emu.VirtualClock{}
	s := mountShare(t, model, clock, "", Options{Front: FrontSMB, Compensation: -1})
	s.fs.SetTransferEarly(8*time.Millisecond, 30*time.Millisecond)
	f, err := os.OpenFile(s.path("f"), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, tc := range []struct {
		op   models.Op
		n    int
		want time.Duration
	}{
		{models.Write, 1 << 20, 10 * time.Millisecond}, // 40 less 30
		{models.Write, 512 << 10, 25 * time.Millisecond},
		{models.Read, 1 << 20, 32 * time.Millisecond},
		{models.Read, 4 << 10, 40*time.Millisecond - 31250*time.Nanosecond},
	} {
		buf := make([]byte, tc.n)
		// A request that follows the model's last completion closely is
		// charged at it (emu.Options.ClosedLoop): these come later.
		clock.SleepUntil(clock.Now() + time.Second)
		start := clock.Now()
		if tc.op == models.Write {
			_, err = f.WriteAt(buf, 0)
		} else {
			_, err = f.ReadAt(buf, 0)
		}
		if err != nil {
			t.Fatal(err)
		}
		// The clock stands at the latest answer; the model's own
		// completion is later.
		if got := clock.Now() - start; got != tc.want {
			t.Errorf("%v of %d bytes answered after %v, want %v", tc.op, tc.n, got, tc.want)
		}
	}
	s.fs.SetTransferEarly(time.Second, time.Second)
	clock.SleepUntil(clock.Now() + time.Second)
	start := clock.Now()
	if _, err := f.WriteAt(make([]byte, 1<<20), 0); err != nil {
		t.Fatal(err)
	}
	if got := clock.Now(); got != start {
		t.Errorf("a write a second early answered %v after it arrived, want at once", got-start)
	}
}

// Behind smbd, opens, creates and closes answer earlier by what the host
// spends on them outside the model (SetFileOpEarly), never before they
// arrived.
func TestFileOpEarly(t *testing.T) {
	clock := &emu.VirtualClock{}
	s := mountShare(t, fileOpCost{freeModel(t, 64<<20), 10 * time.Millisecond}, clock, "", Options{Front: FrontSMB, Compensation: -1})
	s.fs.SetFileOpEarly(3*time.Millisecond, 20*time.Millisecond)
	step := func(what string, want time.Duration, do func() error) {
		t.Helper()
		clock.SleepUntil(clock.Now() + time.Second) // past the closed loop (see TestTransferEarly)
		start := clock.Now()
		if err := do(); err != nil {
			t.Fatal(err)
		}
		if got := clock.Now() - start; got != want {
			t.Errorf("%s answered after %v, want %v", what, got, want)
		}
	}
	var f *os.File
	step("a create", 7*time.Millisecond, func() (err error) {
		f, err = os.OpenFile(s.path("f"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		return err
	})
	step("a close 20 ms early", 0, f.Close)
	step("an open", 7*time.Millisecond, func() (err error) {
		f, err = os.Open(s.path("f"))
		return err
	})
	f.Close()
}

// A probe file's writes are timed and discarded: the file stays a hole,
// so that its reads charge nothing either, and the model sees neither;
// nor does it see the probe file's create, open, close and removal.
func TestProbeWritesDiscarded(t *testing.T) {
	s := mountShare(t, freeModel(t, 64<<20), nil, "", Options{Front: FrontSMB, Compensation: -1})
	name := s.fs.ProbeName()
	ops := func() int64 {
		var n int64
		for _, op := range []models.Op{models.Create, models.Open, models.Close, models.Remove} {
			n += volumeCount(s.fs, op)
		}
		return n
	}
	if n := ops(); n != 0 {
		t.Fatalf("%d file operations charged before the probe", n)
	}
	f, err := os.Create(s.path(name))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if f, err = os.OpenFile(s.path(name), os.O_RDWR, 0); err != nil {
		t.Fatal(err)
	}
	writes, reads := volumeCount(s.fs, models.Write), volumeCount(s.fs, models.Read)
	if n, err := f.WriteAt(bytes.Repeat([]byte{7}, 1<<20), 0); err != nil || n != 1<<20 {
		t.Fatalf("probe write: %d bytes, %v", n, err)
	}
	got := make([]byte, 1<<20)
	if _, err := f.ReadAt(got, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, make([]byte, 1<<20)) {
		t.Error("the probe file kept a probe's bytes")
	}
	if w, r := volumeCount(s.fs, models.Write)-writes, volumeCount(s.fs, models.Read)-reads; w != 0 || r != 0 {
		t.Errorf("the model was charged %d writes and %d reads of the probe file, want none", w, r)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(s.backing+"/"+name, &st); err != nil || st.Blocks != 0 {
		t.Errorf("the probe file's backing file: %d blocks, %v; want a hole", st.Blocks, err)
	}
	f.Close()
	if err := os.Remove(s.path(name)); err != nil {
		t.Fatal(err)
	}
	if n := ops(); n != 0 {
		t.Errorf("the probe file's life charged %d file operations, want none", n)
	}
	// A client's file that only shares the prefix (even with this
	// process's id) is the client's.
	other := ProbePrefix + strconv.Itoa(os.Getpid())
	if err := os.WriteFile(s.path(other), []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(s.path(other)); err != nil || string(b) != "kept" {
		t.Errorf("%s read back %q, %v; want what was written", other, b, err)
	}
	if n := ops(); n == 0 {
		t.Errorf("%s charged no file operations", other)
	}
}

// fileOpCost is a device whose file operations take d each.
type fileOpCost struct {
	models.Device
	d time.Duration
}

func (c fileOpCost) Submit(at time.Duration, r models.Request) (time.Duration, error) {
	if r.Op.IsFileOp() {
		return at + c.d, nil
	}
	return c.Device.Submit(at, r)
}
