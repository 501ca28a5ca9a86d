// Package catalog lists real products — drives now, NAS systems, NICs and
// servers as their models land — with their datasheet figures, so that a
// setup can name "wd-red-1tb" instead of spelling out a seek curve.
//
// Each entry notes where its figures come from. Parameters that no
// datasheet gives (NAND geometry and latencies, command overheads) are set
// to physically plausible values for the product's class and say so.
package catalog

import (
	"fmt"
	"sort"
	"strings"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/hdd"
	"github.com/nasemu/nasemu/models/ssd"
)

// Drive is a catalog drive: exactly one of SSD and HDD is set.
type Drive struct {
	Name    string // catalog key, e.g. "wd-red-1tb"
	Product string // vendor, product and part number as the datasheet names it
	Source  string // where the figures come from
	Price   StreetPrice
	SSD     *ssd.Config
	HDD     *hdd.Config
}

// StreetPrice is what a product sold for, new, at one time and place: a
// planner compares configurations by it, so it carries its date and
// where it was seen (prices of storage move by tens of per cent a year).
type StreetPrice struct {
	USD    float64 // 0: unknown
	Date   string  // when, "YYYY-MM"
	Source string  // where it was seen
}

// Kind returns "ssd" or "hdd".
func (d Drive) Kind() string {
	if d.SSD != nil {
		return "ssd"
	}
	return "hdd"
}

// Summary returns the drive's key figures for listings, with its street
// price where known.
func (d Drive) Summary() string {
	s := ""
	if d.SSD != nil {
		s = d.SSD.Summary()
	} else {
		s = d.HDD.Summary()
	}
	if d.Price.USD > 0 {
		s += fmt.Sprintf(", $%.0f (%s)", d.Price.USD, d.Price.Date)
	}
	return s
}

// New builds the drive's model. capacity, when non-zero, scales the drive
// down to that user capacity (same geometry per die or zone) for fast tests.
func (d Drive) New(capacity int64, seed uint64) (models.Device, error) {
	switch {
	case d.SSD != nil:
		cfg := *d.SSD
		if capacity != 0 {
			var err error
			if cfg, err = cfg.ScaleTo(capacity); err != nil {
				return nil, fmt.Errorf("drive %s: %w", d.Name, err)
			}
		}
		return ssd.New(cfg, seed)
	case d.HDD != nil:
		cfg := *d.HDD
		if capacity != 0 {
			var err error
			if cfg, err = cfg.ScaleTo(capacity); err != nil {
				return nil, fmt.Errorf("drive %s: %w", d.Name, err)
			}
		}
		return hdd.New(cfg, seed)
	}
	return nil, fmt.Errorf("%w: catalog drive %q has no model", models.ErrConfig, d.Name)
}

// Drives returns every catalog drive, sorted by name.
func Drives() []Drive {
	all := append(append([]Drive(nil), ssdDrives...), hddDrives...)
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all
}

// LookupDrive returns the catalog drive called name.
func LookupDrive(name string) (Drive, error) {
	var names []string
	for _, d := range Drives() {
		if d.Name == name {
			return d, nil
		}
		names = append(names, d.Name)
	}
	return Drive{}, fmt.Errorf("unknown drive %q (known: %s)", name, strings.Join(names, ", "))
}
