package ssd

import (
	"fmt"
	"math"
	"time"

	"github.com/nasemu/nasemu/models"
)

// Interface names accepted in Config.Interface.
const (
	NVMe = "nvme" // PCIe Gen3 x4 NVMe: full duplex, one link timeline per direction
	SATA = "sata" // SATA 6 Gb/s: half duplex, one shared link timeline
)

// Default host payload rates. PCIe Gen3 x4 carries 3.94 GB/s after 128b/130b
// coding; TLP headers (24 B per 256 B payload) leave about 3.5 GB/s for
// device-to-host data. Host-to-device data travels as completions to the
// drive's memory reads, whose request round trips cost a little more, so
// NVMe Gen3 drives top out near 3.2 GB/s writing. SATA 6 Gb/s is 600 MB/s
// after 8b/10b coding; FIS framing and handshakes leave about 560 MB/s.
const (
	nvmeReadMBps  = 3500
	nvmeWriteMBps = 3150
	sataMBps      = 560
)

// Config describes one SSD: its datasheet figures, its host interface and
// controller, its NAND geometry and timings, and its cache policy. Sizes
// are models.Bytes so setup files can write "16KiB"; times are
// time.Duration; rates are MB/s (10^6 bytes per second).
//
// Fields marked "0 = default" may be left out; every other field is
// required (Validate says which is missing).
type Config struct {
	// Capacity is the user capacity as sold (decimal bytes, e.g. 500 GB).
	Capacity models.Bytes `yaml:"capacity"`
	// Overprovision is extra over-provisioning withheld from the user on
	// top of the factory spare area, as a fraction of Capacity (0–0.6):
	// the "SSD over-provisioning" setting NAS vendors offer. Capacity()
	// shrinks by that fraction and garbage collection gets the space.
	Overprovision float64 `yaml:"overprovision"`

	// Interface is NVMe ("nvme") or SATA ("sata").
	Interface string `yaml:"interface"`
	// LinkMBps is the payload rate device to host (reads); for SATA, of
	// the shared half-duplex link. 0 = the interface default.
	LinkMBps float64 `yaml:"link_mbps"`
	// LinkWriteMBps is the payload rate host to device (NVMe only). 0 =
	// the interface default.
	LinkWriteMBps float64 `yaml:"link_write_mbps"`
	// CommandOverhead is the controller's latency per command (command
	// fetch, FTL lookup, completion): what a QD1 request pays on top of
	// NAND and transfer time.
	CommandOverhead time.Duration `yaml:"command_overhead"`
	// ControllerIOPS is the rate at which the controller's firmware admits
	// commands (its command-processing ceiling). 0 = unlimited.
	ControllerIOPS float64 `yaml:"controller_iops"`

	// NAND geometry. A die has Planes planes; a block spans the same block
	// of every plane (multi-plane block), PagesPerBlock TLC pages per plane.
	Channels       int          `yaml:"channels"`
	DiesPerChannel int          `yaml:"dies_per_channel"`
	Planes         int          `yaml:"planes"`
	PageSize       models.Bytes `yaml:"page_size"`
	PagesPerBlock  int          `yaml:"pages_per_block"`
	BlocksPerDie   int          `yaml:"blocks_per_die"`
	// ChannelMBps is the NAND bus rate of one channel (Toggle/ONFI).
	ChannelMBps float64 `yaml:"channel_mbps"`

	// CellBits is the bits per cell of the native mode: 3 (TLC) or 4
	// (QLC). 0 = 3. A block in SLC mode holds 1/CellBits of its native
	// capacity, and a word line's CellBits pages read in different times
	// (readtime.go). ReadTLC, ProgramTLC and the "TLC" of other names mean
	// the native mode.
	CellBits int `yaml:"cell_bits"`

	// NAND timings. Reads sense one page per plane (tR; ReadTLC is the
	// mean over the page types of a word line); programs write
	// one page on every plane at once (a multi-plane page group) in
	// ProgramTLC or ProgramSLC; Erase erases one multi-plane block.
	ReadTLC    time.Duration `yaml:"read_tlc"`
	ReadSLC    time.Duration `yaml:"read_slc"`
	ProgramTLC time.Duration `yaml:"program_tlc"`
	ProgramSLC time.Duration `yaml:"program_slc"`
	Erase      time.Duration `yaml:"erase"`
	// ProgramSuspend is the die's program suspend latency: a host read
	// that finds its die programming suspends the program, waits this long
	// for the die to reach a safe point (the end of the program's current
	// pulse-verify loop), reads, and resumes it, which then ends later by
	// the read's time. 0 = programs are not suspended (a read waits for
	// the program in progress, and the rest of its word line, to end).
	ProgramSuspend time.Duration `yaml:"program_suspend"`
	// EraseSuspend is the same for an erase: the wait for the end of the
	// erase's current pulse-verify loop. 0 = erases are not suspended. A
	// die may suspend erases only (ProgramSuspend 0), as drives whose
	// reads would otherwise wait milliseconds do first (suspend.go).
	EraseSuspend time.Duration `yaml:"erase_suspend"`
	// ReadRetry is the mean number of read-retry steps per NAND read of a
	// block that has not been erased yet (beginning of life); it grows
	// with the block's erase count (readtime.go). 0 = the dies never
	// retry (an ideal die, for tests); the catalog's NAND classes set it.
	ReadRetry float64 `yaml:"read_retry"`

	// SLCCacheMax is the firmware's limit of the dynamic SLC cache, in
	// host bytes: the most free native-mode blocks it lends to SLC mode.
	// As the drive fills, the cache is what the free blocks hold in SLC
	// mode (a third of their TLC capacity), down to SLCCacheMin, the static
	// part carved from the factory spare area (slc.go). 0 = no SLC cache
	// (enterprise drives).
	SLCCacheMax models.Bytes `yaml:"slc_cache_max"`
	SLCCacheMin models.Bytes `yaml:"slc_cache_min"`
	// WriteBuffer is the DRAM that holds acknowledged writes until NAND
	// programs them. 0 = two page groups per die.
	WriteBuffer models.Bytes `yaml:"write_buffer"`
	// ConcurrentPrograms is the most page-group programs the controller
	// keeps running at once over all its dies: its flash sequencer
	// interleaves that many (channels x ways), and a drive with more dies
	// than that cannot program on all of them at once. Host, garbage
	// collection and SLC-folding programs all take one of these slots for
	// their channel transfer and tPROG. 0 = no limit but the dies.
	ConcurrentPrograms int `yaml:"concurrent_programs"`
	// MapCache is the part of the forward map a DRAM-less drive caches (in
	// SRAM or the NVMe host memory buffer), in bytes of map: 4 bytes map
	// 4 KiB. 0 = the whole map is in DRAM (mapcache.go).
	MapCache models.Bytes `yaml:"map_cache"`
	// GCFreeBlocks is the number of free blocks per die below which
	// garbage collection runs. 0 = 2.
	GCFreeBlocks int `yaml:"gc_free_blocks"`
	// RatedTBW is the datasheet endurance in terabytes (10^12) written.
	RatedTBW float64 `yaml:"rated_tbw"`

	// Datasheet figures, as the vendor quotes them (see the catalog entry
	// for the vendor's conditions). The model does not use them; Summary
	// prints them and tests compare the model against them.
	SeqReadMBps   float64 `yaml:"seq_read_mbps"`
	SeqWriteMBps  float64 `yaml:"seq_write_mbps"`
	RandReadIOPS  float64 `yaml:"rand_read_iops"`
	RandWriteIOPS float64 `yaml:"rand_write_iops"`
	// RandWriteInCache says the vendor measured RandWriteIOPS of a drive
	// with an SLC cache within the cache (a short burst on a small span);
	// otherwise it is a fresh-out-of-box run over the whole span, which
	// runs far past the cache.
	RandWriteInCache bool `yaml:"rand_write_in_cache"`
	// PostCacheWriteMBps is the published sequential write rate once the
	// SLC cache is full (a review's whole-drive fill; for drives without an
	// SLC cache, the datasheet's sequential write). The model does not use
	// it: tests check that the NAND geometry and program time give it.
	PostCacheWriteMBps float64 `yaml:"post_cache_write_mbps"`
}

