package nas

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
)

// TestFamilyCosts: a CPU given by family, cores and clock gets every cost
// from the family's per-core figures; the reference family at the
// reference clock gets the defaults; a Cortex-A15 at 1.7 GHz takes about
// 4× as long per request (3 / (0.44 × 1.7)), as the DS1817's catalog
// estimate has it; costs a config states are kept; AES instructions
// become an offload rate.
func TestFamilyCosts(t *testing.T) {
	ref := Config{CPU: CPU{Family: "skylake", GHz: 3}}.WithDefaults().CPU
	def := Config{}.WithDefaults().CPU
	if ref.PerRequest != def.PerRequest || ref.PerIO != def.PerIO || ref.NetRate != def.NetRate || ref.CopyRate != def.CopyRate {
		t.Errorf("skylake at 3 GHz: %+v, want the defaults %+v", ref, def)
	}
	a15 := Config{CPU: CPU{Family: "cortex-a15", GHz: 1.7, Cores: 4, PerFileOp: 99 * time.Microsecond}}.WithDefaults().CPU
	if rc := a15.RelativeCost(); math.Abs(rc-4.01) > 0.05 {
		t.Errorf("cortex-a15 at 1.7 GHz: relative cost %.2f, want ~4.0", rc)
	}
	if a15.PerFileOp != 99*time.Microsecond {
		t.Errorf("a stated cost was replaced: %v", a15.PerFileOp)
	}
	if a15.HasCryptoOffload || math.Abs(float64(a15.AESRate)-0.026*1.7e9) > 1e6 {
		t.Errorf("cortex-a15 has no AES instructions: offload %v, software %v", a15.HasCryptoOffload, a15.AESRate)
	}
	a72 := Config{CPU: CPU{Family: "cortex-a72", GHz: 1.7}}.WithDefaults().CPU
	if !a72.HasCryptoOffload || a72.OffloadAESRate < 10*a72.AESRate {
		t.Errorf("cortex-a72: offload %v at %v, software %v", a72.HasCryptoOffload, a72.OffloadAESRate, a72.AESRate)
	}
	err := Config{CPU: CPU{Family: "pentium-4"}}.WithDefaults().Validate()
	if !errors.Is(err, models.ErrConfig) {
		t.Errorf("unknown family: %v", err)
	}
}

// TestFamilyEngine: a Kirkwood (Feroceon) NAS like the DS411 at 1.6 GHz
// takes 3 / (0.18 × 1.6) times the reference core's time per request and
// runs AES on the SoC's CESA engine, shared by its cores, at the engine's
// rate whatever the clock; a rate the config states is kept; a family with
// no published software AES leaves the CPU's default.
func TestFamilyEngine(t *testing.T) {
	kw := Config{CPU: CPU{Family: "feroceon", GHz: 1.6, Cores: 1}}.WithDefaults().CPU
	if rc := kw.RelativeCost(); math.Abs(rc-3/(0.18*1.6)) > 0.05 {
		t.Errorf("feroceon at 1.6 GHz: relative cost %.2f, want %.2f", rc, 3/(0.18*1.6))
	}
	if !kw.HasCryptoOffload || !kw.CryptoEngine || kw.OffloadAESRate != 34.8e6 {
		t.Errorf("feroceon: offload %v, engine %v at %v, want the CESA at 34.8 MB/s", kw.HasCryptoOffload, kw.CryptoEngine, kw.OffloadAESRate)
	}
	if math.Abs(float64(kw.AESRate)-0.0084*1.6e9) > 1e6 {
		t.Errorf("feroceon: software AES %v", kw.AESRate)
	}
	own := Config{CPU: CPU{Family: "pj4b", GHz: 1.2, OffloadAESRate: 40e6, CryptoEngine: true, HasCryptoOffload: true}}.WithDefaults().CPU
	if own.OffloadAESRate != 40e6 {
		t.Errorf("a stated engine rate was replaced: %v", own.OffloadAESRate)
	}
	hw := Config{CPU: CPU{Family: "haswell", GHz: 3.5}}.WithDefaults().CPU
	def := Config{}.WithDefaults().CPU
	if hw.CryptoEngine || !hw.HasCryptoOffload || hw.AESRate != def.AESRate {
		t.Errorf("haswell: engine %v, offload %v, software %v", hw.CryptoEngine, hw.HasCryptoOffload, hw.AESRate)
	}
}
