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

// Binary byte units, for sizes in code.
const (
	KiB int64 = 1 << 10
	MiB int64 = 1 << 20
	GiB int64 = 1 << 30
)

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

// Human formats b for people, with a space before the unit. A size that
// is a whole number of a binary unit, or one with up to two decimals
// (256 MiB, 1.5 GiB: sizes given in binary units), prints in that unit; a
// size that is exact in a decimal unit (1.92 TB, 960 GB: sizes given as
// drives are sold) in that one; whichever reads shorter when both are
// exact. Any other size, such as the usable capacity of an array of
// drives, prints in decimal units with three significant digits (3.00 TB).
func (b Bytes) Human() string {
	if b < 0 {
		return "-" + (-b).Human()
	}
	if b < 1000 {
		return strconv.FormatInt(int64(b), 10) + " B"
	}
	bin, binUnit, binExact := humanIn(int64(b), []int64{1 << 10, 1 << 20, 1 << 30, 1 << 40, 1 << 50}, []string{"KiB", "MiB", "GiB", "TiB", "PiB"})
	dec, decUnit, decExact := humanIn(int64(b), []int64{1e3, 1e6, 1e9, 1e12, 1e15}, []string{"kB", "MB", "GB", "TB", "PB"})
	if binExact && (!decExact || len(bin) <= len(dec)) {
		return bin + " " + binUnit
	}
	return dec + " " + decUnit
}

// humanIn formats b in the largest of units (ascending, with their names)
// that is at most b, and reports whether that is exact with at most two
// decimals; when it is not, the figure has three significant digits.
func humanIn(b int64, units []int64, names []string) (figure, unit string, exact bool) {
	i := 0
	for i+1 < len(units) && units[i+1] <= b {
		i++
	}
	u := units[i]
	if b < u {
		return "", "", false // below the smallest unit
	}
	v := float64(b) / float64(u)
	// v has at most two decimals when 100·b is a multiple of u, that is
	// when b is one of u/gcd(u, 100).
	g := int64(100)
	for r := u % g; r != 0; r = u % g {
		u, g = g, r
	}
	u = units[i]
	if b%(u/g) == 0 {
		s := strconv.FormatFloat(v, 'f', 2, 64)
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		return s, names[i], true
	}
	prec := 0
	switch {
	case v < 10:
		prec = 2
	case v < 100:
		prec = 1
	}
	return strconv.FormatFloat(v, 'f', prec, 64), names[i], false
}
