package catalog

import (
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/ssd"
)

// SSD catalog.
//
// Datasheet figures (capacity, sequential MB/s, 4 KiB random IOPS, TBW)
// are the vendor's; each entry says where they come from and under which
// conditions the vendor measured them. PostCacheWriteMBps is the
// published sequential write rate once the SLC cache is full (the
// vendor's where it states one, as Samsung does, else a review's), the
// figure the issue of SLC-cached drives turns on; none is set from a
// model run. Everything else — NAND geometry,
// page size, tR/tPROG/tBERS in SLC and TLC mode, channel rate, controller
// overhead and command rate, SLC cache policy — no datasheet gives. Those
// are the NAND class's (below), so that the datasheet figures follow from
// the physics:
//
//	sequential write (SLC cache) = dies x page group / (channel transfer + tPROG SLC)
//	post-cache write / full-span FOB random write = dies x page group / (channel transfer + tPROG TLC)
//	random read = dies / (tR + 4 KiB channel transfer), up to the controller's command rate
//	sequential read = min(channels x channel rate, host link)
//
// capped by the host link (NVMe Gen3 x4: 3.5 GB/s to the host, 3.2 GB/s
// from it; SATA: 560 MB/s shared). Enterprise random write is the
// steady-state figure after preconditioning, and follows from the NAND
// program bandwidth divided by the write amplification that greedy
// garbage collection reaches at the drive's raw-to-user ratio.
//
// NAND classes used below:
//
//   - 64-layer TLC, 256 Gb (32 GiB) die, 4 planes x 16 KiB pages, 768
//     pages per block (48 MiB multi-plane blocks, 682 per die): tR 60 µs
//     TLC / 34 µs SLC, tPROG per 4-plane page group 630 µs TLC (a third of
//     a ~1.9 ms one-shot program of three pages) / 246 µs SLC, tBERS 3.5 ms.
//   - 96-layer TLC, 512 Gb (64 GiB) die, 4 planes x 16 KiB pages, 1152
//     pages per block (72 MiB blocks, 910 per die): tR 55 µs TLC / 30 µs
//     SLC, tPROG 600 µs TLC / 230 µs SLC, tBERS 3.5 ms.
//   - 64-layer TLC, 512 Gb die, 2 planes x 16 KiB (SATA client drives).
//
//   - Samsung 9x-layer (V5) 256 Gb TLC, 2 planes x 16 KiB, 1152 pages per
//     block: a class calibrated on the 970 EVO Plus 1TB and 250GB rows of
//     Samsung's data sheet and checked on the other capacities (see
//     vnand5TLC).
//   - Samsung 9x-layer (V5) 1 Tb QLC, 2 planes x 16 KiB: calibrated on the
//     870 QVO 1TB row, checked on the 2TB (see vnand5QLC); behind the MKX
//     controller, which programs at most 16 page groups at once
//     (mkxPrograms), so that the 4TB writes no faster than the 2TB past
//     the cache.
//
// Channel rates are Toggle/ONFI bus rates of those generations (667–800
// MT/s, one byte per transfer).
//
// Prices are approximate US street prices of the new drive in the month
// given, as recalled from retailer listings of that time (not re-checked
// against an archive): good to about ±20 %, enough to rank configurations
// by cost, not to quote.

const (
	us = time.Microsecond
	ms = time.Millisecond
)

// retryBOL is the mean read-retry steps per NAND read of 3D TLC and QLC at
// beginning of life (ssd.Config.ReadRetry), a class-level calibration of
// all 3D NAND drives: 0.2 % of reads need one step. Set from the published
// QD1 4 KiB random-read tails of flash SSDs, not from any one drive's
// figure: AnandTech's enterprise roundup (2018, "4kB Random Read QD1
// QoS") finds every flash SSD's 99.99th percentile within 2.5 times its
// mean, and with this rate a retried read (one more tR and transfer) sits
// at the 99.9th percentile, 1.5–2 times the median.
const retryBOL = 0.002

