package setup

import (
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/catalog"
	"github.com/nasemu/nasemu/models/hdd"
	"github.com/nasemu/nasemu/models/ssd"
)

// ssdConfig returns a copy of d's SSD parameters (zero when d has none),
// for an inline drive to override.
func ssdConfig(d catalog.Drive) ssd.Config {
	if d.SSD != nil {
		return *d.SSD
	}
	return ssd.Config{}
}

// hddConfig returns a copy of d's HDD parameters (zero when d has none).
func hddConfig(d catalog.Drive) hdd.Config {
	if d.HDD != nil {
		return *d.HDD
	}
	return hdd.Config{}
}

// validateDrive checks an inline drive's parameters.
func validateDrive(d catalog.Drive) error {
	if d.SSD != nil {
		return d.SSD.Validate()
	}
	return d.HDD.Validate()
}

// model returns the group's drive with its setup-level settings applied.
func (g DriveGroup) model() catalog.Drive {
	d := g.Drive
	if g.Overprovision != 0 && d.SSD != nil {
		cfg := *d.SSD
		cfg.Overprovision = g.Overprovision
		d.SSD = &cfg
	}
	return d
}

// nvme reports whether d is an NVMe drive (on a PCIe link of its own, not
// in a SATA/SAS bay).
func nvme(d catalog.Drive) bool { return d.SSD != nil && d.SSD.Interface == "nvme" }

// nativeCapacity is the capacity a drive is sold with.
func nativeCapacity(d catalog.Drive) models.Bytes {
	switch {
	case d.SSD != nil:
		return d.SSD.Capacity
	case d.HDD != nil:
		return d.HDD.Capacity
	}
	return 0
}

// memberCapacity is the user capacity one drive of the group presents, as
// its configuration states it (the built drive may round down to its
// sector or mapping unit).
func (g DriveGroup) memberCapacity() int64 {
	d := g.model()
	switch {
	case d.SSD != nil:
		c := d.SSD.Capacity
		if g.Capacity != 0 {
			c = g.Capacity
		}
		return int64(float64(c) * (1 - d.SSD.Overprovision))
	case d.HDD != nil:
		if g.Capacity != 0 {
			return int64(g.Capacity)
		}
		return int64(d.HDD.Capacity)
	}
	return 0
}
