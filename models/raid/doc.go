// Package raid models RAID arrays: single drives, RAID 0, n-way RAID 1,
// RAID 5, RAID 6, RAID 10, JBOD and Synology Hybrid RAID (SHR) over member
// devices (drive models, or any models.Device).
//
// An Array is a models.Device. It splits each request by its layout into
// member requests, submits them to the members (some at future times, such
// as the write phase of a read-modify-write) and completes when the last
// member request does. Queueing, parallelism and contention come from the
// members' own reservations; the array adds no time of its own (parity is
// computed by a CPU that the NAS model charges, not here).
//
// # Layouts
//
//   - single: one drive. jbod: the drives concatenated, in order.
//   - raid0: chunk c on member c mod n.
//   - raid1: every member holds everything at the same offset.
//   - raid10: md's "near 2" layout: chunk c on both members of mirror pair
//     c mod (n/2).
//   - raid5: md's default left-symmetric layout: the parity chunk of row r
//     is on member n-1-(r mod n), the row's data chunks follow it and wrap.
//   - raid6: md's left-symmetric RAID 6: P as RAID 5, Q on the member after
//     P, data after Q.
//   - shr: layers of RAID 5 (RAID 1 for a two-drive layer) over slices of
//     the drives, concatenated; with equal drives, one RAID 5 (shr.go).
//
// Striped levels and mirrors use the smallest member's size on every member
// (rounded down to a whole chunk where striped); no metadata is reserved.
// Usable gives an array's capacity and failure tolerance without building
// it.
//
// # Reads and writes
//
// Each request is cut into chunk pieces; the pieces bound for one member
// that are contiguous there are gathered into one member I/O. Mirrored
// reads go whole (RAID 10: per chunk) to the copy whose member frees up
// first by this array's bookkeeping, ties to the lower member, so results
// are deterministic and a lone sequential stream stays on one member.
// Parity writes are full-stripe writes (no reads) where whole rows are
// written, and otherwise read-modify-write or reconstruct-write, whichever
// reads fewer members (parity.go explains the choice and why there is no
// stripe cache). With Config.Coalesce (Intel RST's write coalescer) writes
// of whole chunks that leave a row partial are held until the row is
// complete and then written as a full stripe (gather.go). Flush goes to
// every present member, after the held rows. Trim maps to member
// ranges; on RAID 5 and 6 only whole rows are trimmed, data and parity.
//
// # Members and time order
//
// The write phase of a partial-stripe write is submitted to the members at
// the time its reads complete, a time later than the request's. Within a
// request the array submits the I/O due at once first and the write
// phases after it, in time order. Members must serve requests in order of
// arrival time rather than of submission (models/timeline does this): a
// member that queued a request behind one submitted earlier but due later
// would sit idle until that one is due, and a RAID 5 of such members
// reaches only about 55 % of the N × drive / 4 random-write rate at any
// queue depth.
//
// # Faults
//
// FailMember, ReplaceMember and Status (the MemberFailer, MemberReplacer
// and StatusReporter interfaces) inject drive failures and replacements.
// A failed member gets no I/O: mirrors read the surviving copy; parity
// arrays reconstruct the lost chunk from the rest of its row (a degraded
// read costs a read on every surviving member of the row) and leave it
// out of writes. Once more members have failed than a segment's level
// survives (raid0, single and jbod: any one; raid10: both of a pair) the
// array is failed for good and every request returns an error wrapping
// models.ErrFailed that names the array and its lost members. A
// replacement is rebuilt in the background, lazily, at the configured rate
// and in competition with foreground I/O (rebuild.go); while it runs, the
// part already rebuilt is served from the replacement and the rest as
// degraded.
//
// A member that refuses an I/O with an error wrapping models.ErrFailed (a
// drive that died, an unreadable sector; see package fault) is failed as
// md's error handler fails it, and the request is served again from the
// redundancy left, so the client sees the error only when no redundancy
// is left. A rebuild's read that fails fails its source member, a write
// that fails fails the replacement.
//
// # Counters
//
// member_reads, member_writes, member_bytes_read, member_bytes_written,
// member_read_ns, member_write_ns, member_queue_ns (the members' time
// with the array's requests in them, as /proc/diskstats' ticks),
// read_modify_writes, reconstruct_writes, full_stripe_writes (rows),
// degraded_reads (chunk pieces reconstructed), rebuild_progress_pct,
// rebuild_bytes and failed_members (see Counters).
//
// Arrays are not safe for concurrent use, and Submit does not allocate.
package raid
