package nas

import (
	"fmt"
	"time"

	"github.com/nasemu/nasemu/models"
)

// CPU describes the NAS processor and what the software running on it
// spends per request and per byte. Times are core time at the CPU's clock;
// rates are bytes per second that one core sustains.
type CPU struct {
	Name  string  `yaml:"name"`
	Cores int     `yaml:"cores"` // default 4
	GHz   float64 `yaml:"ghz"`   // the costs below are at this clock
	// Family is the core's micro-architecture class (see Family,
	// LookupFamily): when set, every cost left zero below is derived from
	// the family's published per-core figures at GHz.
	Family string `yaml:"family"`

	// PerRequest is charged for every block request: system call or
	// protocol daemon dispatch, VFS, filesystem lookup, page-cache lookup.
	PerRequest time.Duration `yaml:"per_request"`
	// PerIO is charged for every I/O issued to the storage: block layer,
	// software RAID, driver, completion interrupt.
	PerIO time.Duration `yaml:"per_io"`
	// PerFileOp is charged for every file operation (path lookup, inode and
	// directory work).
	PerFileOp time.Duration `yaml:"per_file_op"`
	// NetPerRequest is the network stack's cost to receive a request and
	// send its reply (interrupts, TCP/IP); not charged when Config.Local.
	NetPerRequest time.Duration `yaml:"net_per_request"`
	// NetRate is how many payload bytes per second a core moves through the
	// network stack (socket copies, checksums the NIC does not offload).
	NetRate models.Bytes `yaml:"net_rate"`
	// CopyRate is the rate of copying between the page cache and buffers.
	CopyRate models.Bytes `yaml:"copy_rate"`
	// ChecksumRate is the rate of data checksumming (Btrfs crc32c) when
	// data is read from or written to the storage; 0: no data checksums.
	ChecksumRate models.Bytes `yaml:"checksum_rate"`

	// AESRate is software AES (no offload) per core, in the cipher and key
	// size the encrypted folders use.
	AESRate models.Bytes `yaml:"aes_rate"`
	// HasCryptoOffload says AES runs at OffloadAESRate: on each core
	// (AES-NI, ARMv8 crypto extensions) or, with CryptoEngine, on one
	// engine shared by all cores.
	HasCryptoOffload bool         `yaml:"crypto_offload"`
	OffloadAESRate   models.Bytes `yaml:"offload_aes_rate"`
	CryptoEngine     bool         `yaml:"crypto_engine"`
	// CryptoPerOp is the core time per encrypted extent: IV derivation and
	// the cipher call; with an engine, building the request and taking its
	// completion.
	CryptoPerOp time.Duration `yaml:"crypto_per_op"`
}

// DefaultPerRequest is the default CPU.PerRequest: a ~3 GHz x86 core.
const DefaultPerRequest = 3 * time.Microsecond

// RelativeCost returns how many times longer than a ~3 GHz x86 core (the
// default) this CPU takes to handle a request: PerRequest over
// DefaultPerRequest. Layers whose costs are calibrated on x86 (the SMB
// server's per-request time in models/proto) scale them by it.
func (c CPU) RelativeCost() float64 {
	if c.PerRequest <= 0 {
		return 1
	}
	return float64(c.PerRequest) / float64(DefaultPerRequest)
}

// PCIeSlot is an expansion slot (or an M.2 / U.2 connector) and its link.
type PCIeSlot struct {
	Name  string `yaml:"name"`
	Gen   int    `yaml:"gen"`   // PCIe generation, 1–5
	Lanes int    `yaml:"lanes"` // electrical link width
}

// Bus returns the bandwidth cap of a card in the slot.
func (s PCIeSlot) Bus() BusConfig {
	return BusConfig{Name: s.Name, Rate: models.Bytes(PCIeRate(s.Gen, s.Lanes))}
}