func cfgErr(field, format string, args ...any) error {
	return fmt.Errorf("%w: ssd %s: %s", models.ErrConfig, field, fmt.Sprintf(format, args...))
}

// withDefaults fills the fields whose zero value means "default".
func (c Config) withDefaults() Config {
	switch c.Interface {
	case NVMe:
		if c.LinkMBps == 0 {
			c.LinkMBps = nvmeReadMBps
		}
		if c.LinkWriteMBps == 0 {
			c.LinkWriteMBps = nvmeWriteMBps
		}
	case SATA:
		if c.LinkMBps == 0 {
			c.LinkMBps = sataMBps
		}
		c.LinkWriteMBps = c.LinkMBps
	}
	if c.GCFreeBlocks == 0 {
		c.GCFreeBlocks = 2
	}
	if c.CellBits == 0 {
		c.CellBits = 3
	}
	if c.WriteBuffer == 0 && c.Planes > 0 {
		c.WriteBuffer = models.Bytes(2*c.Channels*c.DiesPerChannel*c.Planes) * c.PageSize
	}
	return c
}

// Validate checks the configuration; errors wrap models.ErrConfig and name
// the field.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case c.Capacity <= 0:
		return cfgErr("capacity", "must be positive, got %d", c.Capacity)
	case math.IsNaN(c.Overprovision) || c.Overprovision < 0 || c.Overprovision > 0.6:
		return cfgErr("overprovision", "must be within 0..0.6, got %g", c.Overprovision)
	case c.Interface != NVMe && c.Interface != SATA:
		return cfgErr("interface", "want %q or %q, got %q", NVMe, SATA, c.Interface)
	case !(c.LinkMBps > 0) || !(c.LinkWriteMBps > 0):
		return cfgErr("link_mbps", "must be positive")
	case c.CommandOverhead < 0:
		return cfgErr("command_overhead", "must not be negative")
	case c.ControllerIOPS < 0:
		return cfgErr("controller_iops", "must not be negative")
	case c.Channels <= 0:
		return cfgErr("channels", "must be positive")
	case c.DiesPerChannel <= 0:
		return cfgErr("dies_per_channel", "must be positive")
	case c.Planes <= 0:
		return cfgErr("planes", "must be positive")
	case c.PageSize < slotSize || c.PageSize%slotSize != 0:
		return cfgErr("page_size", "must be a positive multiple of 4KiB, got %d", c.PageSize)
	case c.CellBits != 3 && c.CellBits != 4:
		return cfgErr("cell_bits", "want 3 (TLC) or 4 (QLC), got %d", c.CellBits)
	case c.PagesPerBlock < c.CellBits:
		return cfgErr("pages_per_block", "must be at least %d, got %d", c.CellBits, c.PagesPerBlock)
	case c.BlocksPerDie <= 0:
		return cfgErr("blocks_per_die", "must be positive")
	case !(c.ChannelMBps > 0):
		return cfgErr("channel_mbps", "must be positive")
	case c.ReadTLC <= 0 || c.ReadSLC <= 0:
		return cfgErr("read_tlc/read_slc", "must be positive")
	case c.ProgramTLC <= 0 || c.ProgramSLC <= 0:
		return cfgErr("program_tlc/program_slc", "must be positive")
	case c.Erase <= 0:
		return cfgErr("erase", "must be positive")
	case c.ProgramSuspend < 0 || c.ProgramSuspend > c.ProgramTLC:
		return cfgErr("program_suspend", "must be within 0..program_tlc, got %v", c.ProgramSuspend)
	case c.EraseSuspend < 0 || c.EraseSuspend > c.Erase:
		return cfgErr("erase_suspend", "must be within 0..erase, got %v", c.EraseSuspend)
	case math.IsNaN(c.ReadRetry) || c.ReadRetry < 0 || c.ReadRetry > maxRetry:
		return cfgErr("read_retry", "must be within 0..%d, got %g", maxRetry, c.ReadRetry)
	case c.SLCCacheMax < 0 || c.SLCCacheMin < 0 || c.SLCCacheMin > c.SLCCacheMax:
		return cfgErr("slc_cache_min", "want 0 <= slc_cache_min <= slc_cache_max")
	case c.ConcurrentPrograms < 0:
		return cfgErr("concurrent_programs", "must not be negative, got %d", c.ConcurrentPrograms)
	case c.MapCache < 0:
		return cfgErr("map_cache", "must not be negative")
	case c.GCFreeBlocks < 2:
		return cfgErr("gc_free_blocks", "must be at least 2")
	case c.RatedTBW < 0:
		return cfgErr("rated_tbw", "must not be negative")
	}
	g := newGeometry(c)
	if g.slotsPerBlock > math.MaxInt32 || g.totalSlots >= 1<<40 {
		return cfgErr("blocks_per_die", "geometry too large")
	}
	if c.WriteBuffer < models.Bytes(g.groupBytes()) {
		return cfgErr("write_buffer", "must hold at least one page group (%d bytes)", g.groupBytes())
	}
	// Every die keeps GCFreeBlocks free blocks plus three open ones (host
	// TLC, host SLC, GC); the rest must hold the user data with some room
	// for garbage collection to work in.
	spare := int64(g.dies) * int64(c.GCFreeBlocks+3) * g.slotsPerBlock
	if g.totalSlots-spare <= g.userSlots {
		return cfgErr("blocks_per_die", "raw NAND (%d bytes) leaves no spare area for %d bytes of user capacity",
			g.totalSlots*slotSize, g.userSlots*slotSize)
	}
	return nil
}

