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

// transfer is the time to move n bytes at mbps MB/s.
func transfer(n int64, mbps float64) time.Duration {
	return time.Duration(float64(n) * 1e3 / mbps)
}