// Config describes a NAS controller (or a server acting as one). The zero
// value of every field means its default; the catalog holds real systems.
type Config struct {
	CPU CPU `yaml:"cpu"`

	// RAM is the installed memory (default 4 GiB); OSReserved is what the
	// OS, services and caches other than the page cache keep (default
	// 512 MiB + RAM/16, at most half the RAM). The rest is page cache.
	RAM        models.Bytes `yaml:"ram"`
	OSReserved models.Bytes `yaml:"os_reserved"`
	// PageSize is the page cache's granularity: a power of two from 4 KiB
	// to 2 MiB (default 4 KiB, as in Linux and Windows).
	PageSize models.Bytes `yaml:"page_size"`
	// DirtyRatio and DirtyBackgroundRatio are fractions of the page cache
	// (Linux vm.dirty_ratio and vm.dirty_background_ratio, defaults 0.2 and
	// 0.1): above the background ratio dirty pages are written back in the
	// background; from halfway between the two on, writers are throttled to
	// the writeback's pace, hardest at DirtyRatio (throttle.go).
	DirtyRatio           float64 `yaml:"dirty_ratio"`
	DirtyBackgroundRatio float64 `yaml:"dirty_background_ratio"`
	// DirtyExpire: dirty data older than this is written back even below
	// the background ratio (vm.dirty_expire_centisecs; default 30 s).
	DirtyExpire time.Duration `yaml:"dirty_expire"`
	// WritebackDepth is how many writeback I/Os are kept in flight
	// (default 8); WritebackMax the largest one, merged from contiguous
	// dirty pages (default 1 MiB).
	WritebackDepth int          `yaml:"writeback_depth"`
	WritebackMax   models.Bytes `yaml:"writeback_max"`
	// ReadAhead is how far a sequential read stream reads ahead: the
	// block device's read_ahead_kb (default Linux's 128 KiB, or twice the
	// stripe of a striped md array below, as md sets it; see New).
	ReadAhead models.Bytes `yaml:"read_ahead"`

	// DirectIO: data requests bypass the page cache (fio direct=1, diskspd
	// -Sh, block iSCSI LUNs). Metadata still goes through it.
	DirectIO bool `yaml:"direct_io"`
	// WriteThrough: each data write is written to the storage before it
	// is acknowledged; the pages stay cached, clean, and reads still go
	// through the page cache. This is how a file server serves a remote
	// client that opens its file unbuffered and write-through (diskspd
	// -Sh, IOmeter, fio direct=1 on an SMB share or an iSCSI LUN): the
	// client's flags bypass the client's own cache, but the server (Samba,
	// a file-backed iSCSI LUN) reads and writes through its page cache,
	// honouring only the write-through flag (SMB2_WRITEFLAG_WRITE_THROUGH,
	// SCSI FUA). The storage's own write cache is not flushed. DirectIO
	// (the client on the machine itself) takes precedence.
	WriteThrough bool `yaml:"write_through"`
	// SparseFiles: the NAS's filesystem keeps file data that was never
	// written as holes or unwritten extents (ext4, Btrfs and XFS do, for
	// sparse files and for preallocated ones alike; an iSCSI LUN on a
	// Synology or QNAP volume is such a file): reading it returns zeros
	// without reading the storage. The controller tracks which parts of the
	// storage data has been written to, in granules of at least a page (a
	// bitmap of at most 4 MiB), and serves reads of parts never written
	// from memory. Off for a server whose clients read a raw volume.
	SparseFiles bool `yaml:"sparse_files"`
	// Local: the clients run on the machine itself (protocol local), so no
	// network stack costs are charged.
	Local bool `yaml:"local"`

	// Encrypted: the share is an encrypted folder; data is encrypted on
	// its way to the storage and decrypted on its way from it, in extents
	// of CryptoExtent bytes (default 4 KiB, eCryptfs's extent).
	Encrypted    bool         `yaml:"encrypted"`
	CryptoExtent models.Bytes `yaml:"crypto_extent"`
	// CryptoDoubleCache: encryption is a stacked filesystem (eCryptfs, as
	// on Synology DSM) whose ciphertext pages below and plaintext pages
	// above both sit in the page cache, halving it for encrypted data.
	CryptoDoubleCache bool `yaml:"crypto_double_cache"`
	// CryptoWriteThrough: each write to an encrypted share is encrypted,
	// written to the storage and followed by a flush of the storage before
	// it is acknowledged, instead of waiting in the page cache. Review 003
	// shows this on DSM's encrypted folders: 4 KiB random writes at 49 IOPS
	// on an HDD RAID 1 and 2,154 on an SSD RAID 1 (815 and 12,222
	// unencrypted), the pattern of synchronous writes with cache flushes,
	// not of CPU cost (large encrypted copies still ran at ~103 MB/s).
	CryptoWriteThrough bool `yaml:"crypto_write_through"`

	// MetadataArea is the region at the end of the storage where inodes,
	// directories and the journal live (default: 1 GiB or 1/16 of the
	// storage, whichever is smaller). File operations touch pages there.
	MetadataArea models.Bytes `yaml:"metadata_area"`
	// JournalInterval is how often metadata changes are committed to the
	// journal (default 5 s: ext4's commit interval); JournalPerOp the
	// journal bytes a create or remove adds (default 4 KiB).
	JournalInterval time.Duration `yaml:"journal_interval"`
	JournalPerOp    models.Bytes  `yaml:"journal_per_op"`

	// DriveBus is the SATA/SAS controller (or chipset link) the drive bays
	// hang on; PCIeSlots the expansion slots and M.2 connectors. The
	// controller does not use them itself: the setup wraps each drive in a
	// Port of the bus it sits on (see NewBus).
	DriveBus  BusConfig  `yaml:"drive_bus"`
	PCIeSlots []PCIeSlot `yaml:"pcie_slots"`

	// RAIDStack is the software that runs the array below, where its work
	// is the NAS CPU's: RAIDStackMD (Linux md: a RAID 5 or 6 array's
	// parity stripes are handled by one kernel thread per array, see
	// MDStripePage) or RAIDStackNone ("" is none: hardware RAID, Windows'
	// drivers, ZFS, whose stripe work is not modelled here). Setups fill it
	// from the system's OS.
	RAIDStack string `yaml:"raid_stack"`
}

