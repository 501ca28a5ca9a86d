// Package hdd models a hard disk drive from its datasheet: spindle speed,
// zoned recording, a seek curve, command overhead, a DRAM buffer with
// read-ahead and write-back, native command queuing and the SATA link.
//
// # Geometry
//
// LBA 0 lies at the outer edge. The stroke is cut into zones of equal
// radial width; each zone records at a constant rate, falling linearly from
// the datasheet's sustained rate in the outermost zone to the inner rate
// (half of it by default) in the innermost, so outer zones also hold more
// bytes. Every byte has a radial position x (0 outer, 1 inner) and a media
// time T, the time a continuous transfer from LBA 0 would take to reach it.
//
// # Rotation
//
// The platter angle is tracked from simulated time, never drawn at random:
// the head passes over byte b whenever (t + phase) mod rev = T(b) mod rev,
// where phase is the spindle's angle at time 0 (set from the seed, so the
// drives of an array are not in lockstep). A sequential transfer that
// continues where the last one ended waits for nothing; one that arrives a
// little late waits almost a whole revolution, as on a real drive, which is
// what read-ahead and write-back exist to hide.
//
// # Positioning
//
// A media access costs a seek (see seekCurve: square root of the distance
// for short seeks, linear for long ones, fitted so that the mean over two
// random LBAs is the datasheet's average seek), the rotational wait for the
// first byte, and the transfer at the zone's rate (T(end) − T(start)).
// Every command also pays the controller overhead before it reaches the
// mechanism; with other commands queued that overhead overlaps their
// mechanical work.
//
// # Queuing
//
// The head is one resource with a "busy until" time. Up to QueueDepth
// commands queue at the drive, and the head's next slot goes to the queued
// position that is cheapest to reach (shortest positioning time first);
// see ncq.go for how that is done under reservation and what it does not
// reproduce.
//
// # Buffer
//
// Reads are served from read segments filled by earlier reads and by
// read-ahead that runs while the head is otherwise idle; writes are
// acknowledged from the buffer and destaged lazily in idle time, cheapest
// range first, but never before their data has crossed the link: idle time
// before a burst is not spent on it. Flush waits for the media. See
// cache.go.
//
// # Link
//
// Data crosses the SATA link at its payload rate; a drive on a 3 Gb/s port
// is capped at ≈ 275 MB/s whatever its media rate.
//
// # Invariants
//
//   - Completion times never precede submission times; the head's slots
//     never overlap; no byte is transferred faster than its zone's rate;
//     no byte is written to the media before the write carrying it is in
//     the buffer.
//   - The same configuration and seed give identical completion times and
//     counters; the model draws no random numbers after New.
//   - Submissions may arrive out of time order; a submission earlier than
//     the head's busy time simply queues behind it.
//   - Submit does not allocate.
package hdd
