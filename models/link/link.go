package link

import (
	"fmt"
	"github.com/nasemu/nasemu/models/timeline"
	"time"

	"github.com/nasemu/nasemu/models"
)

// Dir is the direction of a message.
type Dir uint8

// Directions, named from the NAS's point of view in counters: ToNAS is
// received (rx), ToClient is transmitted (tx).
const (
	ToNAS    Dir = iota // client to NAS: requests, written data
	ToClient            // NAS to client: responses, read data
)

// Link is the set of member links between client and NAS, with a busy
// timeline per member and direction. It is not safe for concurrent use.
type Link struct {
	cfg  Config
	kind KindInfo

	mss, overhead int64   // payload and framing bytes per frame
	nsPerByte     float64 // wire time of one byte
	local         bool    // no wire: everything is free

	lanes []lane

	payload, wire, frames, messages [2]int64 // by Dir
}

// lane is one member link: a calendar per direction (see the package doc
// for why a Core's).
type lane struct{ dir [2]timeline.Core }

// New returns the links that cfg describes.
func New(cfg Config) (*Link, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.WithDefaults()
	k, _ := LookupKind(cfg.Kind)
	l := &Link{cfg: cfg, kind: k, local: k.Framing == NoFraming, lanes: make([]lane, cfg.Count)}
	if !l.local {
		mss, ovh := k.frame(cfg.MTU)
		l.mss, l.overhead = int64(mss), int64(ovh)
		l.nsPerByte = 8e9 / k.BitRate
	}
	return l, nil
}

// Config returns the configuration, defaults filled in.
func (l *Link) Config() Config { return l.cfg }

// Kind returns the link kind's figures.
func (l *Link) Kind() KindInfo { return l.kind }

// Local reports whether there is no wire (kind local): Send costs nothing.
func (l *Link) Local() bool { return l.local }

// Count returns the number of member links.
func (l *Link) Count() int { return len(l.lanes) }

// PayloadRate returns the payload bytes per second one member carries in
// one direction when saturated with full frames (0 for local).
func (l *Link) PayloadRate() float64 {
	if l.local {
		return 0
	}
	return l.kind.PayloadRate(l.cfg.MTU)
}

// Latency returns the one-way latency of a message besides serialisation
// and store-and-forward.
func (l *Link) Latency() time.Duration { return l.kind.Latency }

// Lane returns the member link that carries a request of flow whose data
// moves in direction data, at time t: member 0 for single; the member that
// flow hashes to for lacp; for smb-multichannel the member whose data
// direction frees up first after t (ties to the lowest index).
func (l *Link) Lane(flow int, data Dir, t time.Duration) int {
	n := len(l.lanes)
	if n == 1 {
		return 0
	}
	switch l.cfg.Mode {
	case LACP:
		return lacpHash(flow, n)
	default: // smb-multichannel
		best, bestFree := 0, max(t, l.lanes[0].dir[data].BusyUntil())
		for i := 1; i < n; i++ {
			if f := max(t, l.lanes[i].dir[data].BusyUntil()); f < bestFree {
				best, bestFree = i, f
			}
		}
		return best
	}
}

// lacpHash is Linux bonding's layer3+4 transmit hash for a TCP connection
// from client host 10.0.1.flow to the NAS at 10.0.0.10 with fixed ports:
// the XOR of the addresses folded to a byte, modulo the member count.
func lacpHash(flow, n int) int {
	const nas = 10<<24 | 0<<16 | 0<<8 | 10
	client := uint32(10<<24|0<<16|1<<8) + uint32(flow)
	h := client ^ nas
	h ^= h >> 16
	h ^= h >> 8
	return int(h % uint32(n))
}

// Frames returns the number of frames a message of n payload bytes takes.
func (l *Link) Frames(n int64) int64 {
	if l.local || n <= 0 {
		return 0
	}
	return (n + l.mss - 1) / l.mss
}

// WireBytes returns the bytes on the wire, framing included, of a message
// of n payload bytes.
func (l *Link) WireBytes(n int64) int64 {
	return n + l.Frames(n)*l.overhead
}

// WireTime returns the time a message of n payload bytes occupies one
// direction of a member link.
func (l *Link) WireTime(n int64) time.Duration {
	return time.Duration(float64(l.WireBytes(n))*l.nsPerByte + 0.5)
}

// Send books a message of n payload bytes (protocol headers included) on
// member lane in direction d, ready to leave at t, and returns when its last
// byte has reached the far end's application: wire time after any earlier
// traffic, plus store-and-forward of its last frame, plus the one-way
// latency. t may lie before the t of earlier calls.
func (l *Link) Send(t time.Duration, lane int, d Dir, n int64) time.Duration {
	if l.local || n <= 0 {
		return t
	}
	frames := int64(1) // a request or an acknowledgement: no division
	if n > l.mss {
		frames = (n + l.mss - 1) / l.mss
	}
	wire := n + frames*l.overhead
	end := l.lanes[lane].dir[d].ReserveSplit(t, time.Duration(float64(wire)*l.nsPerByte+0.5))
	if l.kind.StoreForward {
		last := n - (frames-1)*l.mss + l.overhead - ethPreamble - ethIFG
		end += time.Duration(float64(last)*l.nsPerByte + 0.5)
	}
	l.payload[d] += n
	l.wire[d] += wire
	l.frames[d] += frames
	l.messages[d]++
	return end + l.kind.Latency
}

// Counters implements models.Observer (the protocol that owns the link
// reports them with its own).
func (l *Link) Counters() []models.Counter {
	return []models.Counter{
		{Name: "link_bytes_tx", Value: float64(l.payload[ToClient])},
		{Name: "link_bytes_rx", Value: float64(l.payload[ToNAS])},
		{Name: "link_wire_bytes_tx", Value: float64(l.wire[ToClient])},
		{Name: "link_wire_bytes_rx", Value: float64(l.wire[ToNAS])},
		{Name: "link_frames_tx", Value: float64(l.frames[ToClient])},
		{Name: "link_frames_rx", Value: float64(l.frames[ToNAS])},
		{Name: "link_messages_tx", Value: float64(l.messages[ToClient])},
		{Name: "link_messages_rx", Value: float64(l.messages[ToNAS])},
	}
}

// String describes the link for messages and reports.
func (l *Link) String() string {
	if l.local {
		return "local"
	}
	s := fmt.Sprintf("%s mtu %d", l.cfg.Kind, l.cfg.MTU)
	if l.kind.Framing == FibreChannel {
		s = l.cfg.Kind
	}
	if len(l.lanes) > 1 {
		s = fmt.Sprintf("%d×%s %s", len(l.lanes), s, l.cfg.Mode)
	}
	return s
}

// Resources returns the busy time of each direction over all member
// links (nil for a local link: it has no wire): rx carries requests and
// written data to the NAS, tx responses and read data to the client.
func (l *Link) Resources(at time.Duration) []models.Resource {
	if l.local {
		return nil
	}
	var busy [2]time.Duration
	for i := range l.lanes {
		for d := range busy {
			busy[d] += l.lanes[i].dir[d].BookedBy(at)
		}
	}
	n := len(l.lanes)
	return []models.Resource{
		{Name: "link rx", Class: models.ClassLink, Units: n, Busy: busy[ToNAS]},
		{Name: "link tx", Class: models.ClassLink, Units: n, Busy: busy[ToClient]},
	}
}