// RAID stacks (Config.RAIDStack).
const (
	RAIDStackMD   = "md"
	RAIDStackNone = "none"
)

// MDStripePage is the work of Linux md's RAID 5/6 stripe thread (raid5d)
// per page (4 KiB) it reads or writes on a member, on the reference core:
// a write or trim of a parity array goes through the stripe cache, where
// raid5d runs each stripe's state machine — the reads of old data or
// parity of a partial stripe, the parity computation, the member writes —
// and issues and completes a bio per member page; reads of a healthy
// array bypass it. md runs every stripe of an array in that one thread
// unless group_thread_cnt is raised (default 0), so it caps a parity
// array's writes whatever the cores.
//
// Two published measurements, both of the thread itself, give about 2 µs
// per member page: md's maintainer of the time found the thread saturated
// by dispatch and completion alone at more than 450,000 member requests a
// second on a server core (S. Li, "raid5: make stripe handling
// multi-threading", linux-raid, 2012: 2.2 µs each), and measured
// sequential writes to a 9-disk RAID 5 capped by it at ~600 MB/s on an
// Atom (Linux commit 765d704db1f5, "raid5: only dispatch IO from raid5d
// for harddisk raid"): 9 member pages per 32 KiB of data, 6 µs each on a
// Silvermont core at 2.4 GHz (2.8 times the reference core's time,
// Family), 2 µs on the reference core. The NAS's cores scale it by
// CPU.RelativeCost.
const MDStripePage = 2 * time.Microsecond

// The reference core's costs (a ~3 GHz Skylake-class x86 core), the
// defaults of a CPU without a family.
const (
	defaultPerIO         = 5 * time.Microsecond
	defaultPerFileOp     = 30 * time.Microsecond
	defaultNetPerRequest = 8 * time.Microsecond
	defaultCryptoPerOp   = time.Microsecond
	defaultNetRate       = 2e9
	defaultCopyRate      = 4e9
)

// Defaults applied by WithDefaults.
const (
	DefaultRAM          = 4 << 30
	DefaultPageSize     = 4 << 10
	DefaultReadAhead    = 128 << 10
	DefaultWritebackMax = 1 << 20
)

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	cpu := &c.CPU
	if cpu.Name == "" {
		cpu.Name = "generic x86-64"
	}
	setInt(&cpu.Cores, 4)
	if cpu.GHz == 0 {
		cpu.GHz = 3.0
	}
	if f, err := LookupFamily(cpu.Family); err == nil {
		cpu.fromFamily(f) // an unknown family is Validate's error
	}
	setDur(&cpu.PerRequest, DefaultPerRequest)
	setDur(&cpu.PerIO, defaultPerIO)
	setDur(&cpu.PerFileOp, defaultPerFileOp)
	setDur(&cpu.NetPerRequest, defaultNetPerRequest)
	setBytes(&cpu.NetRate, defaultNetRate)
	setBytes(&cpu.CopyRate, defaultCopyRate)
	setBytes(&cpu.AESRate, 150e6)
	setBytes(&cpu.OffloadAESRate, 2e9)
	setDur(&cpu.CryptoPerOp, defaultCryptoPerOp)
	setBytes(&c.RAM, DefaultRAM)
	if c.OSReserved == 0 {
		c.OSReserved = min(c.RAM/2, 512<<20+c.RAM/16)
	}
	setBytes(&c.PageSize, DefaultPageSize)
	if c.DirtyRatio == 0 {
		c.DirtyRatio = 0.2
	}
	if c.DirtyBackgroundRatio == 0 {
		c.DirtyBackgroundRatio = 0.1
	}
	setDur(&c.DirtyExpire, 30*time.Second)
	setInt(&c.WritebackDepth, 8)
	setBytes(&c.WritebackMax, DefaultWritebackMax)
	setBytes(&c.ReadAhead, DefaultReadAhead)
	setBytes(&c.CryptoExtent, 4<<10)
	setDur(&c.JournalInterval, 5*time.Second)
	setBytes(&c.JournalPerOp, 4<<10)
	return c
}

