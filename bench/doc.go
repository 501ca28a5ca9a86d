// Package bench is nasemu's workload engine: fio-style jobs and the suites
// reviewers run (CrystalDiskMark, IOmeter, diskspd, file copies), run
// identically against a simulated setup, a local path and, later, SMB
// shares and iSCSI LUNs, with the same report.
//
// # Jobs, suites, targets
//
// A Job is one fio workload (job.go); ParseFio reads real fio job files
// and rejects, with file:line and the option, anything it would not honour
// (fio.go). A suite is a named list of jobs reproducing a tool's default
// run (suites.go). A Target is where the I/O goes (target.go): Sim runs a
// models.Device in virtual time (sim.go), Path a directory, file or block
// device in wall-clock time (path.go). Targets are opened through a
// Registry that maps an address's scheme to a Factory; the program
// registers them explicitly, so new schemes plug in without touching the
// runner.
//
// # One runner, two clocks
//
// Run (runner.go) splits the jobs into groups at stonewalls. Each job has
// numjobs instances (streams), each keeping iodepth slots busy. The runner
// decides what a slot does next (offset, size, read or write, fsync,
// open/close for file-by-file jobs) and accounts for what it did; the
// target's Clock decides when (clock.go). The VirtualClock is a
// discrete-event loop: a min-heap of slot events ordered by time and then
// by sequence number, so a run is deterministic; a slot's next request is
// submitted at the completion time of the one it replaces. The WallClock
// runs one goroutine per slot with blocking pread/pwrite, locking only the
// runner's bookkeeping.
//
// # Measurement
//
// Latency of each I/O is measured from its issue (from its intended
// arrival for rate_iops jobs, so queueing behind a slow device counts:
// no coordinated omission) to its completion, into an HDR histogram
// (stats.go). Results count I/Os that complete after ramp_time; a job's
// seconds run from the end of its ramp to its last completion, so IOPS and
// MB/s (10^6 bytes/s) include the drain of the last requests. Each job has
// a per-second time series. For simulated targets the report carries the
// model's counters summed over the device stack (report.go).
//
// # fio job files
//
// ParseFio reads fio's INI format: [global] and job sections, key=value or
// bare boolean keys, full-line comments starting with ';' or '#'. Options
// of a [global] section apply to the job sections that follow it. Sizes use
// fio's units with kb_base (default 1024: k, KB and K are 1024 while KiB is
// 1000, fio's compatibility mode; kb_base=1000 swaps them); times take
// us, ms, s, m, h or d and default to seconds.
//
// Options that change the I/O pattern are either honoured or rejected with
// an error naming file:line and the option; none is silently ignored.
// Honoured: name, rw/readwrite, rwmixread/rwmixwrite, bs/blocksize (one
// size, or "R,W" with R = W), bssplit (one list), size, filesize, offset,
// iodepth, numjobs, runtime/timeout, time_based, ramp_time, startdelay,
// loops, nrfiles, openfiles (1 means file by file), file_service_type
// (roundrobin, or sequential with openfiles=1), filename (':'-separated),
// filename_format ($jobname, $jobnum, $filenum), directory (relative),
// fsync, fdatasync (as fsync), end_fsync, direct, buffered, unlink,
// random_distribution (random|uniform, zipf:THETA, pareto:H), randseed,
// rate_iops (one rate), rate_process (linear|poisson),
// stonewall/wait_for_previous, kb_base, overwrite=0, ioengine and
// fallocate.
//
// ioengine says how a path target submits (see Engine): io_uring (files
// and buffers registered), libaio (io_submit), psync, sync, vsync, pvsync
// and pvsync2 (one I/O in flight per job instance whatever iodepth says,
// as in fio); posixaio and windowsaio select the best asynchronous engine
// there is. A job file without ioengine gets fio's default, psync; the
// built-in suites use the best asynchronous engine, as the tools they
// reproduce submit overlapped I/O. Without io_uring, direct jobs fall
// back to libaio and then, like buffered ones, to a thread per
// outstanding I/O (nasemu bench says so on stderr). Simulated, SMB and
// iSCSI targets keep iodepth I/Os in flight whatever the engine.
// fallocate (native, the default; posix; keep; none or truncate) is how a
// path target preallocates the files it lays out, after checking that
// the file system has room for them.
//
// Accepted without effect, because they do not change what reaches the
// device:
// allow_mounted_write, clat_percentiles, create_on_open, description,
// disk_util, group_reporting, lat_percentiles, new_group,
// percentile_list, thread, unified_rw_reporting; randrepeat (runs are
// always repeatable), norandommap (offsets are always drawn with
// replacement) and invalidate (nasemu never drops the page cache: use
// direct=1 to measure storage rather than memory on real targets).
//
// # Differences from fio
//
// Random offsets are drawn with replacement (fio's norandommap), aligned to
// the smallest block size. Jobs with openfiles=1 (file-by-file: create or
// open, transfer, close, next file) run at iodepth 1. Jobs of a group with
// the same file name share it, as in fio; laying out a file for reads
// writes it once, sequentially, before the group's clock starts.
package bench
