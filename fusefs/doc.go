// Package fusefs mounts an emulated NAS share: a FUSE filesystem whose
// files live in a real backing directory and whose every operation costs
// what the modelled NAS would charge for it — as slow, as full and as broken
// as the modelled hardware.
//
// # Data and cost
//
// The bytes of each file live once, in the backing file of the same name;
// they persist across mounts and are fsynced when the client fsyncs. The
// cost of an access is charged to an emu.Volume whose model is the NAS (its
// protocol, controller, cache, RAID and drives): an extent allocator
// (package emu/extent) maps each file's blocks onto the volume's address
// space, and a read or write of the file is charged as reads or writes of
// the mapped addresses. Sequential and random access, fragmentation after
// deletes, and a nearly full volume therefore cost what they would on the
// array. Holes are free. The volume's own store is a charge-only store: the
// volume paces and counts, the backing directory holds the data.
//
// Metadata operations are charged as file operations (models.Create, Open,
// Close, Remove, Stat) and fsync as a Flush through the model.
//
// Every read and write passes through this package: go-fuse's loopback
// would hand the backing file to the kernel for FUSE passthrough, so file
// handles here do not offer a passthrough descriptor.
//
// # Pacing
//
// A request is answered when the model says it completes, less the time a
// request spends in the kernel and in FUSE outside the model (measured at
// mount, Options.Compensation), so that the latency a client measures is
// the model's. The client's O_DIRECT opens are honoured with
// FOPEN_DIRECT_IO (no client page cache, every read reaches the model);
// backing files are opened without O_DIRECT, as they are only where the
// bytes are kept.
//
// # Capacity and faults
//
// statfs reports the modelled usable capacity and the allocator's free
// space; a write that needs blocks the allocator does not have fails with
// ENOSPC before anything is written. Model errors become errno values only
// here (see errno.go): a failed array gives EIO.
//
// Faults are injected while mounted through a control interface (ctl.go):
// JSON lines on a Unix socket — {"cmd":"status"}, {"cmd":"fail","member":N},
// {"cmd":"replace","member":N}, {"cmd":"power-loss"} — answered by a
// ControlResponse line. Failing and replacing act on the first device of
// the model that implements raid.MemberFailer / raid.MemberReplacer; the
// replacement drive comes from Options.Replacement.
//
// # Metrics
//
// Metrics (metrics.go) are Prometheus metrics of the FUSE operations
// (count, errors, bytes, latency, in flight), of the volume (requests,
// queue depth), of the capacity, and — read at each scrape — every counter
// of every device of the model and each array's state and rebuild progress.
//
// # Allocator state
//
// The allocator's state is saved in a hidden file (StateFile) in the
// backing directory at unmount, and reconciled with the backing files at
// mount: files that changed size are trimmed, files the state does not know
// (written while not mounted, or after a crash) get fresh extents for their
// data ranges, vanished files are freed. A remount therefore keeps the
// layout, and a crash costs at worst a re-layout of the files written since
// the last clean unmount.
//
// # Power loss
//
// A NAS without battery backup loses what sits in its page cache. The
// filesystem keeps, for each file written since its last fsync, the synced
// contents of every block it overwrote (an undo log) and the synced size;
// PowerLoss restores them, so exactly the unsynced writes are lost. The
// namespace (creates, renames, deletes) and truncations are not rolled
// back. Like a NAS's page cache, the log is written back (the files
// fsynced, their undo state dropped) when it exceeds Options.UndoLimit
// bytes, when a file's oldest unsynced write is 30 s old, and beyond 1024
// dirty files.
package fusefs
