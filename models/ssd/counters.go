package ssd

import (
	"time"

	"github.com/nasemu/nasemu/models"
)

// stats are the drive's running totals.
type stats struct {
	hostWritten, hostRead int64 // bytes
	nandWritten           int64 // bytes programmed, padding and GC copies included
	gcVictims             int64 // blocks reclaimed (GC and folding)
	gcCopied              int64 // 4 KiB units relocated
	erases                int64
	folds                 int64 // SLC blocks folded in idle time
	trims                 int64
	retries               int64 // read-retry steps of host reads
	mapMisses             int64 // map pages read from NAND (DRAM-less drives)
}

// Counters implements models.Observer. gc_pages_copied counts 4 KiB
// mapping units; gc_victims counts blocks reclaimed by garbage collection
// and SLC folding; endurance_used_pct is host bytes written against the
// rated TBW.
func (d *Drive) Counters() []models.Counter {
	wa := 0.0
	if d.st.hostWritten > 0 {
		wa = float64(d.st.nandWritten) / float64(d.st.hostWritten)
	}
	emin, emax, esum := uint32(0), uint32(0), uint64(0)
	for i, e := range d.erases {
		if i == 0 || e < emin {
			emin = e
		}
		emax = max(emax, e)
		esum += uint64(e)
	}
	endurance := 0.0
	if d.cfg.RatedTBW > 0 {
		endurance = float64(d.st.hostWritten) / (d.cfg.RatedTBW * 1e12) * 100
	}
	return []models.Counter{
		{Name: "host_bytes_written", Value: float64(d.st.hostWritten)},
		{Name: "host_bytes_read", Value: float64(d.st.hostRead)},
		{Name: "nand_bytes_written", Value: float64(d.st.nandWritten)},
		{Name: "write_amplification", Value: wa},
		{Name: "gc_victims", Value: float64(d.st.gcVictims)},
		{Name: "gc_pages_copied", Value: float64(d.st.gcCopied)},
		{Name: "slc_folds", Value: float64(d.st.folds)},
		{Name: "slc_cache_bytes", Value: float64(d.slcCapacity() * slotSize)},
		{Name: "slc_cache_used_bytes", Value: float64(d.slcUsed * slotSize)},
		{Name: "erase_count_min", Value: float64(emin)},
		{Name: "erase_count_mean", Value: float64(esum) / float64(len(d.erases))},
		{Name: "erase_count_max", Value: float64(emax)},
		{Name: "endurance_used_pct", Value: endurance},
		{Name: "trims", Value: float64(d.st.trims)},
		{Name: "read_retries", Value: float64(d.st.retries)},
		{Name: "map_cache_misses", Value: float64(d.st.mapMisses)},
	}
}

// Resources implements models.Accountant: the dies (reads, programs,
// erases, garbage collection), the channels, the controller's command
// processing and the host interface (one half-duplex resource on SATA, a
// direction each on PCIe).
func (d *Drive) Resources(at time.Duration) []models.Resource {
	var dies, chans time.Duration
	for i := range d.dies {
		dies += d.dies[i].busy.BookedBy(at)
	}
	for i := range d.channels {
		chans += d.channels[i].BookedBy(at)
	}
	out := []models.Resource{
		{Name: "dies", Class: models.ClassDrive, Units: len(d.dies), Busy: dies},
		{Name: "channels", Class: models.ClassDrive, Units: len(d.channels), Busy: chans},
	}
	if d.admit > 0 {
		out = append(out, models.Resource{Name: "controller", Class: models.ClassDrive, Units: 1, Busy: d.ctrl.BookedBy(at)})
	}
	if d.linkR == d.linkW {
		return append(out, models.Resource{Name: "interface", Class: models.ClassDrive, Units: 1, Busy: d.linkR.BookedBy(at)})
	}
	return append(out,
		models.Resource{Name: "interface to host", Class: models.ClassDrive, Units: 1, Busy: d.linkR.BookedBy(at)},
		models.Resource{Name: "interface from host", Class: models.ClassDrive, Units: 1, Busy: d.linkW.BookedBy(at)})
}

var _ models.Accountant = (*Drive)(nil)
