// Package sweep runs a capacity planner's sweep: a base setup, axes of
// setup keys with the values each takes, and workloads, crossed into
// points; each point is the base with its keys set (setup.WithAll, the
// mechanism of compare's --set) and one workload, simulated in virtual
// time.
//
// # Spec
//
//	name: example                    # default: the spec file's base name
//	base: ds1817-raid5-hdd-smb-1g    # a built-in setup, or a setup file (relative to the spec)
//	seed: 1                          # seed of every point's models and offsets (default 1)
//	set:                             # keys every point gets (optional)
//	  protocol: smb3
//	workloads:                       # one or more
//	  - {suite: cdm, size: 4GiB, runtime: 1s}
//	axes:                            # crossed in order, the last varying fastest
//	  - key: drives.model
//	    values: [wd-red-4tb, kingston-dc500m-480g]
//	  - key: link                    # a value is any YAML a setup file takes there
//	    values: [1gbe, {kind: 10gbe, count: 2, mode: smb-multichannel}]
//	steady: true                     # end a job once steady (optional; or a round's completions)
//
// A key is any dotted key of a setup file (drives.model, drives.count,
// raid.level, raid.chunk, cache.mode, nas, link, link.kind, protocol,
// encryption, drives.overprovision, ...). Point i of N is the i-th of the
// cross product with the workloads as the last, fastest axis. Mistakes in
// the spec — an unknown key of the spec or of a setup, an unknown drive,
// system, link kind or RAID level, an empty axis, a cross product of more
// than MaxPoints — are errors naming the spec's file, line and key before
// anything runs. A combination no real system allows (RAID 6 on two
// drives, more drives than bays) is a point whose record carries the
// setup's own message instead of results.
//
// # Steady state
//
// With steady, every job (but one whose job file gives its own ss=) runs
// under SNIA PTS's steady-state criterion in virtual time: its
// completions are cut into rounds of DefaultSteadyRound (or the given
// number), a round's figure is its IOPS over its own span of model time,
// and the job stops issuing I/O once the last five rounds' range is within
// 20 % of their mean and their best-fit line's excursion within 10 %
// (bench.Steady.RoundIOs). A job that meets it reports when (Job.Steady),
// and the header names the criterion; the CSV, table and Parquet then
// carry steady and steady_at_s columns. Without steady, outputs are as
// before, byte for byte.
//
// # Results
//
// A Record holds one point: its axis values, the setup's price (the
// catalog's street prices of system and drives), usable capacity and
// drives tolerated, and each job's figures. Records are the same whatever
// the parallelism, the shard or the order points finish in: each point
// builds its own models from the spec's seed. They are written as JSON
// lines (a Header line, then one record per point) into shard files,
// which Merge reads back; the table, CSV and JSON outputs are made from
// records alone, so a merged sweep prints byte for byte what one process
// prints.
package sweep