// minScaledBlocks is the fewest blocks per die ScaleTo leaves: below a few
// hundred, the blocks each die must keep free and open for garbage
// collection become a noticeable part of the spare area and steady-state
// write amplification would no longer be the full-size drive's.
const minScaledBlocks = 256

// ScaleTo returns the configuration of the same drive with user capacity
// capacity: the same geometry per die (channels, dies, planes, page size)
// with proportionally fewer blocks, so that parallelism, latencies and the
// raw-to-user ratio stay what they are. The SLC cache and a DRAM-less
// drive's map cache scale in proportion.
// Use it to run tests and long simulations on small drives.
//
// When fewer than minScaledBlocks blocks per die would remain, blocks
// shrink instead (fewer pages per block, a multiple of CellBits so SLC
// mode still holds whole word lines) and the erase time shrinks in proportion, so that erase
// time per byte, program and read times, and the number of blocks garbage
// collection chooses from all stay representative.
func (c Config) ScaleTo(capacity int64) (Config, error) {
	if capacity <= 0 || c.Capacity <= 0 {
		return c, cfgErr("capacity", "cannot scale %d to %d", c.Capacity, capacity)
	}
	f := float64(capacity) / float64(c.Capacity)
	pages := float64(c.BlocksPerDie) * float64(c.PagesPerBlock) * f // pages per plane per die
	c.BlocksPerDie = int(math.Ceil(float64(c.BlocksPerDie) * f))
	bits := c.withDefaults().CellBits
	if c.BlocksPerDie < minScaledBlocks && c.PagesPerBlock > bits {
		ppb := max(bits, int(pages/minScaledBlocks)/bits*bits)
		if ppb < c.PagesPerBlock {
			c.Erase = time.Duration(float64(c.Erase) * float64(ppb) / float64(c.PagesPerBlock))
			// The erase's loops shrink with it, and so the wait for the
			// end of one: a read still gives up the same share of an erase.
			c.EraseSuspend = time.Duration(float64(c.EraseSuspend) * float64(ppb) / float64(c.PagesPerBlock))
			c.PagesPerBlock = ppb
			c.BlocksPerDie = int(math.Ceil(pages / float64(ppb)))
		}
	}
	c.SLCCacheMax = models.Bytes(math.Round(float64(c.SLCCacheMax) * f))
	c.SLCCacheMin = models.Bytes(math.Round(float64(c.SLCCacheMin) * f))
	c.MapCache = models.Bytes(math.Round(float64(c.MapCache) * f))
	c.Capacity = models.Bytes(capacity)
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("scaled to %d bytes: %w", capacity, err)
	}
	return c, nil
}