// nand64L256 returns the geometry and timings of the 64-layer 256 Gb class.
// Its TLC program time is a plane's 16 KiB in 630 µs, 26 MB/s a plane:
// within 9 % of the 28 MB/s a plane that Samsung's data sheet rates of its
// 9x-layer TLC after TurboWrite give (vnand5TLC), an independent check of
// the class, which no datasheet figure of these drives set.
func nand64L256(c ssd.Config) ssd.Config {
	c.ReadRetry = retryBOL
	c.Planes, c.PageSize, c.PagesPerBlock, c.BlocksPerDie = 4, 16<<10, 768, 682
	c.ReadTLC, c.ReadSLC = 60*us, 34*us
	c.ProgramTLC, c.ProgramSLC, c.Erase = 630*us, 246*us, 3500*us
	return c
}

// nand96L512 returns the geometry and timings of the 96-layer 512 Gb class.
func nand96L512(c ssd.Config) ssd.Config {
	c.ReadRetry = retryBOL
	c.Planes, c.PageSize, c.PagesPerBlock, c.BlocksPerDie = 4, 16<<10, 1152, 910
	c.ReadTLC, c.ReadSLC = 55*us, 30*us
	c.ProgramTLC, c.ProgramSLC, c.Erase = 600*us, 230*us, 3500*us
	return c
}

// Program and erase suspend (ssd.Config.ProgramSuspend, EraseSuspend).
// A die suspends a program or an erase at the end of its current
// pulse-verify loop (incremental step pulse programming and erasing; G. Wu
// and X. He, "Reducing SSD Read Latency via NAND Flash Program and Erase
// Suspension", FAST 2012), so a read waits on average half a loop:
//
//	program suspend = tPROG / (2 x tlcProgramLoops)
//	erase suspend   = tBERS / (2 x eraseLoops)
//
// A TLC program places eight threshold-voltage levels over a window of
// about 6 V in steps of about 0.25 V: some 24 pulse-verify loops (the
// incremental-step arithmetic of R. Micheloni et al., "Inside NAND Flash
// Memories", Springer 2010). An erase is a few long pulses, each verified
// (incremental step pulse erasing, whose loop ends are the safe points
// B. Kim, G. Seo and M. Kim's "SSR: Smart Suspend/Resume Technique for
// High Capacity 3D NAND Flash", J. KICS 50(9), 2025, start from), taken
// here as 4: this class's estimate, not a published count. Neither count
// is set from a drive's measured figure; the erase's matters little, for
// erases hold a die a few tenths of a per cent of its time.
const (
	tlcProgramLoops = 24
	eraseLoops      = 4
)

// datacenterNVMe gives a drive of the class "enterprise/datacenter NVMe
// TLC SSD" its class's suspend: such controllers suspend both programs and
// erases for host reads, which is how they keep read latency low under
// mixed load (Intel's patent application "Method, system, and apparatus
// for multi-tiered progressive memory program operation suspend and
// resume" describes the datacenter drives' program suspend; MQSim models
// program and erase suspend as a NAND controller feature, FAST 2018). Client
// and SATA drives here keep the drive model's default, no suspend: their
// data sheets and documentation say nothing of it. Call it after the
// NAND class has set tPROG and tBERS.
func datacenterNVMe(c ssd.Config) ssd.Config {
	c.ProgramSuspend = c.ProgramTLC / (2 * tlcProgramLoops)
	c.EraseSuspend = c.Erase / (2 * eraseLoops)
	return c
}

