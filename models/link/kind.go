package link

import (
	"fmt"
	"strings"
	"time"
)

// Framing says how a kind cuts messages into frames.
type Framing uint8

// The framings of the supported kinds.
const (
	NoFraming    Framing = iota // local: no wire at all
	EthernetTCP                 // TCP/IPv4 over Ethernet (MTU configurable)
	FibreChannel                // FC frames of up to 2112 payload bytes
)

// Ethernet, IPv4 and TCP per-frame sizes in bytes.
const (
	ethPreamble = 8  // preamble and start-of-frame delimiter
	ethIFG      = 12 // minimum inter-frame gap
	ethHeader   = 18 // MAC header 14 + FCS 4
	ipHeader    = 20 // IPv4 without options
	tcpHeader   = 20 // TCP without options
	tcpTSOpt    = 12 // TCP timestamps option, padded (RFC 7323)

	// EthernetOverhead is what an Ethernet frame carrying TCP costs on the
	// wire beyond its TCP payload.
	EthernetOverhead = ethPreamble + ethIFG + ethHeader + ipHeader + tcpHeader + tcpTSOpt
	// tcpipHeaders is what the MTU holds besides the TCP payload.
	tcpipHeaders = ipHeader + tcpHeader + tcpTSOpt
)

// Fibre Channel frame sizes in bytes (FC-FS).
const (
	fcMaxPayload = 2112
	// FCOverhead is SOF(4) + frame header(24) + CRC(4) + EOF(4) + six idle
	// words between frames(24).
	FCOverhead = 4 + 24 + 4 + 4 + 24
)

// MTU limits of Ethernet kinds.
const (
	DefaultMTU = 1500
	MinMTU     = 576 // the smallest IPv4 datagram every host must accept
	JumboMTU   = 9000
)

// KindInfo describes a link kind for listings and for the model.
type KindInfo struct {
	Name        string        // the Config.Kind value, e.g. "1gbe"
	Description string        // what it is
	BitRate     float64       // data bits per second after line coding, per direction
	Framing     Framing       // how messages are framed
	Latency     time.Duration // one-way message latency besides serialisation
	// StoreForward is true when a switch that stores and forwards each
	// frame sits between client and NAS (adds the last frame's wire time).
	StoreForward bool
	MaxMTU       int    // largest MTU the kind accepts (0: MTU is not configurable)
	Source       string // where the figures come from
}

// PayloadRate returns the bytes per second of payload the kind carries when
// saturated with full frames at the given MTU (the default MTU when 0).
func (k KindInfo) PayloadRate(mtu int) float64 {
	mss, ovh := k.frame(mtu)
	if mss == 0 {
		return 0
	}
	return float64(mss) / float64(mss+ovh) * k.BitRate / 8
}

// frame returns the payload per frame and the per-frame wire overhead.
func (k KindInfo) frame(mtu int) (mss, overhead int) {
	switch k.Framing {
	case EthernetTCP:
		if mtu == 0 {
			mtu = DefaultMTU
		}
		return mtu - tcpipHeaders, EthernetOverhead
	case FibreChannel:
		return fcMaxPayload, FCOverhead
	}
	return 0, 0
}

// Summary returns the kind's key figures for listings.
func (k KindInfo) Summary() string {
	if k.Framing == NoFraming {
		return "no link: zero cost"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%g Gb/s, %.1f MB/s payload", k.BitRate/1e9, k.PayloadRate(0)/1e6)
	if k.Framing == EthernetTCP {
		fmt.Fprintf(&b, " at MTU %d", DefaultMTU)
		if k.MaxMTU >= JumboMTU {
			fmt.Fprintf(&b, " (%.1f MB/s at %d)", k.PayloadRate(JumboMTU)/1e6, JumboMTU)
		}
	}
	fmt.Fprintf(&b, ", %v one-way", k.Latency)
	return b.String()
}

// kinds is the table of supported link kinds. Latencies are one-way message
// latencies of a kernel TCP stack at both ends with the NIC's default
// interrupt moderation, plus a switch where there is one; they are what
// ping's round-trip time halves to on such networks.
var kinds = []KindInfo{
	{
		Name: "local", Description: "no link: the client runs on the NAS itself",
		Source: "no wire",
	},
	{
		Name: "1gbe", Description: "1000BASE-T Ethernet through a switch",
		BitRate: 1e9, Framing: EthernetTCP, Latency: 50 * time.Microsecond, StoreForward: true, MaxMTU: JumboMTU,
		Source: "IEEE 802.3 clause 40: 1 Gb/s after 4D-PAM5 coding; ~100 µs ping RTT through a switch with interrupt moderation (e1000e/igb defaults)",
	},
	{
		Name: "2.5gbe", Description: "2.5GBASE-T Ethernet through a switch",
		BitRate: 2.5e9, Framing: EthernetTCP, Latency: 40 * time.Microsecond, StoreForward: true, MaxMTU: JumboMTU,
		Source: "IEEE 802.3bz: 2.5 Gb/s data rate; ~80 µs ping RTT (Realtek/Intel i225 class NICs)",
	},
	{
		Name: "10gbe", Description: "10GBASE-T or SFP+ Ethernet through a switch",
		BitRate: 10e9, Framing: EthernetTCP, Latency: 25 * time.Microsecond, StoreForward: true, MaxMTU: JumboMTU,
		Source: "IEEE 802.3ae/an: 10 Gb/s after 64b/66b coding; ~50 µs ping RTT (Intel X540/X550, ixgbe defaults)",
	},
	{
		Name: "25gbe", Description: "25GBASE-SR/CR Ethernet through a switch",
		BitRate: 25e9, Framing: EthernetTCP, Latency: 15 * time.Microsecond, StoreForward: true, MaxMTU: JumboMTU,
		Source: "IEEE 802.3by: 25.78125 GBaud 64b/66b = 25 Gb/s; ~30 µs ping RTT (Mellanox ConnectX-4 Lx class)",
	},
	{
		Name: "fc8", Description: "8G Fibre Channel through a cut-through FC switch",
		BitRate: 6.8e9, Framing: FibreChannel, Latency: 10 * time.Microsecond,
		Source: "FC-PI-4: 8.5 GBaud, 8b/10b = 6.8 Gb/s (850 MB/s), 2112-byte frame payload; HBA-offloaded stack, ~2 µs switch",
	},
	{
		Name: "tb3", Description: "Thunderbolt 3 host-to-host networking (Thunderbolt Bridge, thunderbolt-net)",
		BitRate: 20e9, Framing: EthernetTCP, Latency: 25 * time.Microsecond, MaxMTU: JumboMTU,
		Source: "Intel Thunderbolt 3: 40 Gb/s link, at most 22 Gb/s tunnelled data; ~20 Gb/s host-to-host, point to point",
	},
}

// Kinds returns every supported link kind, in the order of the table (by
// speed, local first).
func Kinds() []KindInfo { return append([]KindInfo(nil), kinds...) }

// LookupKind returns the kind called name.
func LookupKind(name string) (KindInfo, bool) {
	for _, k := range kinds {
		if k.Name == name {
			return k, true
		}
	}
	return KindInfo{}, false
}

func kindNames() string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.Name
	}
	return strings.Join(names, ", ")
}