// Summary returns one line of the drive's datasheet figures for listings.
func (c Config) Summary() string {
	iface := "SATA 6Gb/s"
	if c.Interface == NVMe {
		iface = "NVMe PCIe Gen3 x4"
	}
	cache := "no SLC cache"
	if c.SLCCacheMax > 0 {
		cache = fmt.Sprintf("SLC cache %.0f GB", float64(c.SLCCacheMax)/1e9)
		if c.PostCacheWriteMBps > 0 {
			cache += fmt.Sprintf(", %.0f MB/s past it", c.PostCacheWriteMBps)
		}
	}
	cell := "TLC"
	if c.CellBits == 4 {
		cell = "QLC"
	}
	return fmt.Sprintf("%s %s SSD, %s, seq R/W %.0f/%.0f MB/s, 4K random R/W %.0fK/%.0fK IOPS, %s, %.0f TBW",
		formatCapacity(int64(c.Capacity)), cell, iface, c.SeqReadMBps, c.SeqWriteMBps,
		c.RandReadIOPS/1e3, c.RandWriteIOPS/1e3, cache, c.RatedTBW)
}

func formatCapacity(b int64) string {
	if b >= 1e12 {
		return fmt.Sprintf("%.3gTB", float64(b)/1e12)
	}
	return fmt.Sprintf("%.3gGB", float64(b)/1e9)
}