// Enterprise TLC program time. Enterprise firmware programs TLC with
// tighter threshold-voltage distributions than client firmware (smaller
// program steps, more verify loops, for data retention at the end of the
// rated endurance), so its program time is its NAND family's, not the
// client class's (nand64L256, nand96L512). No NAND data sheet of these
// dies is public; each family's time is set from one drive's data sheet
// and predicts the family's other drives:
//
//   - imftEnterpriseTLC: the Intel/Micron (IMFT) floating-gate TLC,
//     programmed in two passes (coarse and fine), 64 and 96 layers alike:
//     set from the Intel D3-S4510 960GB's 36K steady-state random writes
//     (16 dies at write amplification ~4.1: 444 µs of die time per write,
//     a 4-plane page group in 1.51 ms); the Micron 5300 PRO's 31K is a
//     prediction (the datasheet test).
//   - bicsEnterpriseTLC: the Kioxia/WD BiCS charge-trap TLC: set from the
//     WD Ultrastar DC SN640 1.92TB's 2000 MB/s sequential write (32 dies x
//     64 KiB / 2.0 GB/s = 1049 µs a page group, less the 82 µs transfer);
//     the Kingston DC500M's 58K steady-state random writes are a
//     prediction.
//
// calibrated: catalog.imft_enterprise_tlc (class: IMFT floating-gate TLC
// under enterprise firmware) from the D3-S4510's data-sheet random-write
// row; catalog.bics_enterprise_tlc (class: BiCS charge-trap TLC under
// enterprise firmware) from the DC SN640's data-sheet sequential-write
// row. Neither is a reference (review) row.
const (
	imftEnterpriseTLC = 1510 * us
	bicsEnterpriseTLC = 967 * us
)

const sn700Source = "WD Red SN700 NVMe SSD product brief / spec table (sequential 128 KiB, random 4 KiB QD32 x 8 threads, fresh out of box; TBW over 5 years)"

// sn700 is the WD Red SN700 family: WD in-house NVMe Gen3 x4 controller
// with DRAM, TLC NAND, dynamic SLC cache ("nCache"). The controller admits
// about 520K commands/s, which caps random IOPS of the 1 TB and larger
// models (their NAND could do more); smaller models are NAND-limited. The
// SLC cache is about 1.2 % of capacity on an empty drive, a third of that
// when full (vendor does not publish it; reviews of the SN750 family show
// caches of this order).
func sn700(capacity, cache float64, seqR, seqW, rr, rw, tbw float64) ssd.Config {
	return ssd.Config{
		Capacity: models.Bytes(capacity), Interface: ssd.NVMe,
		CommandOverhead: 8 * us, ControllerIOPS: 520e3,
		SLCCacheMax: models.Bytes(cache), SLCCacheMin: models.Bytes(cache / 3),
		RatedTBW:    tbw,
		SeqReadMBps: seqR, SeqWriteMBps: seqW, RandReadIOPS: rr, RandWriteIOPS: rw,
	}
}

