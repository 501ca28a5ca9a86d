package bench

import (
	"fmt"
	"time"

	"github.com/nasemu/nasemu/models"
)

// SimSetup is what a SimResolver makes of a setup: the device stack and
// how to present it.
type SimSetup struct {
	Device      models.Device
	Name        string // display name; "" keeps the setup as written
	Description string // one line for reports; may be empty
}

// SimResolver turns the SETUP of a "sim:SETUP" target (a built-in name or a
// setup file) into a device seeded with seed. The program injects it, so
// this package does not depend on how setups are loaded. An error that
// wraps ErrTarget (or models.ErrConfig) is reported as bad input.
type SimResolver func(setup string, seed uint64) (SimSetup, error)

// SimFactory returns the factory of "sim:SETUP" targets.
func SimFactory(resolve SimResolver) Factory {
	return Factory{Scheme: "sim", Usage: "sim:SETUP", Open: func(addr, rest string, opts OpenOptions) (Target, error) {
		if rest == "" {
			return nil, fmt.Errorf("%w: %q names no setup (want sim:SETUP)", ErrTarget, addr)
		}
		s, err := resolve(rest, opts.Seed)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrTarget, addr, err)
		}
		return NewSim(addr, s), nil
	}}
}

// Sim is a simulated target: a model in virtual time. Files are placed in
// the device's address space by a first-fit extent allocator (4 KiB
// aligned); file operations (Create, Open, Close, Remove) are submitted to
// the model like block operations, so layers that charge for them (a NAS,
// a file protocol) do.
type Sim struct {
	name, desc string
	dev        models.Device
	clock      *VirtualClock
	space      *Space
	disk       simDisk // what the device was asked, for disk_util
	// noCreateFsync: layouts do not flush what they write (fio's
	// create_fsync=0; see fileMaker).
	noCreateFsync bool
}

var (
	_ Target            = (*Sim)(nil)
	_ CounterSource     = (*Sim)(nil)
	_ Describer         = (*Sim)(nil)
	_ ValidDataLayouter = (*Sim)(nil)
)

const (
	simAlign    = 4096
	simFillSize = 1 << 20 // layout writes
)

// NewSim returns a simulated target named name over s.Device.
func NewSim(name string, s SimSetup) *Sim {
	if s.Name != "" {
		name = s.Name
	}
	return &Sim{name: name, desc: s.Description, dev: s.Device, clock: NewVirtualClock(), space: NewSpace(name, s.Device.Capacity(), simAlign)}
}

// Name implements Target.
func (s *Sim) Name() string { return s.name }

// Description implements Describer.
func (s *Sim) Description() string { return s.desc }

// Mode implements Target.
func (s *Sim) Mode() Mode { return Virtual }

// Clock implements Target.
func (s *Sim) Clock() Clock { return s.clock }

// Close implements Target.
func (s *Sim) Close() error { return nil }

// Device returns the simulated device.
func (s *Sim) Device() models.Device { return s.dev }

// Layout implements Target. Filling writes the file sequentially in 1 MiB
// buffered requests at queue depth 1, in virtual time, and then flushes
// (unless the job has create_fsync=0), as fio's layout does; the model
// counts those writes.
func (s *Sim) Layout(name string, size int64, fill bool) (int64, error) {
	e := s.space.File(name)
	switch {
	case size == 0 && e == nil:
		e = s.space.Whole(name)
	case size == 0:
	case e == nil || e.Size < size:
		var err error
		if e, err = s.space.Allocate(name, size); err != nil {
			return 0, err
		}
	}
	if fill && !e.Filled && !e.Whole {
		t := s.clock.Now()
		for off := int64(0); off < e.Size; off += simFillSize {
			n := min(simFillSize, e.Size-off)
			done, err := s.dev.Submit(t, models.Request{Op: models.Write, Offset: e.Base + off, Length: n})
			if err != nil {
				return 0, fmt.Errorf("laying out %s: %w", name, err)
			}
			s.disk.add(1, n, t, done)
			t = done
		}
		// fsync the file, as fio does after laying it out (create_fsync,
		// on by default) and as the path target does: the layout's dirty
		// pages are on the storage before the job starts, not written
		// back under its I/O.
		if !s.noCreateFsync {
			done, err := s.dev.Submit(t, models.Request{Op: models.Flush})
			if err != nil {
				return 0, fmt.Errorf("laying out %s: %w", name, err)
			}
			t = done
		}
		s.clock.Wait(t)
		e.Filled = true
	}
	return e.Size, nil
}

