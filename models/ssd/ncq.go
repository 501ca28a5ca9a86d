package ssd

import "time"

// ncqTags is how many commands a SATA drive holds at once: native command
// queuing's 32 tags (Serial ATA 3.x first-party DMA queuing; AHCI's 32
// command slots per port). A host with more outstanding keeps the rest in
// its own queue. NVMe's queues are deep enough that the model sets no such
// limit.
const ncqTags = 32

// tag returns when a read or write arriving at a SATA drive at at gets a
// tag: at once while fewer than ncqTags are in flight, else when the
// earliest of them completes. Trims and flushes are non-queued commands
// and take none.
func (d *Drive) tag(at time.Duration) time.Duration {
	for len(d.tags) > 0 && d.tags[0] <= at {
		d.tags = popTime(d.tags)
	}
	if len(d.tags) >= ncqTags {
		at = d.tags[0]
		d.tags = popTime(d.tags)
	}
	return at
}
