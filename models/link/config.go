package link

import (
	"fmt"

	"github.com/nasemu/nasemu/models"
)

// Modes of joining several links.
const (
	Single          = "single"
	SMBMultichannel = "smb-multichannel"
	LACP            = "lacp"
)

// Config describes the links between client and NAS. The zero value of each
// field means its default: kind local (no network, as for protocol local),
// count 1, mode single, MTU 1500 on Ethernet kinds.
type Config struct {
	Kind  string `yaml:"kind"`  // local | 1gbe | 2.5gbe | 10gbe | 25gbe | fc8 | tb3
	Count int    `yaml:"count"` // links of that kind
	Mode  string `yaml:"mode"`  // single | smb-multichannel | lacp
	MTU   int    `yaml:"mtu"`   // IP MTU of Ethernet kinds: 576..9000
}

// DefaultKind is the kind of a Config that names none: no network, the
// counterpart of protocol local.
const DefaultKind = "local"

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	if c.Kind == "" {
		c.Kind = DefaultKind
	}
	if c.Count == 0 {
		c.Count = 1
	}
	if c.Mode == "" {
		c.Mode = Single
	}
	if k, ok := LookupKind(c.Kind); ok && k.Framing == EthernetTCP && c.MTU == 0 {
		c.MTU = DefaultMTU
	}
	return c
}

// Validate reports the first impossible value of c (after defaults), as an
// error wrapping models.ErrConfig that names the field.
func (c Config) Validate() error {
	c = c.WithDefaults()
	k, ok := LookupKind(c.Kind)
	if !ok {
		return fmt.Errorf("%w: link kind %q is unknown (known: %s)", models.ErrConfig, c.Kind, kindNames())
	}
	if c.Count < 1 {
		return fmt.Errorf("%w: link count %d: want at least 1", models.ErrConfig, c.Count)
	}
	if c.Count > 64 {
		return fmt.Errorf("%w: link count %d: at most 64 links join one bond or session", models.ErrConfig, c.Count)
	}
	switch c.Mode {
	case Single:
		if c.Count > 1 {
			return fmt.Errorf("%w: link mode single with count %d: several links need mode %s or %s", models.ErrConfig, c.Count, SMBMultichannel, LACP)
		}
	case LACP:
		if c.Count < 2 {
			return fmt.Errorf("%w: link mode lacp with count %d: a link aggregation group needs at least 2 links (a bond of one behaves as single)", models.ErrConfig, c.Count)
		}
	case SMBMultichannel:
	default:
		return fmt.Errorf("%w: link mode %q is unknown (known: %s, %s, %s)", models.ErrConfig, c.Mode, Single, SMBMultichannel, LACP)
	}
	switch k.Framing {
	case EthernetTCP:
		if c.MTU < MinMTU || c.MTU > k.MaxMTU {
			return fmt.Errorf("%w: link mtu %d on %s: want %d..%d (1500 standard, 9000 jumbo frames)", models.ErrConfig, c.MTU, c.Kind, MinMTU, k.MaxMTU)
		}
	case FibreChannel:
		if c.MTU != 0 && c.MTU != fcMaxPayload {
			return fmt.Errorf("%w: link mtu %d on %s: Fibre Channel frames carry a fixed %d payload bytes and have no IP MTU; leave mtu out", models.ErrConfig, c.MTU, c.Kind, fcMaxPayload)
		}
	case NoFraming:
		if c.MTU != 0 {
			return fmt.Errorf("%w: link mtu %d on %s: a local client has no network; leave mtu out", models.ErrConfig, c.MTU, c.Kind)
		}
		if c.Count != 1 {
			return fmt.Errorf("%w: link count %d on %s: a local client has no links to count", models.ErrConfig, c.Count, c.Kind)
		}
	}
	return nil
}

// UnmarshalText lets a setup file name just the kind (link: 10gbe) where a
// mapping of kind, count, mode and mtu could also stand.
func (c *Config) UnmarshalText(text []byte) error {
	*c = Config{Kind: string(text)}
	return nil
}