// validDataSetter is implemented by a device whose client filesystem can
// make a file's bytes valid without writing them (package proto: NTFS on
// an iSCSI LUN or a local volume).
type validDataSetter interface {
	SetsValidData() bool
}

// LayoutValid implements ValidDataLayouter: where the device's client
// filesystem can set a file's valid data length (validDataSetter), the
// file is placed and counts as filled without a write; the model sees no
// I/O for it (a NAS with sparse files then reads it as holes).
func (s *Sim) LayoutValid(name string, size int64) (int64, bool, error) {
	v, ok := s.dev.(validDataSetter)
	if !ok || !v.SetsValidData() || size == 0 {
		return 0, false, nil
	}
	e := s.space.File(name)
	if e != nil && e.Size >= size {
		return e.Size, true, nil
	}
	e, err := s.space.Allocate(name, size)
	if err != nil {
		return 0, false, err
	}
	e.Filled = true
	return e.Size, true, nil
}

// Open implements Target.
func (s *Sim) Open(at time.Duration, name string, size int64, flags OpenFlags) (File, time.Duration, error) {
	op := models.Open
	e := s.space.File(name)
	if flags.Create {
		op = models.Create
		if e == nil || e.Size < size {
			var err error
			if e, err = s.space.Allocate(name, size); err != nil {
				return nil, at, err
			}
		}
		e.Filled = true // the creating job writes it; reads later need no layout
	}
	if e == nil {
		return nil, at, fmt.Errorf("%w: %s: no file %s", ErrTarget, s.name, name)
	}
	done, err := s.dev.Submit(at, models.Request{Op: op, Offset: e.Base, Length: e.Size})
	if err != nil {
		return nil, done, err
	}
	return &simFile{dev: s.dev, disk: &s.disk, e: e, direct: flags.Direct, writeThrough: flags.WriteThrough, thread: flags.Thread}, done, nil
}

// Remove implements Target.
func (s *Sim) Remove(at time.Duration, name string) (time.Duration, error) {
	e := s.space.File(name)
	if e == nil {
		return at, fmt.Errorf("%w: %s: no file %s", ErrTarget, s.name, name)
	}
	done, err := s.dev.Submit(at, models.Request{Op: models.Remove, Offset: e.Base, Length: e.Size})
	s.space.Release(name)
	return done, err
}

// Accounts implements AccountSource: the busy time of every resource of
// the device stack.
func (s *Sim) Accounts(at time.Duration) []models.Account { return models.Accounts(s.dev, at) }

// DeviceCounters implements CounterSource: bytes are summed over the whole
// stack (every drive of an array), write amplification is their ratio.
func (s *Sim) DeviceCounters() DeviceCounters {
	c := DeviceCounters{Source: "model"}
	c.HostBytesWritten, _ = models.Sum(s.dev, "host_bytes_written")
	c.NANDBytesWritten, _ = models.Sum(s.dev, "nand_bytes_written")
	if c.HostBytesWritten > 0 {
		c.WriteAmplification = c.NANDBytesWritten / c.HostBytesWritten
	}
	return c
}

// simFile is a file placed on a simulated device. A file opened with
// OpenFlags.Direct (fio direct=1, the unbuffered Windows tools) issues its
// reads and writes as models.Request.Direct, and one opened WriteThrough
// (fio sync=1, diskspd -Sh) its writes as models.Request.WriteThrough, so
// that the model's caches treat them as the real ones do.
type simFile struct {
	dev                  models.Device
	disk                 *simDisk
	e                    *Extent
	direct, writeThrough bool
	thread               int // the job instance that opened it
}

// Do implements File.
func (f *simFile) Do(at time.Duration, op models.Op, off, n int64, _ []byte) (time.Duration, error) {
	if op == models.Flush {
		return f.dev.Submit(at, models.Request{Op: models.Flush})
	}
	done, err := f.dev.Submit(at, models.Request{Op: op, Offset: f.e.Base + off, Length: n, Direct: f.direct, WriteThrough: f.writeThrough && op == models.Write, Thread: f.thread})
	if err == nil && (op == models.Read || op == models.Write) {
		f.disk.add(map[models.Op]int{models.Read: 0, models.Write: 1}[op], n, at, done)
	}
	return done, err
}

// Close implements File.
func (f *simFile) Close(at time.Duration) (time.Duration, error) {
	return f.dev.Submit(at, models.Request{Op: models.Close, Offset: f.e.Base, Length: f.e.Size})
}