var ssdDrives = []Drive{
	{
		Name: "wd-red-sn700-250g", Product: "WD Red SN700 250GB (WDS250G1R0C)", Source: sn700Source,
		Price: price(55, "2022-06"),
		// 8 x 256 Gb dies (256 GiB raw) on 4 channels at 800 MB/s.
		// Seq write in SLC: 8 x 64 KiB / (82 + 246 µs) = 1.6 GB/s.
		// FOB random write past the cache, TLC: 8 x 64 KiB / (82 + 630 µs)
		// = 736 MB/s = 180K IOPS. Random read of freshly written (SLC)
		// data: 8 / (34 + 5 µs) = 205K IOPS. Seq read: 4 x 800 MB/s.
		SSD: ptr(nand64L256(withBus(sn700(250e9, 3e9, 3100, 1600, 200e3, 180e3, 500), 4, 2, 800))),
	},
	{
		Name: "wd-red-sn700-500g", Product: "WD Red SN700 500GB (WDS500G1R0C)", Source: sn700Source,
		Price: price(75, "2022-06"),
		// 16 x 256 Gb dies (512 GiB raw) on 8 channels at 800 MB/s: the
		// 250GB's NAND on twice the dies. Its random figures (410K read,
		// 380K full-span write) follow; its 2.6 GB/s sequential write does
		// not: 16 dies programming SLC pages as the 250GB's do carry 3.2
		// GB/s, which the link caps at 3.15 (the datasheet test lists it as
		// a known deviation; the data sheet does not say what limits it).
		SSD: ptr(nand64L256(withBus(sn700(500e9, 6e9, 3430, 2600, 410e3, 380e3, 1000), 8, 2, 800))),
	},
	{
		Name: "wd-red-sn700-1t", Product: "WD Red SN700 1TB (WDS100T1R0C)", Source: sn700Source,
		Price: price(110, "2022-06"),
		// 32 x 256 Gb dies (1 TiB raw) on 8 channels at 800 MB/s: the
		// host link and the controller's command rate are the limits.
		SSD: ptr(nand64L256(withBus(sn700(1e12, 12e9, 3430, 3000, 515e3, 560e3, 2000), 8, 4, 800))),
	},
	{
		Name: "wd-red-sn700-2t", Product: "WD Red SN700 2TB (WDS200T1R0C)", Source: sn700Source,
		Price: price(230, "2022-06"),
		// 32 x 512 Gb dies (2 TiB raw) on 8 channels at 800 MB/s.
		SSD: ptr(nand96L512(withBus(sn700(2e12, 24e9, 3400, 2900, 480e3, 540e3, 2500), 8, 4, 800))),
	},
	{
		Name: "wd-red-sn700-4t", Product: "WD Red SN700 4TB (WDS400T1R0C)", Source: sn700Source,
		Price: price(480, "2022-06"),
		// 64 x 512 Gb dies (4 TiB raw) on 8 channels at 800 MB/s.
		SSD: ptr(nand96L512(withBus(sn700(4e12, 48e9, 3400, 3100, 550e3, 520e3, 5100), 8, 8, 800))),
	},
	{
		Name: "kingston-suv500-240g", Product: "Kingston UV500 240GB (SUV500/240G)",
		Price:  price(45, "2019-06"),
		Source: "Kingston UV500 datasheet (up to 520/500 MB/s, 79K/50K IOPS 4K random, fresh out of box, IOMeter QD32; 100 TBW)",
		// Marvell 88SS1074 4-channel SATA controller with DRAM, 64-layer
		// 512 Gb TLC dies with 2 planes: 4 dies (256 GiB raw), one per
		// channel at 800 MB/s; dynamic SLC cache of a few GB. Seq write in
		// SLC: 4 x 32 KiB / (41 + 221 µs) = 500 MB/s. FOB random write past
		// the cache, TLC: 4 x 32 KiB / (41 + 600 µs) = 204 MB/s = 50K IOPS.
		// Random read: the controller's ~80K commands/s (its NAND could
		// serve 4 / (35 + 5 µs) = 100K). Seq read: the SATA link.
		SSD: &ssd.Config{
			Capacity: 240e9, Interface: ssd.SATA,
			CommandOverhead: 20 * us, ControllerIOPS: 80e3,
			Channels: 4, DiesPerChannel: 1, ChannelMBps: 800,
			Planes: 2, PageSize: 16 << 10, PagesPerBlock: 768, BlocksPerDie: 2730,
			ReadTLC: 60 * us, ReadSLC: 35 * us, ProgramTLC: 600 * us, ProgramSLC: 221 * us, Erase: 3500 * us,
			SLCCacheMax: 3e9, SLCCacheMin: 1e9, ReadRetry: retryBOL,
			RatedTBW:    100,
			SeqReadMBps: 520, SeqWriteMBps: 500, RandReadIOPS: 79e3, RandWriteIOPS: 50e3,
		},
	},
	{
		Name: "kingston-dc500m-480g", Product: "Kingston DC500M 480GB (SEDC500M/480G)",
		Price:  price(110, "2020-06"),
		Source: "Kingston DC500 series datasheet (seq 555/520 MB/s; steady-state 4K random 98K/58K IOPS, QD32 after preconditioning; 1139 TBW = 1.3 DWPD x 5 years)",
		// Phison PS3112-S12DC 8-channel enterprise SATA controller, 64-layer
		// 256 Gb TLC: 16 dies (512 GiB raw, raw/user 1.145), no SLC cache
		// (all writes TLC, power-loss protected DRAM buffer). Kingston does
		// not name the NAND; it takes the charge-trap (BiCS) family's
		// enterprise program time, 967 µs a page group
		// (bicsEnterpriseTLC), not one set from this drive's figures.
		// Steady-state random write is then a prediction: greedy GC's write
		// amplification at 1.145 (about 4.1) costs each host 4 KiB 4.1/16
		// page-group programs of a die plus 3.1 relocation reads. Seq write
		// is the SATA link (NAND: 16 x 64 KiB / 1.05 ms = 1.0 GB/s).
		// Random read: the controller's ~100K commands/s over NCQ.
		SSD: ptr(func() ssd.Config {
			c := nand64L256(ssd.Config{
				Capacity: 480e9, Interface: ssd.SATA,
				CommandOverhead: 20 * us, ControllerIOPS: 100e3,
				Channels: 8, DiesPerChannel: 2, ChannelMBps: 667,
				RatedTBW:    1139,
				SeqReadMBps: 555, SeqWriteMBps: 520, RandReadIOPS: 98e3, RandWriteIOPS: 58e3, PostCacheWriteMBps: 520,
			})
			c.ProgramTLC = bicsEnterpriseTLC
			return c
		}()),
	},
	{
		Name: "micron-5300-960g", Product: "Micron 5300 PRO 960GB (MTFDDAK960TDS)",
		Price:  price(200, "2021-06"),
		Source: "Micron 5300 SSD product brief (seq 128 KiB 540/520 MB/s; steady-state 4K random 95K/31K IOPS, QD32; endurance 1.5 DWPD x 5 years = 2628 TB)",
		// Marvell 8-channel SATA controller, Micron 96-layer 512 Gb TLC:
		// 16 dies (1 TiB raw, raw/user 1.145), no SLC cache in steady
		// state. Micron's 96-layer TLC is the IMFT floating-gate cell
		// programmed in two passes, as the D3-S4510's 64-layer is: it takes
		// that family's enterprise program time (imftEnterpriseTLC,
		// 1.51 ms a 4-plane page group), so its 31K steady-state random
		// writes are a prediction. Seq write: the SATA link (NAND:
		// 16 x 64 KiB / 1.61 ms = 650 MB/s).
		SSD: ptr(func() ssd.Config {
			c := nand96L512(ssd.Config{
				Capacity: 960e9, Interface: ssd.SATA,
				CommandOverhead: 20 * us, ControllerIOPS: 100e3,
				Channels: 8, DiesPerChannel: 2, ChannelMBps: 667,
				RatedTBW:    2628,
				SeqReadMBps: 540, SeqWriteMBps: 520, RandReadIOPS: 95e3, RandWriteIOPS: 31e3, PostCacheWriteMBps: 520,
			})
			c.ProgramTLC = imftEnterpriseTLC
			return c
		}()),
	},
	{
		Name: "intel-s4510-960g", Product: "Intel SSD D3-S4510 960GB (SSDSC2KB960G8)",
		Price:  price(240, "2020-06"),
		Source: "Intel SSD D3-S4510 product specification (seq 560/510 MB/s; 4K random 95K/36K IOPS, QD32, full LBA span, steady state; 3.4 PBW)",
		// Intel 8-channel SATA controller, IMFT 64-layer 512 Gb TLC: 16
		// dies (1 TiB raw, raw/user 1.145), no SLC cache. Its 36K
		// steady-state random writes set the IMFT family's enterprise
		// program time (imftEnterpriseTLC, 1.51 ms a page group). Seq write
		// is the SATA link (NAND: 16 x 64 KiB / 1.61 ms = 650 MB/s).
		SSD: ptr(func() ssd.Config {
			c := nand64L256(ssd.Config{
				Capacity: 960e9, Interface: ssd.SATA,
				CommandOverhead: 20 * us, ControllerIOPS: 100e3,
				Channels: 8, DiesPerChannel: 2, ChannelMBps: 667,
				RatedTBW:    3400,
				SeqReadMBps: 560, SeqWriteMBps: 510, RandReadIOPS: 95e3, RandWriteIOPS: 36e3, PostCacheWriteMBps: 510,
			})
			c.ProgramTLC = imftEnterpriseTLC
			c.BlocksPerDie = 1364 // 512 Gb die
			return c
		}()),
	},
	{
		Name: "wd-ultrastar-sn640-1.92t", Product: "WD Ultrastar DC SN640 1.92TB U.2 (WUS4BB019D7P3E3)",
		Price:  price(380, "2021-06"),
		Source: "WD Ultrastar DC SN640 data sheet (0.8 DWPD model; seq 128 KiB 3330/2000 MB/s; 4K random 428K/55K IOPS, steady state after preconditioning; 2803 TB written = 0.8 DWPD x 5 years)",
		// WD enterprise NVMe Gen3 x4 controller, 96-layer 512 Gb TLC: 32
		// dies (2 TiB raw) on 8 channels at 800 MB/s, no SLC cache. Its seq
		// write is the NAND and sets the BiCS family's enterprise program
		// time (bicsEnterpriseTLC): 32 x 64 KiB / 2.0 GB/s = 1049 µs per
		// page group, less 82 µs transfer: tPROG 967 µs. Of the 910 blocks per
		// die, 850 hold data: the rest are the die-parity stripe (RAIN,
		// 1/32), grown-bad-block spares and firmware areas, so raw/user is
		// 1.07, whose write amplification (~7.8) at that program time gives
		// the 55K steady-state IOPS. Random read: 32 / (55 + 5 µs) = 530K
		// from the NAND, capped by the controller's ~430K commands/s.
		// Sequential read is the controller's too: the data sheet's
		// 3330 MB/s (LinkMBps), below what the NAND (8 x 800 MB/s) and
		// the Gen3 x4 link (3.5 GB/s of payload) carry.
		// Reads suspend programs and erases, as the datacenter NVMe class
		// does (datacenterNVMe): 967 µs / 48 = 20 µs to the next safe
		// point of a program, 3.5 ms / 8 = 437 µs of an erase. Sharing
		// the dies' time, the data sheet's figures then put a 70/30 mix
		// of 4 KiB reads and writes at 1/(0.7/428K + 0.3/55K) = 141K
		// IOPS, and a RAID 1 pair (each drive reading half and writing
		// all) at 1/(0.35/428K + 0.3/55K) = 159K. A drive whose reads
		// waited ~1 ms behind every program could not get there at any
		// queue depth.
		SSD: ptr(func() ssd.Config {
			c := nand96L512(ssd.Config{
				Capacity: 1.92e12, Interface: ssd.NVMe,
				CommandOverhead: 10 * us, ControllerIOPS: 430e3, LinkMBps: 3330,
				Channels: 8, DiesPerChannel: 4, ChannelMBps: 800,
				RatedTBW:    2803,
				SeqReadMBps: 3330, SeqWriteMBps: 2000, RandReadIOPS: 428e3, RandWriteIOPS: 55e3, PostCacheWriteMBps: 2000,
			})
			c.ProgramTLC = bicsEnterpriseTLC
			c.BlocksPerDie = 850
			return datacenterNVMe(c)
		}()),
	},
	{
		Name: "samsung-970-evo-plus-250g", Product: "Samsung 970 EVO Plus 250GB (MZ-V7S250)", Source: evoPlusSource,
		Price: price(50, "2021-06"),
		// 8 dies, one per channel; TurboWrite 13 GB (4 static), 400 MB/s after.
		SSD: ptr(vnand5TLC(250e9, 4e9, 13e9, 1, 2300, 250e3, 550e3, 400, 150)),
	},
	{
		Name: "samsung-970-evo-plus-500g", Product: "Samsung 970 EVO Plus 500GB (MZ-V7S500)", Source: evoPlusSource,
		Price: price(70, "2021-06"),
		// 16 dies; TurboWrite 22 GB (4 static), 900 MB/s after.
		SSD: ptr(vnand5TLC(500e9, 4e9, 22e9, 2, 3200, 480e3, 550e3, 900, 300)),
	},
	{
		Name: "samsung-970-evo-plus-1t", Product: "Samsung 970 EVO Plus 1TB (MZ-V7S1T0)", Source: evoPlusSource,
		Price: price(100, "2021-06"),
		// 32 dies; TurboWrite 42 GB (6 static), 1700 MB/s after.
		SSD: ptr(vnand5TLC(1e12, 6e9, 42e9, 4, 3300, 600e3, 550e3, 1700, 600)),
	},
	{
		Name: "samsung-870-qvo-1t", Product: "Samsung 870 QVO 1TB (MZ-77Q1T0)", Source: qvoSource,
		Price: price(90, "2022-06"),
		// 8 QLC dies, one per channel; TurboWrite 42 GB (6 static),
		// 80 MB/s after.
		SSD: ptr(vnand5QLC(1e12, 6e9, 42e9, 1, 80, 360)),
	},
	{
		Name: "samsung-870-qvo-2t", Product: "Samsung 870 QVO 2TB (MZ-77Q2T0)", Source: qvoSource,
		Price: price(170, "2022-06"),
		// 16 QLC dies; TurboWrite 78 GB (6 static), 160 MB/s after.
		SSD: ptr(vnand5QLC(2e12, 6e9, 78e9, 2, 160, 720)),
	},
	{
		Name: "samsung-870-qvo-4t", Product: "Samsung 870 QVO 4TB (MZ-77Q4T0)", Source: qvoSource,
		Price: price(330, "2022-06"),
		// 32 QLC dies, four per channel; TurboWrite 78 GB (6 static),
		// 160 MB/s after.
		SSD: ptr(vnand5QLC(4e12, 6e9, 78e9, 4, 160, 1440)),
	},
}

