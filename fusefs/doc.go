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
// Close, Remove, Stat) and fsync as a Flush through the model. The file
// operations on a regular file name it as the sim: target does: by the
// volume address of its first byte and its size (a file being created, by
// where its first block will go and the rest of the volume). Layers of the
// model key state on that range — the SMB client's read-ahead and
// write-behind within the open file, the NAS's inode page — so a share
// whose opens named no range cost a sequential reader what a random one
// pays (1 MiB reads at queue depth 1 on one HDD behind 1GbE: 0.8× the
// sim's throughput).
//
// Every read and write passes through this package: go-fuse's loopback
// would hand the backing file to the kernel for FUSE passthrough, so file
// handles here do not offer a passthrough descriptor.
//
// # Pacing
//
// A request is answered when the model says it completes, less the time a
// request spends in the kernel and in FUSE outside the model, so that the
// latency a client measures is the model's. That time grows with how long
// the client waited (a thread that slept milliseconds is woken on an idle
// processor), so it is measured at mount at several waits and
// interpolated at each request's (compensation.go; Options.Compensation
// fixes it instead). The bytes move between the client and the backing
// file while the modelled time runs (emu.Volume.Access), so the backing
// file's own time is hidden inside the model's.
//
// A client at queue depth 1 takes time of its own between one answer and
// its next request, and so does FUSE; the sim: target's client issues the
// next request at the completion of the last. A request that arrives while
// nothing else is in flight, within Options.ClosedLoop of the latest
// completion, is therefore charged at that completion
// (emu.Options.ClosedLoop): the model sees the request stream the sim:
// target submits, and a client's throughput is the model's however noisy
// the host. Longer pauses are the client's and are kept.
//
// The client's O_DIRECT opens are honoured with FOPEN_DIRECT_IO (no client
// page cache, every read reaches the model) and
// FOPEN_PARALLEL_DIRECT_WRITES (the kernel would serialise the direct
// writes of one file); the mount asks for asynchronous direct I/O, so that
// a client's queue of O_DIRECT requests (libaio, io_uring) reaches the
// model together rather than one at a time. Backing files are opened
// without O_DIRECT, as they are only where the bytes are kept.
//
// scripts/fuse-fidelity.sh compares fio and nasemu bench on a mount with
// nasemu bench on sim: of the same setup; TestFidelity checks the stable
// cases within ±10 %.
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
// PowerLoss restores them, so exactly the unsynced writes are lost. Like a
// NAS's page cache, the log is written back (the files fsynced, their undo
// state dropped) when it exceeds Options.UndoLimit bytes, when a file's
// oldest unsynced write is 30 s old, and beyond 1024 dirty files.
//
// The namespace (creates, mkdirs, renames, deletes) and truncations are
// not rolled back. What a NAS would lose of them: its filesystem (ext4 or
// btrfs) journals namespace changes in a running transaction that is
// committed every few seconds (ext4: 5 s, the model's
// nas.Config.JournalInterval) and by any fsync, of any file; a power loss
// loses the running transaction, that is the namespace changes of the last
// few seconds unless an fsync came after them. Data ordering (ext4's
// data=ordered) keeps a committed size from exposing unwritten data. So
// after a loss the hardware shows one of several states, from "every
// namespace change was committed just before the loss" to "those since the
// last commit are gone". PowerLoss produces the first: the namespace as it
// was, with the unsynced data of every file undone (a file created and
// written since its last fsync is there, empty or at its synced size).
// That is a state the hardware can produce, so an application that
// survives it is not wrong to; but PowerLoss never produces the others,
// so it does not catch an application that relies on a rename or create
// being durable without an fsync of the file (or of its directory) after
// it — the classic missing fsync before or after rename(2) on a fresh
// file shows up only as lost data, not as a lost rename. Rolling back the
// running transaction would need a journal of its own here: a delete
// would have to keep the file (a hidden hard link and its extents) until
// the next commit, a rename remember the name it replaced, each undone in
// reverse order, against a backing directory the emulator does not own
// exclusively (it reconciles external changes at mount). That is not done.
package fusefs