func setInt(p *int, v int) {
	if *p == 0 {
		*p = v
	}
}

func setDur(p *time.Duration, v time.Duration) {
	if *p == 0 {
		*p = v
	}
}

func setBytes(p *models.Bytes, v models.Bytes) {
	if *p == 0 {
		*p = v
	}
}

// Validate reports the first impossible value of c (after defaults); the
// error wraps models.ErrConfig and names the key.
func (c Config) Validate() error {
	c = c.WithDefaults()
	bad := func(key, format string, args ...any) error {
		return fmt.Errorf("%w: nas.%s: %s", models.ErrConfig, key, fmt.Sprintf(format, args...))
	}
	cpu := c.CPU
	pow2 := func(b models.Bytes) bool { return b > 0 && b&(b-1) == 0 }
	switch {
	case cpu.Cores < 1 || cpu.Cores > 1024:
		return bad("cpu.cores", "%d is not in [1, 1024]", cpu.Cores)
	case cpu.GHz <= 0 || cpu.GHz > 10:
		return bad("cpu.ghz", "%g is not in (0, 10]", cpu.GHz)
	case cpu.PerRequest < 0 || cpu.PerIO < 0 || cpu.PerFileOp < 0 || cpu.NetPerRequest < 0 || cpu.CryptoPerOp < 0:
		return bad("cpu", "negative per-request cost")
	case cpu.NetRate < 0 || cpu.CopyRate < 0 || cpu.ChecksumRate < 0 || cpu.AESRate < 0 || cpu.OffloadAESRate < 0:
		return bad("cpu", "negative rate")
	case c.RAM < 64<<20:
		return bad("ram", "%v is less than 64 MiB", c.RAM)
	case c.OSReserved < 0 || c.OSReserved >= c.RAM || c.RAM-c.OSReserved < 4*c.PageSize:
		return bad("os_reserved", "%v leaves no page cache of %v RAM", c.OSReserved, c.RAM)
	case !pow2(c.PageSize) || c.PageSize < 4<<10 || c.PageSize > 2<<20:
		return bad("page_size", "%v is not a power of two from 4KiB to 2MiB", c.PageSize)
	case c.DirtyRatio <= 0 || c.DirtyRatio >= 1:
		return bad("dirty_ratio", "%g is not in (0, 1)", c.DirtyRatio)
	case c.DirtyBackgroundRatio <= 0 || c.DirtyBackgroundRatio > c.DirtyRatio:
		return bad("dirty_background_ratio", "%g is not in (0, dirty_ratio]", c.DirtyBackgroundRatio)
	case c.DirtyExpire < 0:
		return bad("dirty_expire", "negative")
	case c.WritebackDepth < 1 || c.WritebackDepth > 1024:
		return bad("writeback_depth", "%d is not in [1, 1024]", c.WritebackDepth)
	case c.WritebackMax < c.PageSize:
		return bad("writeback_max", "%v is smaller than a page", c.WritebackMax)
	case c.CPU.Family != "" && familyErr(c.CPU.Family) != nil:
		return familyErr(c.CPU.Family)
	case c.ReadAhead < 0:
		return bad("read_ahead", "negative")
	case c.RAIDStack != "" && c.RAIDStack != RAIDStackMD && c.RAIDStack != RAIDStackNone:
		return bad("raid_stack", "unknown %q (want %s or %s)", c.RAIDStack, RAIDStackMD, RAIDStackNone)
	case !pow2(c.CryptoExtent) || c.CryptoExtent < 512:
		return bad("crypto_extent", "%v is not a power of two of at least 512", c.CryptoExtent)
	case c.MetadataArea < 0:
		return bad("metadata_area", "negative")
	case c.JournalInterval < 0 || c.JournalPerOp < 0:
		return bad("journal", "negative")
	}
	if err := c.DriveBus.validate("nas.drive_bus"); err != nil {
		return err
	}
	for i, s := range c.PCIeSlots {
		if s.Gen < 1 || s.Gen > 5 || s.Lanes < 1 || s.Lanes > 16 {
			return bad(fmt.Sprintf("pcie_slots[%d]", i), "gen %d x%d: want gen 1–5 and 1–16 lanes", s.Gen, s.Lanes)
		}
	}
	return nil
}

// PageCacheBytes returns the memory the page cache has: RAM less what the
// OS keeps.
func (c Config) PageCacheBytes() int64 {
	c = c.WithDefaults()
	return int64(c.RAM - c.OSReserved)
}

// familyErr returns LookupFamily's error for name, or nil.
func familyErr(name string) error {
	_, err := LookupFamily(name)
	return err
}
