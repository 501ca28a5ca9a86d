package bench

import (
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fixed"
)

// validData is a device whose client filesystem can (or cannot) set a
// file's valid data length; it counts the bytes written to it.
type validData struct {
	models.Device
	can     bool
	written int64
}

func (v *validData) SetsValidData() bool { return v.can }

func (v *validData) Submit(at time.Duration, r models.Request) (time.Duration, error) {
	if r.Op == models.Write {
		v.written += r.Length
	}
	return v.Device.Submit(at, r)
}

// diskspd creates its test file with SetFileValidData where the target's
// filesystem allows it (nothing is written before the reads), and writes
// it where it does not; a fio-style job always writes its layout.
func TestLayoutValidData(t *testing.T) {
	const size = 64 << 20
	for _, c := range []struct {
		can, valid bool
		want       int64
	}{
		{can: true, valid: true, want: 0},
		{can: false, valid: true, want: size},
		{can: true, valid: false, want: size},
	} {
		d, err := fixed.New(fixed.Config{Capacity: 1 << 30, Units: 4, Read: 100 * time.Microsecond, Write: 100 * time.Microsecond})
		if err != nil {
			t.Fatal(err)
		}
		dev := &validData{Device: d, can: c.can}
		j := Job{Name: "r", RW: RandRead, BS: 4096, IODepth: 2, Filename: "f.dat", Size: size, ValidData: c.valid,
			TimeBased: true, Runtime: 10 * time.Millisecond}
		if _, err := Run(NewSim("sim:x", SimSetup{Device: dev}), []Job{j}, Options{Seed: 1}); err != nil {
			t.Fatal(err)
		}
		if dev.written != c.want {
			t.Errorf("device sets valid data %v, job valid data %v: %d bytes written before the reads, want %d", c.can, c.valid, dev.written, c.want)
		}
	}
}
