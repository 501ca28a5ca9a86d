package nas

import (
	"fmt"
	"github.com/nasemu/nasemu/models/timeline"
	"time"

	"github.com/nasemu/nasemu/models"
)

// BusConfig describes a link that several devices share: a SATA/SAS HBA's
// PCIe uplink, a chipset's DMI link, a PCIe slot. Rate caps the data all
// attached devices move together; PortRate caps each device's own link
// (a SATA 3 Gb/s port); PerCommand is the controller's processing time per
// command, serialised (a RAID-on-chip's IOPS ceiling). Zero means no cap.
type BusConfig struct {
	Name       string        `yaml:"name"`
	Rate       models.Bytes  `yaml:"rate"`      // bytes/s shared by all ports
	PortRate   models.Bytes  `yaml:"port_rate"` // bytes/s per port
	PerCommand time.Duration `yaml:"per_command"`
}

func (b BusConfig) validate(key string) error {
	if b.Rate < 0 || b.PortRate < 0 || b.PerCommand < 0 {
		return fmt.Errorf("%w: %s: negative rate or cost", models.ErrConfig, key)
	}
	return nil
}

// PCIe per-lane payload rates, bytes/s: the line rate after encoding
// (8b/10b for gen 1–2, 128b/130b after) less about 15% for TLP headers,
// DLLPs and flow control at 256-byte payloads. Gen 2 x4 gives 1.7 GB/s,
// gen 3 x4 3.35 GB/s.
var pcieLane = [...]float64{0, 250e6 * 0.85, 500e6 * 0.85, 984.6e6 * 0.85, 1969e6 * 0.85, 3938e6 * 0.85}

// PCIeRate returns the usable bandwidth of a PCIe link, bytes/s.
func PCIeRate(gen, lanes int) float64 {
	if gen < 1 || gen >= len(pcieLane) || lanes < 1 {
		return 0
	}
	return pcieLane[gen] * float64(lanes)
}

// SATA and SAS port payload rates, bytes/s (line rate after 8b/10b less
// framing): what one drive can move over its link.
const (
	SATA1 = 150e6 * 0.9  // 1.5 Gb/s
	SATA2 = 300e6 * 0.9  // 3 Gb/s
	SATA3 = 600e6 * 0.9  // 6 Gb/s
	SAS3  = 1200e6 * 0.9 // 12 Gb/s
)

// Bus is a shared link. Devices attach to it through Ports; every byte a
// port moves takes its share of the bus's time.
//
// The bus is one reservation calendar: a transfer starts when its data is
// ready and the bus is free, and holds the bus for bytes/Rate, so the
// aggregate never exceeds Rate. The calendar keeps the idle gaps, so a
// read's transfer reserved for when its drive has the data does not block
// transfers that fit before it. The bus, its command processor and each
// port's link hold such bookings for every request in flight (a read's
// transfer, a RAID 5 write's write-phase commands), out of order as the
// drives complete them, so they are timeline.Cores. With a Timeline's 32
// intervals they forgot future bookings past some 32 requests in flight
// and placed nothing before them: I/O at QD256 through 8 drives ran 23 %
// below the drives' rate, RAID 5 writes through the command processor at
// a quarter of it (TestBusHoldsDeepQueues).
type Bus struct {
	cfg   BusConfig
	data  timeline.Core
	cmd   timeline.Core // the controller's command processor
	bytes int64
	ports []*Port
}

// NewBus returns a bus.
func NewBus(cfg BusConfig) (*Bus, error) {
	if err := cfg.validate("bus"); err != nil {
		return nil, err
	}
	return &Bus{cfg: cfg}, nil
}

// Attach puts dev on a new port of the bus.
func (b *Bus) Attach(dev models.Device) *Port {
	p := &Port{bus: b, dev: dev}
	b.ports = append(b.ports, p)
	return p
}