// recalled is the source of every street price below.
const recalled = "approximate US street price, as recalled from retailer listings of that month"

func price(usd float64, date string) StreetPrice {
	return StreetPrice{USD: usd, Date: date, Source: recalled}
}

// vnand5TLC is Samsung's 9x-layer 256 Gb TLC die (V-NAND V5, 2 planes x
// 16 KiB pages, 1152 pages per block) behind its Phoenix 8-channel NVMe
// controller with DRAM. It is a class calibrated on two rows of the 970
// EVO Plus data sheet (Samsung, rev. 2019) and checked on the others:
//
//   - TLC program: the 1TB's 1700 MB/s after TurboWrite from 32 dies is
//     53.1 MB/s a die, a 32 KiB page group every 617 µs, less the 41 µs
//     channel transfer: 576 µs. The 250GB (8 dies: 425 MB/s, sheet 400)
//     and 500GB (16 dies: 850, sheet 900) follow.
//   - SLC program: the 250GB's 2300 MB/s within TurboWrite from 8 dies is
//     287 MB/s a die, 114 µs a page group: 73 µs of program. The larger
//     models reach the host link.
//   - SLC read: the 250GB's 250K random reads of data in TurboWrite from 8
//     dies is 32 µs a read a die, less the 5 µs transfer: 27 µs. The 500GB
//     (16 dies: 500K, sheet 480K) follows; the 1TB's 600K is the
//     controller's command rate (also set from that row).
//
// TLC tR (60 µs), erase and block size are the 3D TLC class values above.
func vnand5TLC(capacity, static, cache float64, diesPerChannel int, seqW, rr, rw, post, tbw float64) ssd.Config {
	return ssd.Config{
		Capacity: models.Bytes(capacity), Interface: ssd.NVMe,
		CommandOverhead: 8 * us, ControllerIOPS: 600e3,
		Channels: 8, DiesPerChannel: diesPerChannel, ChannelMBps: 800,
		Planes: 2, PageSize: 16 << 10, PagesPerBlock: 1152, BlocksPerDie: 910,
		ReadTLC: 60 * us, ReadSLC: 27 * us, ProgramTLC: 576 * us, ProgramSLC: 73 * us, Erase: 3500 * us,
		ReadRetry:   retryBOL,
		SLCCacheMax: models.Bytes(cache), SLCCacheMin: models.Bytes(static),
		RatedTBW:    tbw,
		SeqReadMBps: 3500, SeqWriteMBps: seqW, RandReadIOPS: rr, RandWriteIOPS: rw, RandWriteInCache: true,
		PostCacheWriteMBps: post,
	}
}

