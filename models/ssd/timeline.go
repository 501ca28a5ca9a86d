package ssd

import "time"

// Every resource — each die, each NAND channel, each direction of the
// host link (one shared direction for SATA) and the controller's command
// admission — is a timeline.Timeline: a reservation calendar that places
// each booking in the earliest gap at or after its arrival. Work booked
// for the future (the write phase of a RAID 5 read-modify-write, a page
// a busy die will sense later) thus leaves the idle time before it usable
// by requests submitted afterwards, and a resource used in time order
// behaves as a plain busy-until. The price is fragmentation: slivers
// between transfers booked at scattered future times that no whole
// transfer fits cost a saturated channel a few per cent.
//
// A Timeline keeps 32 intervals. The channels, the link and the
// admission hold a booking for each command in flight, out of order (a
// read's transfers are booked for when its die has sensed it; a host
// whose submit path takes varying time sends commands out of order), and
// past some 32 in flight they forget future ones: random reads at QD256
// from such a host run a quarter below what it allows. Keeping more
// (timeline.Core) moves review 002's 70/30 rows past the reference
// data's median line; docs/notes/sata-mixed-load.md has the numbers.

// transfer is the time to move n bytes at mbps MB/s.
func transfer(n int64, mbps float64) time.Duration {
	return time.Duration(float64(n) * 1e3 / mbps)
}
