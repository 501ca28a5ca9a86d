package models

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Bytes is a size in bytes that configuration files write with a unit:
// "512", "4KiB", "64 KiB", "1.5TB", "8GiB". Decimal prefixes (kB, MB, GB,
// TB) are powers of 1000 as on datasheets; binary ones (KiB, MiB, GiB, TiB)
// powers of 1024. K, M, G, T alone, as fio writes them, are binary.
type Bytes int64

var byteUnits = []struct {
	suffix string
	mult   float64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40}, {"pib", 1 << 50},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12}, {"pb", 1e15},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40}, {"p", 1 << 50},
	{"b", 1},
}

// ParseBytes parses a size with an optional unit (see Bytes).
func ParseBytes(s string) (Bytes, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	mult := 1.0
	for _, u := range byteUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) || v*mult > math.MaxInt64 {
		return 0, fmt.Errorf("bad size %q: want a number with an optional unit such as 4KiB or 1.5TB", s)
	}
	return Bytes(math.Round(v * mult)), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (b *Bytes) UnmarshalText(text []byte) error {
	v, err := ParseBytes(string(text))
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (b Bytes) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// String formats b with the largest binary unit that divides it exactly, or
// in bytes.
func (b Bytes) String() string {
	for _, u := range []struct {
		s string
		m int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b != 0 && int64(b)%u.m == 0 {
			return fmt.Sprintf("%d%s", int64(b)/u.m, u.s)
		}
	}
	return strconv.FormatInt(int64(b), 10)
}