// mkxPrograms is the most page-group programs Samsung's MKX 8-channel
// SATA controller (870 QVO, 870 EVO) keeps running at once
// (ssd.Config.ConcurrentPrograms): two per channel. The 870 QVO data
// sheet gives 80 MB/s after TurboWrite for the 1TB (8 dies) and 160 MB/s
// for the 2TB, 4TB and 8TB (16, 32 and 64 dies): at the V5 QLC class's
// program time (set from the 1TB row, vnand5QLC), 160 MB/s is 160 MB/s x
// (41 µs + 3.24 ms) / 32 KiB = 16.0 page groups programming at once, and
// the 2TB's 16 dies already reach it. AnandTech's 8TB review ("QLC 8TB SSD
// review", 2020) reads the missing scaling beyond the 2TB the same way:
// a limit of the controller, not of the NAND. Drives with at most 16 dies
// never meet it. (The 8TB is not in the catalog: its full mapping is over
// the model's budget of 8 bytes per 4 KiB page; its row is evidence all
// the same.)
//
// calibrated: catalog.mkx_programs (class: Samsung MKX SATA controller)
// from the 870 QVO data sheet's 4TB and 8TB post-TurboWrite rows (the 1TB
// and 2TB rows do not depend on it). Not a reference (review) row.
const mkxPrograms = 16

