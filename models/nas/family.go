package nas

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nasemu/nasemu/models"
)

// Family is a CPU micro-architecture class and the published per-core
// figures the controller's costs are derived from, so that a NAS outside
// the catalog gets its costs from its CPU's datasheet (family, cores,
// clock) instead of from measurements of itself.
//
// PerGHz is integer throughput per GHz relative to the reference core of
// the default costs (a Skylake-class x86 core: 1.0), from SPECint2006
// per-GHz results and the vendors' IPC claims between generations. The
// AES rates are one core's AES-XTS/CBC throughput in bytes per cycle as
// OpenSSL's speed test reports it: with the ISA's AES instructions (AES-NI,
// ARMv8 Cryptography Extensions) where the family has them, and table-based
// software AES where it does not. Figures are rounded class values as
// remembered from those public results, not measurements of one chip;
// verify a family before relying on a few percent.
//
// The classes of the NAS systems of 2010–2018 (Feroceon, PJ4B, Cortex-A7
// and A57, Bonnell/Saltwell, Jaguar, Ivy Bridge, Haswell) name their
// sources row by row. Their PerGHz is a published per-clock ratio to an
// existing family of the same kind times that family's PerGHz. Their AES
// rates are AES-256-CBC encryption by one thread, from OpenSSL's speed
// test (16 KiB blocks) or cryptsetup benchmark, which agree on ARM: a
// Cortex-A72 at 1.5 GHz gives 62.1 MiB/s in cryptsetup (Raspberry Pi CM4,
// kubesail/pibox-os issue 17) and 64.9 MB/s in OpenSSL (sbc-bench, RPi 4).
// AES-128 figures are converted by the rounds, 10 against AES-256's 14.
// With AES instructions CBC encryption is serial, one block after another,
// and slower than the parallel modes a NAS runs (XTS for volumes, GCM and
// CCM for SMB 3), which the older rows stand for: in sbc-bench the
// Skylake-class Pentium G4600 encrypts CBC at 0.274 bytes a cycle where
// skylake's row has 0.85, 3.1 times as much. A new row's CBC figure with
// AES instructions is therefore put on the table's scale by the ratio of
// its nearest older row to that row's CBC figure in the same source
// (x86: skylake's 3.1; ARMv8: cortex-a72's 0.9 / 0.566, 1.59).
//
// Two sources recur: T. Kaiser's sbc-bench results table ("7-zip single",
// single-thread 7-Zip MIPS, and "AES", OpenSSL aes-256-cbc at 16 KiB, per
// board and clock; github.com/ThomasKaiser/sbc-bench, Results.md) and
// I. Pavlov's 7-cpu.com table of the same 7-Zip benchmark.
type Family struct {
	Name        string
	PerGHz      float64 // integer throughput per GHz, reference core = 1
	AESPerCycle float64 // bytes/cycle/core with AES instructions; 0: none
	SoftAES     float64 // bytes/cycle/core of software AES; 0: not published, the CPU default applies
	// Engine is the AES rate in bytes/s of the crypto engine every SoC of
	// the class has (Marvell's CESA), shared by all cores; 0: none. It
	// runs on the SoC's own clock, not per core cycle.
	Engine float64
}

