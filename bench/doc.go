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
// seconds run from the end of its ramp to its last completion (or the
// end of a thinktime after it, which fio's thread sleeps through), so
// IOPS and MB/s (10^6 bytes/s) include the drain of the last requests. Each job has
// a per-second time series. For simulated targets the report carries the
// model's counters summed over the device stack (report.go).
//
// # fio job files
//
// ParseFio reads fio's INI format: [global] and job sections, key=value or
// bare boolean keys, comments starting with ';' or '#' (whole lines, or
// after blank space), include directives and ${VAR} from the environment.
// ParseFioArgs reads fio's command-line form (--name=x --rw=...). Options of
// a [global] section apply to the job sections that follow it. Sizes use
// fio's units with kb_base and zones ("4z"); times default to seconds
// (thinktime and latency_target to microseconds). A file's errors are all
// reported at once, each with file:line, the option and why.
//
// Honoured (see fio.go for the list): patterns with rw's ':' modifier,
// rw_sequencer and percentage_random; per-direction bs, bsrange, bssplit,
// blockalign; size, filesize (and ranges), offset (also in percent),
// io_size, number_ios, fill_device, offset_increment; nrfiles,
// file_service_type, openfiles=1; random_distribution (uniform, zipf,
// pareto, normal, zoned, zoned_abs, sequence), fio's random map (uniform
// random offsets cover each block once per pass; a used block gives way
// to the next free one) and norandommap (drawn with replacement),
// random_generator=lfsr (each block once per pass, in a fixed order);
// sprandom, spr_op, spr_num_regions and spr_cs (SPRandom preconditioning,
// sprandom.go); flow, flow_id and flow_sleep (jobs throttled against each
// other in proportion to their weights, flow.go); rate, rate_iops per direction, rate_process,
// rate_min; thinktime after thinktime_blocks I/Os completed or issued
// (thinktime_blocks_type) or thinktime_iotime of I/O, once the I/Os in
// flight complete, thinktime_spin of it spun on a real target's CPU,
// rate_ignore_thinktime (think.go, as fio's handle_thinktime); latency_target (a search for the deepest queue
// that meets it, reported in the result's notes), steadystate (the job
// ends when its per-second samples meet it); verify (data that is a
// function of file and offset, read back after the writes or every
// verify_backlog writes and compared on real targets; simulated targets
// store no data and only pay for the reads); verify-trim
// (trim_percentage of the writes logged for verify trimmed in batches of
// trim_backlog_batch every trim_backlog writes, then verified as zeros,
// or not verified with trim_verify_zero=0, as fio's trim.c); create_only
// (the files laid out, no I/O); create_fsync=0 (a layout not fsynced);
// allow_file_create=0 (a job whose file does not exist fails); invalidate
// (a path target's cached pages of the job's files dropped before it,
// fio's default); sync, fsync, fdatasync,
// end_fsync, fsync_on_close, pre_read; stonewall, new_group, wait_for (a
// job that waits for one of its group starts a new group), exitall,
// continue_on_error; zonemode=strided and zonemode=zbd (emulated zones, as
// fio emulates them on a device without zones, with zone_reset_threshold
// and zone_reset_frequency); the engines null (and cpp_null, fio's null
// engine built as an external one), filecreate, filestat, filedelete, dircreate, dirstat, dirdelete,
// ftruncate and falloc where the target can do them (fileops.go), the
// block engines (IOKind says what an I/O does; Engine, below, how a path
// target submits it); zero_buffers, buffer_pattern,
// buffer_compress_percentage, buffer_compress_chunk and scramble_buffers
// (what a real target is written, buffer.go). A filename that names a block device
// (/dev/sdb) is the target's whole address space where the target is one
// device; on a directory it is a sparse file of which only the jobs'
// ranges (offset to offset+size) are laid out; an absolute path is a file
// at that path inside the target; /dev/null and /dev/zero are the null
// engine.
//
// ioengine says how a path target submits (see Engine): io_uring (files
// registered with registerfiles, buffers with fixedbufs, as in fio), libaio (io_submit),
// psync, sync, vsync, pvsync and pvsync2 (one I/O in flight per job
// instance whatever iodepth says, as in fio); posixaio and windowsaio
// select the best asynchronous engine there is; mmap submits as psync,
// and the null and file engines submit nothing. A job file without ioengine gets fio's default, psync; the
// built-in suites use the best asynchronous engine, as the tools they
// reproduce submit overlapped I/O. Without io_uring, direct jobs fall
// back to libaio and then, like buffered ones, to a thread per
// outstanding I/O (nasemu bench says so on stderr). Simulated, SMB and
// iSCSI targets keep iodepth I/Os in flight whatever the engine.
// fallocate (native, the default; posix; keep; none or truncate) is how a
// path target preallocates the files it lays out, after checking that
// the file system has room for them.
//
// Options that change nothing the device sees (CPU placement, priorities,
// reporting) are accepted and recorded in the result's settings; those
// nasemu approximates (submission batching, io_submit_mode, iodepth_low,
// rate_cycle, per-write buffer refills and dedupe, create_on_open for
// block engines, atomic) are accepted with a note in the result. Options
// that cannot apply (FDP, protection information, I/O logs, command
// execution) and unknown ones are errors, and so are options that would
// change the I/O in a way nasemu does not reproduce, when set
// (refusedWhenSet: sync_file_range, bs_is_seq_rand, hipri, sqthread_poll,
// experimental_verify, ...).
//
// # Limits
//
// A run holds at most Limits in flight: I/Os (iodepth × numjobs summed
// over a group, 65536), bytes (iodepth × numjobs × the largest block, 4
// GiB), job instances (4096), files per job, file sizes, job sections per
// file (1024). ParseFio and Run refuse more with an error.
//
// # fio's output
//
// Report.WriteFio writes fio's json, json+, normal and terse output
// (fioout.go): per direction, clat and lat with min, max, mean, stddev and
// percentiles (percentile_list; lat's with lat_percentiles) in fio's
// latency buckets, bandwidth and
// IOPS samples (one a second), iodepth_level, latency_ns/us/ms, slat
// where the engine queues, and disk_util (diskutil.go: /sys/block's
// statistics of the disk under a path target; on sim: what the setup's
// device was asked, its util the share of the run it had a request in
// flight, and on a setup with an array fio's aggr_* figures: the array's
// member requests, sectors, ticks and in_queue per member, aggr_util the
// busiest drive resource of the model's busy-time accounting); a job's
// clones one by one, or with group_reporting its reporting group as one.
// Report.WriteLogs writes write_bw_log, write_lat_log, write_iops_log and
// write_hist_log files in fio's format (log_avg_msec windows).
//
// # Differences from fio
//
// Random offsets are aligned to blockalign or the smallest block size; a
// random map larger than 2^28 blocks per job instance is replaced by a
// permutation of the blocks (still each once per pass). Jobs with openfiles=1 (file-by-file: create or open, transfer, close,
// next file) run at iodepth 1. Jobs of a group with the same file name
// share it, as in fio; laying out a file for reads writes it once,
// sequentially, before the group's clock starts. The clock starts once
// every job instance's buffers are filled and its engine is set up; the
// I/Os in flight when a runtime ends are waited for and counted, as fio
// counts them, so a runtime shorter than one I/O still measures the
// queue it filled. On a path target's
// asynchronous engines (io_uring, libaio) clat runs, as in fio, from the
// return of the system call that submitted the I/O, lat from its
// preparation, and slat, the difference, is recorded as fio records it;
// a write's buffer is filled (verify pattern, scrambling) after its
// preparation, as fio fills it after taking its start time, so the fill
// counts in lat and slat and not in clat, on the synchronous engines too
// (their lat runs from the preparation, their clat from the issue).
// The synchronous engines have no slat, as in fio, and neither has a
// sim: target: its models' latencies are measured at the host and hold
// the submission, which nothing in them separates.
// On a sim: target, I/O that reaches no device (the null engine,
// /dev/null and /dev/zero, fallocate, an emulated zone's reset) takes the
// host CPU time measured for it with fio (hostcost.go), one at a time per
// job instance; a time-based job whose I/O still takes no simulated time
// (a file engine on a bare drive) stops with an error.
package bench
