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
// write-behind within the open file, the NAS's inode page — and a share
// whose opens named no range would cost a sequential reader what a random
// one pays (docs/notes/fuse-mount.md).
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
// {"cmd":"replace","member":N}, {"cmd":"power-loss"},
// {"cmd":"fault","fault":"RULE|list|clear"} — answered by a
// ControlResponse line. "fault" arms a models/fault rule on the share's
// volume (emu.Volume.FaultRequest): an injected failure is EIO. Failing and replacing act on the first device of
// the model that implements raid.MemberFailer / raid.MemberReplacer; the
// replacement drive comes from Options.Replacement.
//
// The arrays' health outlives the mount, as an md array's members carry
// it in their superblocks: every fail and replace, before it is answered,
// and the unmount save each array's failed and rebuilding members in a
// hidden file of the backing directory (ArrayStateFile, saved and loaded
// by emu.Volume),
// and the next mount fails and replaces them again. So an array comes
// back degraded, rebuilding (from the start: md resumes from a
// checkpoint, which costs less time) or failed, and status shows it; the
// file is removed once every array is optimal. A saved array that the
// setup does not have stops the mount.
//
// # One share per backing directory
//
// A share holds an exclusive lock (flock) on its backing directory from
// New to Unmount, as emu.FileStore does on a LUN file: two emulators of
// one directory would allocate its blocks twice and undo each other's
// files. A second share of it, in this process or another, is refused
// with an emu.InUseError naming the holder's PID and command line. The
// lock goes with the process however it ends.
//
// # Metrics
//
// Metrics (metrics.go) are Prometheus metrics of the FUSE operations
// (count, errors, bytes, a latency histogram per operation, in flight), of
// the volume (requests, queue depth), of the capacity, and — read at each
// scrape — every counter of every device of the model and each array's
// state and rebuild progress. modelmetrics.go says how each model counter
// is exported: a counter (_total) or a gauge, in base units (seconds,
// bytes, ratios), with a help text that says what it counts, and labels
// that say which array and drive it is of (array="raid5", drive="3";
// array="cache" for an SSD cache's drives) beside the device's unique
// place in the stack (device="0/0/0/2/3/0"). 'promtool check metrics'
// passes on a running mount's /metrics (a test), and
// contrib/grafana/nasemu.json is a dashboard of them.
//
// # Allocator state
//
// The allocator's state is saved in a hidden file (StateFile) in the
// backing directory at unmount, and reconciled with the backing files at
// mount: files that changed size are trimmed, files the state does not know
// (written while not mounted, or after a crash) get fresh extents for their
// data ranges, vanished files are freed. A remount therefore keeps the
// layout, and a crash costs at worst a re-layout of the files written since
// the last clean unmount. The journal's holding directory (see Power loss)
// is not part of the layout: a mount commits what a crash left there
// before it reconciles.
//
// # Power loss
//
// A NAS without battery backup loses what sits in its page cache and the
// running transaction of its filesystem's journal. PowerLoss (the control
// interface's "power-loss") produces the state after such a loss that
// catches applications which rely on what they never made durable: every
// unsynced write is undone, and so is every namespace change since the
// last journal commit, newest first.
//
// Data: for each file written since its last fsync the filesystem keeps
// the synced contents of every block it overwrote (an undo log) and the
// synced size; PowerLoss restores them, so exactly the unsynced writes are
// lost. Blocks that were holes of the backing file are kept as holes, not
// read, and punched back. Like a NAS's page cache, the log is written back (the undo state
// dropped; the bytes are in the backing files, which the host writes to
// its disk in its own time, and a clean Unmount fsyncs) when it exceeds
// Options.UndoLimit
// bytes, when a file's oldest unsynced write is 30 s old, and beyond 1024
// dirty files.
//
// Namespace (journal.go): the NAS's filesystem (ext4 or btrfs) journals
// namespace changes in a running transaction that commits every
// JournalInterval (ext4: 5 s; Options.JournalInterval, which a caller
// sets from the model's nas.Config.JournalInterval) and at any fsync of
// any file or directory. The share records each change since the last
// commit — a create (of a file, directory, node, symbolic or hard link),
// delete, rmdir, rename (also over an existing target, or exchanging two)
// and truncation to a smaller size — and PowerLoss undoes them in reverse
// order: a file created since is gone with its data, a deleted one is
// back with its synced data, a renamed one is at its old name with its
// synced data, the target a rename replaced is back, a removed directory
// is made again with its mode, owner and times, a truncated file has its
// synced size and contents again. The kernel's cached entries and pages
// of what changed are invalidated. So create, write and fsync survive; a
// write of a temporary file renamed over the real one without an fsync
// after the rename loses the rename (the old file is back), and without
// an fsync before it the new file's data too.
//
// A deleted file, and the target a rename replaces (hard-linked there
// first, so the rename stays atomic), wait for the commit in a hidden
// directory of the backing directory (HoldDir; the share neither lists
// nor finds it, nor lets a client create that name at its root, nor
// counts its links in st_nlink: a deleted file still open has none) with
// their blocks still allocated: statfs counts them as free at once, as
// ext4 does, but a write reuses them only after the commit, which a write
// that does not fit forces, as ext4 forces one. The commit deletes them;
// a clean unmount commits and removes the directory. A truncation frees
// its blocks at once and keeps what it cut off in the undo log; the
// commit makes it durable. The interval is computed from timestamps at the
// next namespace change, fsync, statfs, status or power loss — no timer
// runs. A transaction also commits at 8192 changes (jbd2 commits one that
// fills a quarter of the journal). A negative JournalInterval commits
// every change at once: the namespace then survives a power loss, as
// before the journal existed.
//
// The NAS reboots (reboot.go). A client's handle does not outlive the
// server that issued it: every file and directory opened before a power
// loss is stale after it, and every call through it — read, write, fsync,
// ftruncate, readdir, close — fails with EIO; what is opened after
// the loss works as ever. So no write or fsync is acknowledged through a
// handle whose file the loss removed or whose unsynced data it undid. A
// write in flight across the loss is either undone by it and answered
// EIO, or comes after it; an fsync in flight either commits before the
// loss (and what it acknowledged survives it) or fails. The kernel's
// pages and attributes of the open files are dropped, so that reads
// through stale handles reach the share. Behind smbd (nasemu nas) the
// SMB client's open handles fail the same way; new opens work. The one
// exception is fstat: the kernel asks for a file's or a directory's
// attributes by node, not by handle (go-fuse passes the first open
// handle), so a stale one is answered from its path (ENOENT when the loss
// removed it) — else one descriptor left open across the loss would fail
// every stat of the file, by anyone. A read through a stale handle of a
// file the loss removed may end there too, with ENOENT; it never reads.
//
// An open directory keeps its attributes (dirHandle): a directory that
// rename(2) replaced or rmdir(2) removed while open answers fstat, fchmod,
// fchown and futimens through the descriptor of the handle, with its own
// inode number and mode, as on a local filesystem (go-fuse's loopback
// looks it up by a path that names another directory or none: go-fuse
// issue 55). It lives on in the backing filesystem, unlinked, only while
// it is open, so nothing of it stays in the backing directory.
//
// The emulator killed (SIGKILL) or crashed is not a power loss: the
// journal is not kept on disk, so the next mount cannot undo the running
// transaction, and commits it instead. The files left in the holding
// directory are deleted — only files whose names were gone — and the
// backing files keep whatever was written to them, synced or not: the
// state of a NAS that committed and wrote back everything just before it
// stopped, which the hardware can show too. Synced data of a live file is
// never lost. Anything in the holding directory that the journal does not
// make stops the mount rather than being deleted.
//
// What is not produced: PowerLoss always loses the whole running
// transaction, never a part of it (changes within a transaction are not
// reordered or partly committed; jbd2 commits a transaction whole), and
// the other extreme, a loss just after a commit that kept every change,
// comes only from an fsync before the loss or a negative JournalInterval.
// Attribute changes (chmod, chown, utimes, extended
// attributes), hole punching and other fallocate modes, and truncations
// that grow a file are not undone as namespace changes (a file with
// unsynced writes still gets its synced size back). The undo log's
// write-back makes data durable apart from the commit, so a file's data
// can be durable while its create is undone (the file is then gone, as on
// ext4 when the data reached the disk but the inode's transaction did
// not). Writes are not torn within a block. Changes made in the backing
// directory behind the emulator's back are not journaled; an undo that
// they get in the way of is logged and skipped.
//
// # Source files
//
//   - fs.go: Options, Front, the FS and its construction (New), Usage and
//     Layout.
//   - charge.go: charging operations to the volume (charge, chargeFile,
//     chargeIO) and the extent allocator's calls (mapRange, mapWrite,
//     truncate, remove); the charge-only store.
//   - node.go: the node (go-fuse's loopback node, charged), names the share
//     hides, Lookup, Getattr, Setattr with truncation, Statfs.
//   - open.go: Create and Open, and the flags a backing file is opened with.
//   - file.go: open file handles: Read, Write, Fsync, Flush, Release.
//   - splice.go: answering reads by splice from the backing file.
//   - front.go: what the front (direct or smbd) changes in open flags.
//   - namespace.go: Unlink, Rmdir, Mkdir, Mknod, Symlink, Link.
//   - rename.go: Rename, journaled or not.
//   - dir.go: open directories: listing, their attributes, fsync.
//   - mount.go, stale.go: mounting, unmounting, finding leftover mounts.
//   - journal.go, powerloss.go, reboot.go: the journal of namespace
//     changes, the undo log, and handles across a power loss.
//   - state.go, arraystate.go: the allocator's and the arrays' saved state.
//   - ctl.go: the control socket; metrics.go, modelmetrics.go: Prometheus.
//   - compensation.go: measuring the time spent outside the model.
//   - errno.go: the one translation of errors into errno values.
package fusefs
