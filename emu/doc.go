// Package emu runs a performance model in wall-clock time over a real data
// store: an emulated volume that stores real bytes and answers each request
// when the model says the modelled hardware would.
//
// A Volume is a Store (where the bytes live: sparse memory, or a file with
// real fsync), a models.Device (what it costs) and a Clock (how model time
// maps onto the wall clock). Every ReadAt, WriteAt, Sync and Trim is charged
// to the model at its arrival time, done on the store, and returned when the
// model's completion time has passed. Access serves a request whose bytes
// the caller moves itself (a filesystem's backing file) and which reaches
// the volume in several parts (a fragmented file's extents). The clock
// parks each waiting request on a kernel timer armed for its deadline (a
// request waiting alone is woken a little early and spins the rest, and a
// watchdog thread wakes it when the runtime, with no thread polling, has
// not; the last waiting request's wake-up also wakes a spare runtime
// thread, which then polls the process's sockets), so that deadlines are
// met to microseconds (see WallClock). With
// Options.ClosedLoop a queue-depth-1 client's own time between requests is
// not charged: the model sees its requests back to back, as a simulated
// client issues them.
//
// Faults act on the model under a running volume: FailMember and
// ReplaceMember on its first array (faults.go), injected rules of
// models/fault in front of the whole model (InjectFault, FaultRequest),
// and SaveArrays/LoadArrays keep the arrays' failed and rebuilding
// members across restarts (arraystate.go).
//
// # Invariants
//
//   - The model is shared by every caller: Submit calls are serialised by the
//     volume's lock; data operations run outside it, so concurrent requests
//     overlap as they would on the hardware.
//   - A request the model fails (a failed array, a request beyond capacity)
//     is not applied to the store.
//   - Data acknowledged by a Sync survives anything the emulator simulates
//     (power loss of a volatile write cache) and, with a FileStore, the
//     emulator process being killed. Acknowledged but unsynced writes are lost
//     on a simulated power loss only when the volume's store keeps them
//     where a power loss takes them (a PowerLosser): a volatile write cache
//     (VolatileStore), or a NAS's page cache in front of a file-backed LUN
//     (UndoStore, which writes through and undoes), exactly as on the
//     hardware.
package emu