// vnand5QLC is Samsung's 9x-layer 1 Tb QLC die (V-NAND V5 QLC, 2 planes x
// 16 KiB pages, 1536 pages per block) behind its MKX 8-channel SATA
// controller with DRAM, calibrated on the 870 QVO data sheet (Samsung,
// rev. 2020) 1TB row: 80 MB/s after TurboWrite from 8 dies is 10 MB/s a
// die, a 32 KiB page group every 3.28 ms, less the transfer: a QLC program
// of 3.24 ms. The 2TB's 160 MB/s from 16 dies follows; the 4TB's 160
// MB/s is the controller's limit (mkxPrograms). SLC program and
// read are the V5 TLC die's (the same cell array in SLC mode); QLC tR is
// the TLC die's 60 µs x 1.38, the mean QLC/TLC ratio of the page-type
// times (readtime.go). The controller's ~95K commands a second (from the
// 98K random-read row) bounds random I/O over SATA.
func vnand5QLC(capacity, static, cache float64, diesPerChannel int, post, tbw float64) ssd.Config {
	return ssd.Config{
		Capacity: models.Bytes(capacity), Interface: ssd.SATA,
		CommandOverhead: 20 * us, ControllerIOPS: 95e3, ConcurrentPrograms: mkxPrograms,
		Channels: 8, DiesPerChannel: diesPerChannel, ChannelMBps: 800,
		CellBits: 4, Planes: 2, PageSize: 16 << 10, PagesPerBlock: 1536, BlocksPerDie: 2731,
		ReadTLC: 83 * us, ReadSLC: 27 * us, ProgramTLC: 3240 * us, ProgramSLC: 73 * us, Erase: 3500 * us,
		ReadRetry:   retryBOL,
		SLCCacheMax: models.Bytes(cache), SLCCacheMin: models.Bytes(static),
		RatedTBW:    tbw,
		SeqReadMBps: 560, SeqWriteMBps: 530, RandReadIOPS: 98e3, RandWriteIOPS: 88e3, RandWriteInCache: true,
		PostCacheWriteMBps: post,
	}
}

const (
	evoPlusSource = "Samsung SSD 970 EVO Plus data sheet (rev. 2019): sequential 128 KiB QD32, random 4 KiB QD32 x 4 threads " +
		"within Intelligent TurboWrite; TurboWrite buffer sizes and sequential write after TurboWrite; TBW over 5 years"
	qvoSource = "Samsung SSD 870 QVO data sheet (rev. 2020): sequential 128 KiB QD32, random 4 KiB QD32 within " +
		"Intelligent TurboWrite (6 GB static + dynamic); sequential write after TurboWrite; TBW over 3 years"
)

func ptr[T any](v T) *T { return &v }

// withBus sets the channel count, dies per channel and channel rate.
func withBus(c ssd.Config, channels, diesPerChannel int, mbps float64) ssd.Config {
	c.Channels, c.DiesPerChannel, c.ChannelMBps = channels, diesPerChannel, mbps
	return c
}
