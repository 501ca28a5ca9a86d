package serve

import (
	"errors"
	"testing"
	"time"

	"github.com/nasemu/nasemu"
	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/fusefs"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/devicetest"
	"github.com/nasemu/nasemu/models/fixed"
)

// build returns the model of a built-in setup.
func build(t *testing.T, name string) models.Device {
	t.Helper()
	s, err := nasemu.LoadSetup(name)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.Build(1)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The share and the LUN split the array without overlap, LUN requests
// land at the LUN's place and go through the iSCSI front (lun_ counters),
// and neither reaches beyond its part.
func TestNASArray(t *testing.T) {
	front := build(t, "ds1817-raid5-ssd-smb-1g")
	capacity := front.Capacity()
	a, err := NewNASArray(front, 64<<20+12345)
	if err != nil {
		t.Fatal(err)
	}
	if a.LUNSize() != 64<<20 || a.LUNBase()%LUNAlign != 0 || a.LUNBase()+a.LUNSize() > capacity || a.Capacity() != a.LUNBase() {
		t.Errorf("share [0, %d), LUN %d bytes at %d, array %d", a.Capacity(), a.LUNSize(), a.LUNBase(), capacity)
	}
	if _, err := a.SubmitLUN(0, models.Request{Op: models.Write, Offset: 0, Length: 4096}); err != nil {
		t.Fatal(err)
	}
	if n, _ := models.Sum(a, "lun_iscsi_commands"); n != 1 {
		t.Errorf("lun_iscsi_commands %v after one LUN write, want 1", n)
	}
	if n, _ := models.Sum(a, "smb_requests"); n != 0 {
		t.Errorf("a LUN write made %v SMB requests", n)
	}
	if _, err := a.SubmitLUN(0, models.Request{Op: models.Read, Offset: a.LUNSize() - 512, Length: 4096}); !errors.Is(err, models.ErrOutOfRange) {
		t.Errorf("a LUN read past its end: %v", err)
	}
	if _, err := a.Submit(0, models.Request{Op: models.Read, Offset: a.LUNBase(), Length: 4096}); !errors.Is(err, models.ErrOutOfRange) {
		t.Errorf("a share read in the LUN's region: %v", err)
	}
	if _, err := NewNASArray(front, capacity); !errors.Is(err, models.ErrConfig) {
		t.Errorf("a LUN as large as the array: %v", err)
	}
	drive, err := fixed.New(fixed.Config{Capacity: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewNASArray(drive, 1<<20); !errors.Is(err, models.ErrConfig) {
		t.Errorf("a model without a protocol front: %v", err)
	}
}

// CompClock answers early by the wall time set for the client's wait, in
// model time at its scale.
func TestCompClock(t *testing.T) {
	c := NewCompClock(emu.NewWallClock(4, -1))
	c.SetEarly(2 * time.Millisecond)
	if got := c.early(c.Now() + time.Millisecond); got != 500*time.Microsecond {
		t.Errorf("2 ms early in wall time at time scale 4 is %v of model time, want 500µs", got)
	}
	start := time.Now()
	c.SleepUntil(c.Now() + 500*time.Microsecond) // due now, less the compensation
	if d := time.Since(start); d > 50*time.Millisecond {
		t.Errorf("a wait of exactly the compensation took %v", d)
	}
	// A table: 100 µs early for a client that does not wait, 300 µs for
	// one that waits 4 ms of wall time (1 ms of model time).
	c.SetEarlyTable(&emu.EarlyTable{Wait: []time.Duration{0, 4 * time.Millisecond}, Early: []time.Duration{100 * time.Microsecond, 300 * time.Microsecond}})
	if got := c.early(c.Now() + 10*time.Millisecond); got != 75*time.Microsecond {
		t.Errorf("10 ms of model time (40 ms of wall time) at time scale 4: %v early, want 300 µs / 4", got)
	}
}

// The compensator caps each figure and keeps none below zero.
func TestSMBCompensatorCaps(t *testing.T) {
	c := &SMBCompensator{clock: NewCompClock(emu.NewWallClock(1, -1))}
	c.set(&emu.EarlyTable{Wait: []time.Duration{0, time.Millisecond}, Early: []time.Duration{-time.Microsecond, time.Second}})
	if c.RoundTrip() != 0 {
		t.Errorf("a round trip shorter than FUSE's own part compensates %v, want 0", c.RoundTrip())
	}
	if got := c.last.Load().At(time.Hour); got != MaxSMBCompensation {
		t.Errorf("a 1 s round trip compensates %v, want the cap %v", got, MaxSMBCompensation)
	}
}

// The transfer compensation is the larger requests' extra time per MiB,
// never below zero and at most the cap.
func TestTransferPerMiB(t *testing.T) {
	ms := func(f ...float64) []time.Duration {
		var d []time.Duration
		for _, x := range f {
			d = append(d, time.Duration(x*float64(time.Millisecond)))
		}
		return d
	}
	small := ms(0.2, 0.2, 0.2, 0.2)
	scaled := 4 * float64(time.Millisecond) * (1 << 20) / (1<<20 - 4096) // 4 ms more over 1 MiB less 4 KiB
	for _, tc := range []struct {
		big  []time.Duration
		want time.Duration
	}{
		{ms(4.2, 4.2, 4.2, 4.2), time.Duration(scaled)},
		{ms(0.1, 0.1, 0.1, 0.1), 0},
		{ms(90, 90, 90, 90), MaxTransferEarly},
	} {
		if got := transferPerMiB(small, tc.big); got != tc.want {
			t.Errorf("small 0.2 ms, big %v: %v per MiB, want %v", tc.big[0], got, tc.want)
		}
	}
}

// The file operation compensation is what the operation takes beyond a
// read's round trip, never below zero and at most the cap.
func TestFileOpEarly(t *testing.T) {
	us := func(x time.Duration) []time.Duration { return []time.Duration{x, x, x, x} }
	small := us(200 * time.Microsecond)
	for _, tc := range []struct{ ops, want time.Duration }{
		{900 * time.Microsecond, 700 * time.Microsecond},
		{100 * time.Microsecond, 0},
		{time.Second, MaxFileOpEarly},
	} {
		if got := fileOpEarly(small, us(tc.ops)); got != tc.want {
			t.Errorf("read 200 µs, operation %v: %v early, want %v", tc.ops, got, tc.want)
		}
	}
}

// Without a share, fail and replace act on the volume's array, status
// reports nothing of a share, and bad requests are refused.
func TestControlWithoutShare(t *testing.T) {
	s, err := nasemu.LoadSetup("ds1817-raid5-ssd-iscsi-1g")
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.Build(1)
	if err != nil {
		t.Fatal(err)
	}
	vol, err := emu.NewVolume(m, emu.NewMemStore(m.Capacity()), emu.Options{Clock: &emu.VirtualClock{}})
	if err != nil {
		t.Fatal(err)
	}
	c := &Control{Volume: vol, Replacement: ReplacementDrives(s, 1)}
	if r := c.Handle(fusefs.ControlRequest{Cmd: "fail", Member: 1}); !r.OK || r.Status != nil {
		t.Errorf("fail 1: %+v", r)
	}
	if st := vol.Arrays(); len(st) != 1 || st[0].State != "degraded" {
		t.Errorf("after fail 1: %+v", st)
	}
	if r := c.Handle(fusefs.ControlRequest{Cmd: "replace", Member: 1}); !r.OK {
		t.Errorf("replace 1: %+v", r)
	}
	if st := vol.Arrays(); st[0].Rebuilding != 1 {
		t.Errorf("after replace 1: %+v", st)
	}
	for _, req := range []fusefs.ControlRequest{{Cmd: "fail", Member: 7}, {Cmd: "reboot"}} {
		if r := c.Handle(req); r.OK || r.Error == "" {
			t.Errorf("%+v: %+v, want an error", req, r)
		}
	}
	if r := c.Handle(fusefs.ControlRequest{Cmd: "power-loss"}); !r.OK || r.LostBytes != 0 {
		t.Errorf("power-loss of nothing served: %+v", r)
	}
}

// TestNASArrayConformance runs the device kit on the share's side of a
// NAS array that also serves a LUN (drives scaled down to 1 GiB).
func TestNASArrayConformance(t *testing.T) {
	s, err := nasemu.LoadSetup("ds1817-raid5-hdd-smb-1g")
	if err != nil {
		t.Fatal(err)
	}
	s = s.WithDriveCapacity(1 << 30)
	devicetest.Run(t, devicetest.Config{
		Parallel: true,
		FileOps:  true,
		Requests: 500,
		New: devicetest.Built(func(seed uint64) (*NASArray, error) {
			front, err := s.Build(seed)
			if err != nil {
				return nil, err
			}
			return NewNASArray(front, 256<<20)
		}),
	})
}

// A fault injected through the control plane of a NAS without a share
// reaches the LUN's requests (as models.ErrFailed), not the array's other
// users; without a LUN nor a share there is nothing to inject into. With
// a state directory, fail and replace are saved there.
func TestControlFaultsAndState(t *testing.T) {
	a, err := NewNASArray(build(t, "ds1817-raid5-ssd-smb-1g"), 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	clock := &emu.VirtualClock{}
	vol, err := emu.NewVolume(a, emu.NewMemStore(a.Capacity()), emu.Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	lunVol, err := NewLUNVolume(vol, a, emu.NewMemStore(a.LUNSize()), emu.Options{Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	s, err := nasemu.LoadSetup("ds1817-raid5-ssd-smb-1g")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c := &Control{Volume: vol, LUNVolume: lunVol, Replacement: ReplacementDrives(s, 1), StateDir: dir}
	r := c.Handle(fusefs.ControlRequest{Cmd: "fault", Fault: "read range=0:1MiB count=1 fail"})
	if !r.OK || len(r.Faults) != 1 || r.Faults[0].Front != "lun" || r.Faults[0].Rule != "read range=0:1048576 count=1 fail" {
		t.Fatalf("fault: %+v", r)
	}
	buf := make([]byte, 4096)
	if _, err := vol.ReadAt(buf, 0); err != nil {
		t.Errorf("a share read with a fault armed on the LUN: %v", err)
	}
	if _, err := lunVol.ReadAt(buf, 0); !errors.Is(err, models.ErrFailed) {
		t.Errorf("a LUN read in the faulty range: %v, want models.ErrFailed", err)
	}
	if _, err := lunVol.ReadAt(buf, 0); err != nil {
		t.Errorf("the LUN read after count=1: %v", err)
	}
	if r := c.Handle(fusefs.ControlRequest{Cmd: "fault", Fault: "clear"}); !r.OK || len(r.Faults) != 0 {
		t.Errorf("fault clear: %+v", r)
	}
	if r := c.Handle(fusefs.ControlRequest{Cmd: "fault", Fault: "read sometimes"}); r.OK || r.Error == "" {
		t.Errorf("a bad rule: %+v", r)
	}
	if r := (&Control{Volume: vol}).Handle(fusefs.ControlRequest{Cmd: "fault", Fault: "list"}); r.OK || r.Error == "" {
		t.Errorf("fault with nothing served: %+v", r)
	}

	if r := c.Handle(fusefs.ControlRequest{Cmd: "fail", Member: 2}); !r.OK {
		t.Fatalf("fail 2: %+v", r)
	}
	again, err := NewNASArray(build(t, "ds1817-raid5-ssd-smb-1g"), 64<<20)
	if err != nil {
		t.Fatal(err)
	}
	restored, err := emu.NewVolume(again, emu.NewMemStore(again.Capacity()), emu.Options{Clock: &emu.VirtualClock{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := restored.LoadArrays(dir, nil); err != nil {
		t.Fatal(err)
	}
	if st := restored.Arrays(); len(st) != 1 || st[0].State != "degraded" || len(st[0].Failed) != 1 || st[0].Failed[0] != 2 {
		t.Errorf("arrays restored from the state directory: %+v", st)
	}
}
