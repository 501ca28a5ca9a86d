package catalog

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/nas"
)

// NIC is a group of identical network ports of a system.
type NIC struct {
	Kind  string // link kind as setups name it: 1gbe, 10gbe (10GBASE-T), ...
	Count int
	Name  string // the adapter, when it is a card
}

// System is a catalog NAS or server: the controller model's parameters
// with the datasheet figures, and what the box offers around it.
type System struct {
	Name    string // catalog key, e.g. "synology-ds1817"
	Product string // vendor and product as the datasheet names it
	Source  string // where the figures come from
	// NAS holds the controller model's configuration: CPU, RAM, buses;
	// its PCIeSlots are the system's expansion slots and NVMe connectors.
	NAS  nas.Config
	Bays int // drive bays (0: not stated)
	NICs []NIC
	// ControllerCache and ControllerWritePolicy describe a hardware RAID
	// controller's cache, for the array model; empty when there is none.
	ControllerCache       models.Bytes
	ControllerWritePolicy string
	PriceUSD              float64 // street (or launch) price where known; 0: unknown
	PriceDate             string  // when and where PriceUSD was seen, e.g. "2025-01, US street"
	// OS is the operating system the box ships with: dsm, qts,
	// quts-hero, adm, truenas, linux or windows; "" when not stated.
	OS    string
	Notes string // what is uncertain, and how the setup should use the entry
}

// New builds the system's controller over storage.
func (s System) New(storage models.Device) (*nas.Controller, error) {
	c, err := nas.New(s.NAS, storage)
	if err != nil {
		return nil, fmt.Errorf("system %s: %w", s.Name, err)
	}
	return c, nil
}

// Summary returns the system's key figures for listings.
func (s System) Summary() string {
	c := s.NAS.WithDefaults()
	var nics []string
	for _, n := range s.NICs {
		nics = append(nics, fmt.Sprintf("%d×%s", n.Count, n.Kind))
	}
	return fmt.Sprintf("%s, %d cores %.1f GHz, %v RAM, %d bays, %s", c.CPU.Name, c.CPU.Cores, c.CPU.GHz, c.RAM, s.Bays, strings.Join(nics, " + "))
}

// Systems returns every catalog system, sorted by name. Each call returns
// fresh values: callers may change them.
func Systems() []System {
	all := append([]System{ds1817(), rstServer001(), xeonServer002(), genericARM()}, products()...)
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all
}