// transfer reserves the bus and port for n bytes that may start crossing
// at from and are all at the far end no earlier than ready, and returns
// when they have crossed. A write's data crosses before the drive starts
// (from = ready). A read's data streams out of the drive as its own
// interface sends it, over the very port link (the drive's completion
// already includes that transfer): the bus and port carry it during the
// last n/rate before ready when they are free then, and only a port or
// bus slower than the drive's interface, or one busy with other
// transfers, makes it later. Charging the port's transfer after the
// drive's completion would send the same bytes twice: a 170 MB/s drive
// on a 3 Gb/s port would read sequentially at 110 MB/s.
func (b *Bus) transfer(p *Port, from, ready time.Duration, n int64) time.Duration {
	done := ready
	if b.cfg.Rate > 0 {
		d := seconds(float64(n) / float64(b.cfg.Rate))
		_, end := b.data.Reserve(max(from, ready-d), d)
		done = max(done, end)
	}
	if b.cfg.PortRate > 0 {
		d := seconds(float64(n) / float64(b.cfg.PortRate))
		_, end := p.link.Reserve(max(from, ready-d), d)
		done = max(done, end)
	}
	b.bytes += n
	p.bytes += n
	return done
}

// command runs one command's processing from t and returns when it is
// done. The processor works through its queue and never idles while a
// command waits, so the work fills every idle stretch from t
// (ReserveSplit), as a core's does: booked whole, commands left the
// slivers between those booked ahead (a RAID 5 write's write phase) unused,
// and saturated RAID 5 writes ran 9 % below the processor's rate
// (TestBusHoldsDeepQueues).
func (b *Bus) command(t time.Duration) time.Duration {
	if b.cfg.PerCommand == 0 {
		return t
	}
	return b.cmd.ReserveSplit(t, b.cfg.PerCommand)
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Port is one device's attachment to a Bus. It is a models.Device that
// passes requests to the device and charges their data to the bus: a
// write's data crosses before the device starts it, a read's after the
// device has it.
type Port struct {
	bus   *Bus
	dev   models.Device
	link  timeline.Core // the port's own link
	bytes int64
}

var (
	_ models.Device   = (*Port)(nil)
	_ models.Parent   = (*Port)(nil)
	_ models.Observer = (*Port)(nil)
)

// Capacity implements models.Device.
func (p *Port) Capacity() int64 { return p.dev.Capacity() }

// Children implements models.Parent.
func (p *Port) Children() []models.Device { return []models.Device{p.dev} }

// Submit implements models.Device. A request the device would refuse for
// its range never reaches the bus: the HBA's driver checks it against the
// drive's capacity before it issues a command.
func (p *Port) Submit(at time.Duration, r models.Request) (time.Duration, error) {
	if err := models.CheckRange(r, p.dev.Capacity()); err != nil {
		return at, err
	}
	switch r.Op {
	case models.Read:
		t := p.bus.command(at)
		done, err := p.dev.Submit(t, r)
		if err != nil {
			return done, err
		}
		return p.bus.transfer(p, t, done, r.Length), nil
	case models.Write:
		t := p.bus.command(at)
		return p.dev.Submit(p.bus.transfer(p, t, t, r.Length), r)
	case models.Flush, models.Trim:
		return p.dev.Submit(p.bus.command(at), r)
	}
	return p.dev.Submit(at, r)
}

// Bytes returns the bytes all ports have moved over the bus.
func (b *Bus) Bytes() int64 { return b.bytes }

// Counters implements models.Observer: the bytes this port moved over the
// bus (summed over a stack's ports, the bus's total).
func (p *Port) Counters() []models.Counter {
	return []models.Counter{{Name: "bus_bytes", Value: float64(p.bytes)}}
}

// Bus returns the bus the port is on.
func (p *Port) Bus() *Bus { return p.bus }

// Resources implements models.Accountant: the bus's data path and command
// processor (shared by its ports, so reported once) and this port's own
// link, where the bus has them.
func (p *Port) Resources(at time.Duration) []models.Resource {
	b := p.bus
	var out []models.Resource
	if b.cfg.Rate > 0 {
		out = append(out, models.Resource{Name: "bus", Class: models.ClassController, Units: 1, Busy: b.data.BookedBy(at), Key: &b.data})
	}
	if b.cfg.PerCommand > 0 {
		out = append(out, models.Resource{Name: "bus commands", Class: models.ClassController, Units: 1, Busy: b.cmd.BookedBy(at), Key: &b.cmd})
	}
	if b.cfg.PortRate > 0 {
		out = append(out, models.Resource{Name: "port", Class: models.ClassController, Units: 1, Busy: p.link.BookedBy(at)})
	}
	return out
}

var _ models.Accountant = (*Port)(nil)