// families are the known classes, by name.
var families = []Family{
	// ARMv5 Marvell Feroceon/Sheeva 88FR131 (Kirkwood 88F6281/88F6282:
	// Synology DS111, DS411, DS212j; QNAP TS-x12, TS-x19). PerGHz: 7-cpu.com,
	// single-thread 7-Zip, Kirkwood 88F6281 at 1200 MHz 385/710 MIPS
	// (compress/decompress) against Cortex-A9 (Exynos 4210) at 1200 MHz
	// 790/1080: 0.586 of cortex-a9's 0.30. SoftAES: Zyxel NSA310 (88F6281,
	// 1.2 GHz), cryptsetup aes-cbc 128b with the kernel's ARM assembly,
	// 13.4 MiB/s (niziak.spox.org wiki, hw:nsa310:encrypted_fs), as
	// AES-256. Engine: the SoC's CESA, same page, marvell_cesa (Linux 5.8,
	// DMA) 34.9 MiB/s AES-128-CBC (the older mv_cesa driver, which copies
	// through the engine's SRAM with the core, 19.7), times the AES-256 to
	// AES-128 ratio the same driver shows on an Armada 370 (53.0/55.8).
	{Name: "feroceon", PerGHz: 0.18, SoftAES: 0.0084, Engine: 34.8e6},
	// ARMv7 Marvell Sheeva PJ4B (Armada 370/XP: Synology DS213j, DS214;
	// QNAP TS-x21). PerGHz: Marvell's 2.42 DMIPS/MHz for its PJ4 core
	// (heise, "MWC: Applikationsprozessor für Smartphones", 2010, Armada
	// 618) against ARM's 2.5 for Cortex-A9 (Android Authority, "ARM Cortex
	// A9 vs ARM Cortex A15", 2012), times cortex-a9's 0.30. SoftAES:
	// Netgear ReadyNAS 102 (Armada 370, 1.2 GHz), cryptsetup aes-xts 256b
	// (AES-128 halves, no engine for XTS) 30.7 MiB/s, as AES-256; Engine:
	// the same, aes-cbc 256b on the CESA, 53.0 MiB/s (unix.stackexchange.com
	// question 560335).
	{Name: "pj4b", PerGHz: 0.29, SoftAES: 0.019, Engine: 55.6e6},
	// Cortex-A7 (Allwinner A20/R40/H3, MediaTek MT7623 and the like).
	// sbc-bench: median single-thread 7-Zip per MHz of ten A7
	// boards (A20, R40, H3, MT7623, BCM2836, SSD202D) 0.642, of three
	// Cortex-A9 boards (Armada 388 ×2, i.MX6) 0.759: 0.846 of cortex-a9's
	// 0.30 (7-cpu.com's A20 and Exynos 4210 give 0.82). SoftAES: the same
	// ten boards' AES, 19.4 kB/s per MHz, every one within 0.5 %.
	{Name: "cortex-a7", PerGHz: 0.25, SoftAES: 0.0194},
	{Name: "cortex-a9", PerGHz: 0.30, SoftAES: 0.020},
	{Name: "cortex-a15", PerGHz: 0.44, SoftAES: 0.026},
	{Name: "cortex-a53", PerGHz: 0.33, AESPerCycle: 0.5, SoftAES: 0.020},
	{Name: "cortex-a55", PerGHz: 0.38, AESPerCycle: 0.6, SoftAES: 0.022},
	// Cortex-A57 (AMD Opteron A1100, NVIDIA Tegra X1). sbc-bench: 7-Zip
	// single per MHz, median of Jetson Nano ×2 and Opteron A1100, 1.003,
	// against Cortex-A15 (ODROID-XU4 ×3) 0.811: 1.24 of cortex-a15's 0.44
	// (against Cortex-A72, median of ten boards 1.039, 0.53). AESPerCycle:
	// the same boards' AES with ARMv8 Crypto Extensions, 0.359–0.360
	// bytes/cycle, 0.57 on the table's scale (× 1.59). No software figure.
	{Name: "cortex-a57", PerGHz: 0.54, AESPerCycle: 0.57},
	{Name: "cortex-a72", PerGHz: 0.55, AESPerCycle: 0.9, SoftAES: 0.030},
	// Intel Bonnell and its 32 nm shrink Saltwell (Atom D2550/D2700/N2800:
	// Synology DS412+, DS1512+; QNAP TS-x69). sbc-bench: Atom N2800
	// (Saltwell) at 1860 MHz, 7-Zip single 1006 and AES 21,780 kB/s (no
	// AES-NI), against the median 7-Zip per MHz of six Silvermont boards
	// (Atom E3825, E3826, Z3735F, Celeron N2807, N2830, J1900) 0.778:
	// 0.695 of silvermont's 0.45 (the Bonnell N270: 0.66).
	{Name: "bonnell", PerGHz: 0.31, SoftAES: 0.0117},
	{Name: "silvermont", PerGHz: 0.45, AESPerCycle: 0.4, SoftAES: 0.030},    // Atom C2000, Celeron J1900
	{Name: "goldmont", PerGHz: 0.55, AESPerCycle: 0.5, SoftAES: 0.035},      // Atom C3000, Celeron J3455
	{Name: "goldmont-plus", PerGHz: 0.62, AESPerCycle: 0.5, SoftAES: 0.040}, // Celeron J4125
	{Name: "tremont", PerGHz: 0.75, AESPerCycle: 0.6, SoftAES: 0.045},       // Celeron N5095/N5105
	{Name: "sandy-bridge", PerGHz: 0.82, AESPerCycle: 0.6, SoftAES: 0.055},
	// Ivy Bridge and Haswell (Celeron G/Pentium G of rackmount NAS, Xeon
	// E3 v2/v3). PerGHz: PC Perspective's five generations at 3.5 GHz
	// (i7-6700K review, 2015, p. 5): Skylake 10 % faster single-threaded
	// than Haswell (1/1.10) and 21 % than Sandy Bridge (1/1.21 = 0.83,
	// sandy-bridge's 0.82); Ivy Bridge: Tom's Hardware's Haswell preview
	// (2013) puts the i7-4770K 7–13 % ahead of the i7-3770K at the same
	// clock, 0.91/1.10. AESPerCycle: AES-NI's CBC encryption is one
	// AESENC after another, 14 for AES-256; Intel gives their latency as 8
	// cycles on Sandy/Ivy Bridge and 7 on Haswell ("Intel AES-NI
	// Performance Enhancements: HyTrust DataControl Case Study", 2014) and
	// 75 % lower on Skylake-SP, 4 ("Intel Xeon Scalable Processor
	// Cryptographic Performance"); sbc-bench's Pentium G4600 (Kaby Lake,
	// 3.6 GHz, AES 984,820 kB/s) takes 58.5 cycles a block, 14 × 4 + 2.5,
	// so Ivy Bridge 16/(14 × 8 + 2.5), Haswell 16/(14 × 7 + 2.5). (A Sandy
	// Bridge i7-2760QM, single-core turbo 3.5 GHz, gives 670 MB/s of
	// AES-128-CBC, erlang/otp pull 372; 16/(10 × 8 + 2.5) at 3.5 GHz is
	// 679.) On the table's scale (× 3.1): 0.43 and 0.50. No software
	// figure.
	{Name: "ivy-bridge", PerGHz: 0.83, AESPerCycle: 0.43},
	{Name: "haswell", PerGHz: 0.91, AESPerCycle: 0.50},
	{Name: "broadwell", PerGHz: 0.92, AESPerCycle: 0.8, SoftAES: 0.060}, // Xeon D-1500
	{Name: "skylake", PerGHz: 1.00, AESPerCycle: 0.85, SoftAES: 0.062},  // incl. Cascade Lake, Coffee Lake
	{Name: "rocket-lake", PerGHz: 1.18, AESPerCycle: 1.1, SoftAES: 0.070},
	{Name: "alder-lake", PerGHz: 1.30, AESPerCycle: 1.2, SoftAES: 0.075}, // Golden Cove P-cores
	// AMD Jaguar (GX-420CA: QNAP TS-x63). PerGHz: AMD claims up to 22 %
	// more IPC than Bobcat (AnandTech, "AMD's Jaguar Architecture", 2013);
	// sbc-bench's Bobcat E-450 at 1650 MHz, 7-Zip single 1258, is 0.980 of
	// the Silvermont median above: 0.45 × 0.980 × 1.22. AESPerCycle: as for
	// Haswell, with Jaguar's 3-cycle AESENC (LLVM's btver2 model, from AMD's
	// Family 16h optimization guide): 16/(14 × 3 + 2.5), 1.1 on the table's
	// scale (× 3.1; the serial chain favours its short AESENC, and its one
	// AES unit may fall behind in the parallel modes). No software figure.
	{Name: "jaguar", PerGHz: 0.54, AESPerCycle: 1.1},
	{Name: "zen", PerGHz: 0.90, AESPerCycle: 0.8, SoftAES: 0.055}, // Ryzen V1000, EPYC 3000
	{Name: "zen2", PerGHz: 1.00, AESPerCycle: 1.0, SoftAES: 0.062},
	{Name: "zen3", PerGHz: 1.15, AESPerCycle: 1.0, SoftAES: 0.068},
}