// LookupSystem returns the catalog system called name.
func LookupSystem(name string) (System, error) {
	var names []string
	for _, s := range Systems() {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return System{}, fmt.Errorf("%w: unknown system %q (known: %s)", models.ErrConfig, name, strings.Join(names, ", "))
}

const usec = time.Microsecond

// ds1817 is review 003's NAS.
//
// Datasheet (Synology DS1817 data sheet and product specifications page,
// as remembered; verify against the PDF): Annapurna Labs Alpine AL-314,
// quad-core 1.7 GHz (ARM Cortex-A15), hardware encryption engine; 2 GB
// DDR3, expandable to 8 GB; 8 bays; 4 × 1GbE RJ-45 and 2 × 10GBASE-T;
// one PCIe 2.0 slot.
func ds1817() System {
	return System{
		Name:    "synology-ds1817",
		Product: "Synology DiskStation DS1817",
		Source: "Synology DS1817 datasheet (CPU, RAM, bays, ports, PCIe slot); review 003 (test bed). " +
			"Per-request and per-byte costs are estimates for a 1.7 GHz Cortex-A15 under DSM 6 (Linux 3.10), not measurements.",
		NAS: nas.Config{
			CPU: nas.CPU{
				Name:  "Annapurna Labs Alpine AL-314 (4× Cortex-A15)",
				Cores: 4,
				GHz:   1.7,
				// Linux VFS + ext4/Btrfs + page cache lookup at 1.7 GHz with
				// a 2-wide A15 is several times an x86 core's 3 µs.
				PerRequest:    12 * usec,
				PerIO:         15 * usec, // block layer, md RAID, AHCI, completion IRQ
				PerFileOp:     100 * usec,
				NetPerRequest: 25 * usec, // TCP/IP receive + send, IRQs, no TSO for small replies
				NetRate:       400e6,     // socket copies at ~1 GB/s DDR3 memcpy, skb handling
				CopyRate:      1e9,
				// Software AES-256-CBC (eCryptfs) runs ~38 cycles/byte on a
				// Cortex-A15 without ARMv8 crypto instructions: 45 MB/s/core.
				AESRate:          45e6,
				HasCryptoOffload: true,
				CryptoEngine:     true,
				// The Alpine's crypto engine rate is not published by
				// Synology; hundreds of MB/s is the class (uncertain).
				OffloadAESRate: 500e6,
				CryptoPerOp:    5 * usec, // per 4 KiB eCryptfs extent: IV (MD5), request setup, completion
			},
			RAM:               models.Bytes(2 << 30),
			OSReserved:        models.Bytes(640 << 20), // DSM services and kernel on a 2 GB unit
			CryptoDoubleCache: true,                    // DSM encrypts shared folders with eCryptfs
			// Review 003's encrypted 4 KiB random writes (49 IOPS on HDD
			// RAID 1, 2,154 on SSD RAID 1, against 815 and 12,222
			// unencrypted; large encrypted copies still ~103 MB/s) are the
			// signature of synchronous writes with flushes, not of CPU.
			// calibrated: nas.crypto_write_through (class: DSM 6 encrypted
			// shared folders) from rows s003-diskspd-smb-1g-iops-raid1-*enc-write
			// and s003-diskspd-smb-1g-mbps-raid1-*enc-write; class default off
			// (validate.Calibrations).
			CryptoWriteThrough: true,
			// DSM's volumes are ext4 or Btrfs, and its iSCSI LUNs are
			// files on them (thin or preallocated): data never written
			// reads as zeros without touching the drives.
			SparseFiles: true,
			DriveBus: nas.BusConfig{
				Name: "SoC SATA + PCIe 2.0 SATA controllers (assumed Gen2 x4 total)",
				Rate: models.Bytes(nas.PCIeRate(2, 4)), PortRate: models.Bytes(nas.SATA3),
			},
			PCIeSlots: []nas.PCIeSlot{{Name: "PCIe 2.0 x8 slot (x4 link)", Gen: 2, Lanes: 4}},
		},
		Bays:      8,
		NICs:      []NIC{{Kind: "1gbe", Count: 4}, {Kind: "10gbe", Count: 2, Name: "10GBASE-T"}},
		PriceUSD:  850, // approximate US launch price, from memory
		PriceDate: "2017, US launch",
		OS:        "dsm",
		Notes: "Uncertain: the PCIe slot's electrical width (x8 slot; believed x4 link), the crypto engine's rate, " +
			"how the 8 bays reach the SoC (assumed a shared Gen2 x4 cap), and the filesystem (Btrfs data checksums " +
			"are off here; set cpu.checksum_rate ~600MB to model them). Review 003 does not say whether its unit " +
			"had the stock 2 GB: with 2 GB about a third of the 4 GB diskspd file stays in the page cache after " +
			"diskspd writes it over SMB, which gives the RAID 5, SHR and JBOD HDD arrays' 0.9–1.6k random-read " +
			"IOPS but not the RAID 0/1/10 arrays' 5–7k. Over iSCSI diskspd creates the file with SetFileValidData " +
			"(nothing written), so the LUN's blocks are holes and the HDD arrays read at the SSD arrays' rate.",
	}
}

// rstServer001 is review 001's server.
func rstServer001() System {
	return System{
		Name:    "rst-server-001",
		Product: "Asus P8H67-M EVO + Intel Core i5-2500K, Windows Server 2012 R2, Intel RST",
		Source: "Review 001 (test bed); Intel ARK Core i5-2500K (4 cores, 3.3 GHz, AES-NI); Intel H67 " +
			"datasheet (SATA 3 Gb/s ports, DMI 2.0 x4); Intel I350-T2 product brief.",
		NAS: nas.Config{
			CPU: nas.CPU{
				Name:          "Intel Core i5-2500K (Sandy Bridge)",
				Cores:         4,
				GHz:           3.3,
				PerRequest:    3 * usec,
				PerIO:         6 * usec, // storport + RST RAID driver + completion
				PerFileOp:     40 * usec,
				NetPerRequest: 8 * usec,
				NetRate:       2e9,
				CopyRate:      5e9,
				AESRate:       200e6, // table-based AES-256, ~16 cycles/byte
				// AES-NI: XTS/CBC-decrypt ~1.5 cycles/byte at 3.3 GHz.
				HasCryptoOffload: true,
				OffloadAESRate:   2e9,
				CryptoPerOp:      usec,
			},
			// 8 GB installed, limited to 2 GB by a boot option (review 001).
			RAM:        models.Bytes(2 << 30),
			OSReserved: models.Bytes(768 << 20),
			// Windows' cache manager: the lazy writer runs every second and
			// writes 1/8 of the dirty pages; writers throttle at the dirty
			// page threshold (about half the cache; uncertain).
			DirtyRatio:           0.5,
			DirtyBackgroundRatio: 0.125,
			DirtyExpire:          time.Second,
			// The cache manager reads a sequential file ahead by twice
			// the caller's request (CcReadAhead's 2 x granularity), so
			// 256 KiB reads keep 512 KiB ahead (Linux's 128 KiB does not
			// apply to a Windows server).
			ReadAhead: models.Bytes(512 << 10),
			DriveBus: nas.BusConfig{
				Name: "Intel H67 SATA 3 Gb/s ports behind DMI 2.0",
				Rate: models.Bytes(nas.PCIeRate(2, 4)), PortRate: models.Bytes(nas.SATA2),
			},
			PCIeSlots: []nas.PCIeSlot{
				{Name: "PCIe 2.0 x16 (CPU)", Gen: 2, Lanes: 16},
				{Name: "PCIe 2.0 x16 slot, x4 link (chipset; uncertain)", Gen: 2, Lanes: 4},
			},
		},
		Bays: 6, // the H67's six SATA ports; the case is not described
		NICs: []NIC{{Kind: "1gbe", Count: 2, Name: "Intel I350-T2"}},
		Notes: "Tests ran locally (protocol local: set nas local: true) and over SMB Multichannel. " +
			"The board's slot layout is from memory. The 4 drives were on the chipset's 3 Gb/s ports.",
	}
}

// SAS3108FullPath is the least time the Broadcom (LSI) SAS3108
// RAID-on-chip (MegaRAID 9361, PERC H730, ServeRAID M5210, Intel RS3)
// spends on a command that takes the firmware's full path, not FastPath,
// as published figures of the family bound it. The chip has two PowerPC
// 476 cores at 1.2 GHz; FastPath runs its commands on the second core
// (Dell's PERC H710P and PERC 8 documentation) and reaches over 1M 4 KiB
// IOPS (Broadcom's figure for the chip), so a FastPath command costs that
// core at most 1 µs, 1,200 cycles. FastPath leaves out the cache and most of the
// firmware's instructions (Dell: "reduces the instruction count required
// to process a given IO"), and doubled an SSD array's IOPS on the
// previous generation's MegaRAID 9260-8i (SAS2108; Electronic Design,
// "Getting The Most Out Of SSD Arrays": "almost twice as fast"), an array
// that may itself have limited it: the full path costs at least twice
// FastPath's, 2 µs. Neither vendor publishes the full path's IOPS.
const SAS3108FullPath = 2 * time.Microsecond

// xeonServer002 is review 002's server.
func xeonServer002() System {
	var u2 []nas.PCIeSlot
	for i := 1; i <= 4; i++ {
		u2 = append(u2, nas.PCIeSlot{Name: fmt.Sprintf("U.2 bay %d (VROC, CPU PCIe 3.0 x4)", i), Gen: 3, Lanes: 4})
	}
	return System{
		Name:    "xeon-server-002",
		Product: "SL2500/2U825+G4, 2× Intel Xeon Silver 4210R, Windows Server 2019",
		Source: "Review 002 (test bed); Intel ARK Xeon Silver 4210R (10 cores, 2.4 GHz, AES-NI); " +
			"Broadcom MegaRAID 9361-8i product brief (PCIe 3.0 x8, SAS3 12 Gb/s, 1 GB DDR3 cache).",
		NAS: nas.Config{
			CPU: nas.CPU{
				Name:             "2× Intel Xeon Silver 4210R (Cascade Lake)",
				Cores:            20,
				GHz:              2.4,
				PerRequest:       3 * usec,
				PerIO:            WindowsFioPerIO(2.4),
				PerFileOp:        40 * usec,
				NetPerRequest:    8 * usec,
				NetRate:          2e9,
				CopyRate:         5e9,
				AESRate:          150e6,
				HasCryptoOffload: true,
				OffloadAESRate:   2e9,
				CryptoPerOp:      usec,
			},
			RAM:        models.Bytes(64 << 30),
			OSReserved: models.Bytes(4 << 30),
			DriveBus: nas.BusConfig{
				Name:     "Broadcom MegaRAID 9361-8i (SAS3108), SATA 6 Gb/s drives",
				Rate:     models.Bytes(nas.PCIeRate(3, 8)),
				PortRate: models.Bytes(nas.SATA3),
				// The RAID-on-chip's firmware handles every command of a RAID
				// volume. FastPath bypasses it only on a volume set to Direct
				// IO, write-through and no read-ahead, and then only for reads
				// no larger than a strip and for RAID 0 writes: writes to
				// RAID 1, 5 and 6 never take it (HPE MR Gen10 Plus controller
				// user guide, "FastPath"; MegaRAID firmware). Review 002's two
				// SATA RAID 1 pairs, Micron 5300 and Intel S4510, read 4 KiB
				// at QD256 at the same 132k IOPS (131,939 and 132,203), while
				// their datasheets differ: so the reads took the full path as
				// well (the review does not state the volume's policy), and
				// the ceiling is the controller's, 7.5 µs per command, 9,000
				// cycles of one of the chip's 1.2 GHz cores. What published
				// figures give for the family is a floor, SAS3108FullPath.
				// calibrated: nas.drive_bus.per_command (class: SAS3108
				// RAID-on-chip without FastPath) from rows
				// s002-ezfio-raid1-micron5300-rnd4kread-qd256 and
				// s002-ezfio-raid1-s4510-rnd4kread-qd256; class default
				// SAS3108FullPath, 2 µs (validate.Calibrations).
				PerCommand: 7500 * time.Nanosecond,
			},
			PCIeSlots: u2,
		},
		ControllerCache: models.Bytes(1 << 30),
		// The review does not say. Write-through: the 9361-8i ships without
		// a CacheVault module, MegaRAID falls back to write-through without
		// one, and Broadcom recommends write-through, no read-ahead for SSD
		// volumes. The measured random writes (19–27.5k IOPS on SATA RAID 1)
		// are at the drives' own sustained level, which fits.
		ControllerWritePolicy: "write-through",
		Notes: "fio ran on the server itself through ezFIO with direct I/O: set nas local: true and " +
			"direct_io: true. SATA drives sit on the 9361-8i; the NVMe drives on CPU lanes under Intel VROC " +
			"(one x4 link each, no shared cap). Bays and NICs are not stated.",
	}
}

// genericARM is a class profile, not a product: an entry-level 2-bay NAS
// with a dual-core ARM SoC and no crypto offload.
func genericARM() System {
	return System{
		Name:    "generic-arm-lowpower",
		Product: "Generic low-power 2-bay ARM NAS (class profile: dual Cortex-A9-class 1.2 GHz, no crypto offload)",
		Source: "Class profile built from typical entry-level NAS SoCs of the Cortex-A9 generation; " +
			"not a product, no single datasheet.",
		NAS: nas.Config{
			CPU: nas.CPU{
				Name:          "dual-core Cortex-A9-class 1.2 GHz",
				Cores:         2,
				GHz:           1.2,
				PerRequest:    25 * usec,
				PerIO:         30 * usec,
				PerFileOp:     200 * usec,
				NetPerRequest: 50 * usec,
				NetRate:       200e6,
				CopyRate:      600e6,
				AESRate:       20e6, // software AES-256, ~60 cycles/byte
				CryptoPerOp:   5 * usec,
			},
			RAM:               models.Bytes(512 << 20),
			OSReserved:        models.Bytes(192 << 20),
			CryptoDoubleCache: true,
			DriveBus:          nas.BusConfig{Name: "SoC SATA", PortRate: models.Bytes(nas.SATA3)},
		},
		Bays: 2,
		NICs: []NIC{{Kind: "1gbe", Count: 1}},
	}
}

// SingleSSDWriteCache reports whether a NAS OS creates a read-write SSD
// cache on one SSD. QNAP's QTS does (with a warning that the cache is
// not redundant); Synology's DSM requires two SSDs, mirrored, for a
// read-write cache, and so do the others here (QuTS hero's ZFS log and
// TrueNAS's likewise want mirrors; unknown systems are held to two).
func SingleSSDWriteCache(os string) bool { return os == "qts" }

// windowsFioIOCycles is the core time, in cycles, that one direct I/O
// costs the thread that issues it on Windows Server under fio's
// windowsaio engine, beyond the request's dispatch (nas.CPU.PerRequest):
// the overlapped ReadFile/WriteFile call down through the I/O manager,
// NTFS, the volume stack, storport and the miniport or RAID driver, and
// fio's completion handling. fio's windowsaio of that time (fio
// 3.16–3.22) issues its I/O from the job's thread and falls well short
// of diskspd's IOCP loop on the same drives (fio issues 935 and 1073 on
// GitHub), and a Windows thread issuing 4 KiB I/O is CPU-bound in these
// calls (diskspd issue 118). The thread runs the calls one at a time
// (nas: Controller.issue), so a thread issues at most GHz/cycles I/Os a
// second, whatever its queue depth.
//
// Derived from a public measurement outside the reference set, fio issue
// 935 (2020): fio windowsaio, 16 threads × QD16 of direct 4 KiB random
// reads from one file on a Samsung PM1725a (rated over 1M such reads a
// second; diskspd read nearly 600k from the same file) under Windows on
// an AMD EPYC 7702 (2.0 GHz base clock), reached 420–440k IOPS: 16 /
// 430k s = 37.2 µs a request per thread, 74,400 cycles at the base
// clock (the catalog states every CPU at its base clock), less the
// dispatch, 3 µs or 6,000 cycles: 68,400. The same issue found fio,
// diskspd and IOmeter close to one another on a Xeon Platinum, whose
// figures it does not give. Review 002's 16 × QD16 row on a Xeon Silver
// 4210R at 2.4 GHz (s002-ezfio-raid1-n640-rnd4kread-qd256, 492,893 IOPS
// from a RAID 1 pair whose drives could serve 800,000+) is a prediction
// of it: 16 / (28.5 + 3 µs) = 508k, +3 %. (It was once calibrated on that
// row at 70,800 cycles.)
const windowsFioIOCycles = 68_400

// WindowsFioPerIO returns windowsFioIOCycles at ghz as a duration: the
// nas.CPU.PerIO of a Windows server whose I/O a local fio issues.
func WindowsFioPerIO(ghz float64) time.Duration {
	return time.Duration(windowsFioIOCycles / ghz)
}
