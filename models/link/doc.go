// Package link models the network between a client and a NAS: Ethernet at
// 1, 2.5, 10 and 25 Gb/s, 8G Fibre Channel, Thunderbolt 3 networking, or
// nothing at all ("local"), one link or several bonded by LACP or striped by
// SMB Multichannel.
//
// # Composition
//
// A Link is a resource, not a models.Device: it does not answer requests, it
// carries the messages a protocol sends. The protocol (package proto) is the
// outermost Device of a stack; for each protocol message it asks the link
// which member carries the request (Lane) and then books the wire (Send):
//
//	lane := l.Lane(flow, dataDir)
//	arrive := l.Send(at, lane, link.ToNAS, requestBytes)
//	done, err := nas.Submit(arrive, r)
//	back := l.Send(done, lane, link.ToClient, responseBytes)
//
// Keeping the link a resource with explicit methods lets the protocol say
// what a Device cannot: the direction of a message, its size in protocol
// bytes, and which connection (member) carries it.
//
// # Line rate and framing
//
// A message of n payload bytes (the protocol's bytes, headers included) is
// cut into frames of at most MSS payload bytes, and every frame carries a
// fixed overhead on the wire. For Ethernet with TCP/IPv4:
//
//	MSS      = MTU - IP(20) - TCP(20) - TCP timestamps option(12)
//	overhead = preamble+SFD(8) + inter-frame gap(12) + Ethernet header+FCS(18)
//	           + IP(20) + TCP(20) + timestamps(12)                 = 90 bytes
//	frames   = ceil(n / MSS)
//	wire     = n + frames × overhead
//	time     = wire × 8 / data bit rate
//
// so a saturated link carries MSS/(MSS+90) of its byte rate as payload:
// 1448/1538 × 125 MB/s = 117.7 MB/s on 1GbE at MTU 1500, and
// 8948/9038 × 125 MB/s = 123.8 MB/s with 9000-byte jumbo frames. The TCP
// timestamps option is counted because the Linux kernels that NAS systems
// run enable it (net.ipv4.tcp_timestamps=1) and it is used whenever the
// client accepts it.
//
// 8G Fibre Channel signals at 8.5 GBaud with 8b/10b coding (6.8 Gb/s of
// data, 850 MB/s); a frame carries up to 2112 payload bytes behind SOF(4),
// header(24), CRC(4) and EOF(4), and frames are separated by at least six
// 4-byte idle words (24), so it carries 2112/2172 × 850 = 826 MB/s of
// payload — the "800 MB/s" of the datasheets. There is no TCP/IP on FC.
//
// Thunderbolt 3 networking (thunderbolt-net, Thunderbolt Bridge) tunnels
// Ethernet frames over the Thunderbolt fabric. Its 40 Gb/s link carries at
// most 22 Gb/s of PCIe-class tunnelled data, and host-to-host networking
// reaches about 20 Gb/s; the model uses 20 Gb/s with Ethernet framing on top.
//
// TCP acknowledgements are not charged: request/response protocols
// piggyback most of them, and a delayed ACK every second full frame uses
// under 3 % of the reverse direction. TCP windows are assumed to be larger
// than the bandwidth-delay product (a LAN with long-lived connections).
//
// # Latency
//
// Every message also pays a one-way latency that does not occupy the wire:
// the sender's and receiver's network stack and NIC (interrupt moderation
// included), propagation, and the switch. It is a per-kind default (see
// Kinds): about 50 µs on 1GbE through a switch and a kernel stack at each
// end, so an idle 1GbE round trip of two small messages costs about 100 µs,
// what ping shows on such a LAN. Ethernet switches store and forward: the
// last frame of a message is received whole by the switch before it is sent
// on, which adds that frame's wire time once (12.3 µs for a full 1500-byte
// frame at 1 Gb/s). Point-to-point Thunderbolt and cut-through FC switches
// do not add it.
//
// # Full duplex and reservation
//
// Each direction of each member link is its own resource with a busy
// calendar (models/timeline, ReserveSplit: a message's frames may
// interleave with frames booked before it). A message that becomes ready at
// t occupies the first idle
// stretches of the wire at or after t, so a response that is ready early is
// not held behind one booked earlier for a later time (the wire is
// work-conserving, as TCP's byte stream is when a server writes responses
// as they complete). Messages may therefore be sent with any t, in any
// order. The calendar keeps a bounded number of busy intervals; when it is
// full the earliest is forgotten and nothing is placed before its end.
// The response of every request in flight is booked ahead, for when the
// NAS completes it, out of order: a direction is a timeline.Core, whose
// calendar holds a thousand of them. With a Timeline's 32 it forgot
// future ones past some 32 requests in flight, and 4 KiB reads at QD256
// on 10GbE ran 19 % below what the NAS allowed (TestLinkHoldsDeepQueues).
//
// # Several links
//
// Count links of one kind join in one of three modes:
//
//   - single: one link (count must be 1).
//   - smb-multichannel: one SMB session opens a connection on every link and
//     stripes its requests across them; the model gives each request to the
//     member whose data direction frees up first, as the Windows client
//     spreads requests over the channels with the fewest outstanding. One
//     client gets the sum of the links. (iSCSI MPIO with a round-robin
//     policy behaves the same.)
//   - lacp: 802.3ad bonding hashes each flow (TCP connection) onto one
//     member, so one client never gets more than one link while many
//     clients spread. The hash is Linux bonding's layer3+4 policy over
//     synthetic addresses: client Flow f is host 10.0.1.f talking to the NAS
//     at 10.0.0.10, the folded XOR of the addresses taken modulo count.
//     Flows 0..count-1 therefore land on distinct members, as distinct
//     clients do on average on a real bond; other flows collide as a hash
//     makes them.
//
// # Counters
//
// link_bytes_tx and link_bytes_rx count payload bytes sent by and to the
// NAS; link_wire_bytes_tx/rx count the bytes on the wire including framing;
// link_frames_tx/rx and link_messages_tx/rx count frames and messages.
package link
