// Package fixed is the simplest honest model: a device with a fixed service
// time per request (plus an optional per-byte cost) and a number of
// identical units that serve requests in parallel, first come first served.
//
// It is the reference against which queueing behaviour is checked (with k
// requests outstanding, IOPS = min(k, units) / service time; at QD1 latency
// equals the service time exactly) and, with zero costs, the "free" model
// that measures the emulator's own overhead.
package fixed

import (
	"fmt"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/timeline"
)

// Config describes a fixed-cost device. The zero value of each cost is free.
type Config struct {
	Capacity int64         // bytes; required
	Units    int           // requests served in parallel; 0 means 1
	Read     time.Duration // service time of a read, independent of size
	Write    time.Duration // service time of a write
	Other    time.Duration // service time of Flush and Trim
	// BytesPerSecond, when non-zero, adds Length/BytesPerSecond to the
	// service time of reads and writes.
	BytesPerSecond float64
}

// Device is a fixed-cost device.
type Device struct {
	cfg   Config
	units []timeline.Timeline

	reads, writes           int64
	bytesRead, bytesWritten int64
}

var (
	_ models.Device   = (*Device)(nil)
	_ models.Observer = (*Device)(nil)
)

// New returns a fixed-cost device.
func New(cfg Config) (*Device, error) {
	if cfg.Units == 0 {
		cfg.Units = 1
	}
	if cfg.Capacity <= 0 || cfg.Units < 0 || cfg.Read < 0 || cfg.Write < 0 || cfg.Other < 0 || cfg.BytesPerSecond < 0 {
		return nil, fmt.Errorf("%w: fixed device %+v", models.ErrConfig, cfg)
	}
	return &Device{cfg: cfg, units: make([]timeline.Timeline, cfg.Units)}, nil
}

// Capacity implements models.Device.
func (d *Device) Capacity() int64 { return d.cfg.Capacity }

// Submit implements models.Device: the request takes the unit on which it
// can start first (filling idle gaps before reservations made for the
// future) and holds it for its service time.
func (d *Device) Submit(at time.Duration, r models.Request) (time.Duration, error) {
	if err := models.CheckRange(r, d.cfg.Capacity); err != nil {
		return at, err
	}
	var svc time.Duration
	switch r.Op {
	case models.Read:
		svc = d.cfg.Read + d.transfer(r.Length)
		d.reads++
		d.bytesRead += r.Length
	case models.Write:
		svc = d.cfg.Write + d.transfer(r.Length)
		d.writes++
		d.bytesWritten += r.Length
	case models.Flush, models.Trim:
		svc = d.cfg.Other
	default:
		return at, nil // file ops cost nothing on a block device
	}
	u, first := 0, d.units[0].Earliest(at, svc)
	for i := 1; i < len(d.units) && first > at; i++ {
		if s := d.units[i].Earliest(at, svc); s < first {
			u, first = i, s
		}
	}
	_, done := d.units[u].Reserve(at, svc)
	return done, nil
}

func (d *Device) transfer(n int64) time.Duration {
	if d.cfg.BytesPerSecond == 0 {
		return 0
	}
	return time.Duration(float64(n) / d.cfg.BytesPerSecond * float64(time.Second))
}

// Counters implements models.Observer.
func (d *Device) Counters() []models.Counter {
	return []models.Counter{
		{Name: "reads", Value: float64(d.reads)},
		{Name: "writes", Value: float64(d.writes)},
		{Name: "host_bytes_read", Value: float64(d.bytesRead)},
		{Name: "host_bytes_written", Value: float64(d.bytesWritten)},
	}
}

// Resources implements models.Accountant: the parallel units, as a drive.
func (d *Device) Resources(at time.Duration) []models.Resource {
	var busy time.Duration
	for i := range d.units {
		busy += d.units[i].BookedBy(at)
	}
	return []models.Resource{{Name: "units", Class: models.ClassDrive, Units: len(d.units), Busy: busy}}
}

var _ models.Accountant = (*Device)(nil)