// LookupFamily returns the family called name.
func LookupFamily(name string) (Family, error) {
	if i := slices.IndexFunc(families, func(f Family) bool { return f.Name == name }); i >= 0 {
		return families[i], nil
	}
	var names []string
	for _, f := range families {
		names = append(names, f.Name)
	}
	return Family{}, fmt.Errorf("%w: nas.cpu.family: unknown %q (known: %s)", models.ErrConfig, name, strings.Join(names, ", "))
}

// referenceGHz is the clock of the reference core the default costs are
// stated for.
const referenceGHz = 3.0

// fromFamily fills the costs cpu leaves zero from its family and clock:
// fixed costs are the reference core's defaults times the work's relative
// time (referenceGHz / (PerGHz × GHz)), per-byte rates divided by it, AES
// from the family's bytes per cycle. Costs cpu states are kept.
func (cpu *CPU) fromFamily(f Family) {
	ghz := cpu.GHz
	if ghz <= 0 {
		ghz = referenceGHz
	}
	rc := referenceGHz / (f.PerGHz * ghz)
	scale := func(d *time.Duration, ref time.Duration) {
		if *d == 0 {
			*d = time.Duration(float64(ref) * rc)
		}
	}
	rate := func(b *models.Bytes, ref float64) {
		if *b == 0 {
			*b = models.Bytes(ref / rc)
		}
	}
	scale(&cpu.PerRequest, DefaultPerRequest)
	scale(&cpu.PerIO, defaultPerIO)
	scale(&cpu.PerFileOp, defaultPerFileOp)
	scale(&cpu.NetPerRequest, defaultNetPerRequest)
	scale(&cpu.CryptoPerOp, defaultCryptoPerOp)
	rate(&cpu.NetRate, defaultNetRate)
	rate(&cpu.CopyRate, defaultCopyRate)
	if cpu.AESRate == 0 {
		cpu.AESRate = models.Bytes(f.SoftAES * ghz * 1e9)
	}
	if f.AESPerCycle > 0 && cpu.OffloadAESRate == 0 && !cpu.CryptoEngine {
		cpu.HasCryptoOffload = true
		cpu.OffloadAESRate = models.Bytes(f.AESPerCycle * ghz * 1e9)
	}
	if f.Engine > 0 && cpu.OffloadAESRate == 0 {
		cpu.HasCryptoOffload, cpu.CryptoEngine = true, true
		cpu.OffloadAESRate = models.Bytes(f.Engine)
	}
}
