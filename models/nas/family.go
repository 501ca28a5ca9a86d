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
type Family struct {
	Name        string
	PerGHz      float64 // integer throughput per GHz, reference core = 1
	AESPerCycle float64 // bytes/cycle/core with AES instructions; 0: none
	SoftAES     float64 // bytes/cycle/core of software AES
}

// families are the known classes, by name.
var families = []Family{
	{Name: "cortex-a9", PerGHz: 0.30, SoftAES: 0.020},
	{Name: "cortex-a15", PerGHz: 0.44, SoftAES: 0.026},
	{Name: "cortex-a53", PerGHz: 0.33, AESPerCycle: 0.5, SoftAES: 0.020},
	{Name: "cortex-a55", PerGHz: 0.38, AESPerCycle: 0.6, SoftAES: 0.022},
	{Name: "cortex-a72", PerGHz: 0.55, AESPerCycle: 0.9, SoftAES: 0.030},
	{Name: "silvermont", PerGHz: 0.45, AESPerCycle: 0.4, SoftAES: 0.030},    // Atom C2000, Celeron J1900
	{Name: "goldmont", PerGHz: 0.55, AESPerCycle: 0.5, SoftAES: 0.035},      // Atom C3000, Celeron J3455
	{Name: "goldmont-plus", PerGHz: 0.62, AESPerCycle: 0.5, SoftAES: 0.040}, // Celeron J4125
	{Name: "tremont", PerGHz: 0.75, AESPerCycle: 0.6, SoftAES: 0.045},       // Celeron N5095/N5105
	{Name: "sandy-bridge", PerGHz: 0.82, AESPerCycle: 0.6, SoftAES: 0.055},
	{Name: "broadwell", PerGHz: 0.92, AESPerCycle: 0.8, SoftAES: 0.060}, // Xeon D-1500
	{Name: "skylake", PerGHz: 1.00, AESPerCycle: 0.85, SoftAES: 0.062},  // incl. Cascade Lake, Coffee Lake
	{Name: "rocket-lake", PerGHz: 1.18, AESPerCycle: 1.1, SoftAES: 0.070},
	{Name: "alder-lake", PerGHz: 1.30, AESPerCycle: 1.2, SoftAES: 0.075}, // Golden Cove P-cores
	{Name: "zen", PerGHz: 0.90, AESPerCycle: 0.8, SoftAES: 0.055},        // Ryzen V1000, EPYC 3000
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
}
