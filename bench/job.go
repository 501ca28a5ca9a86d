package bench

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// RW is a job's access pattern, named as fio names it.
type RW uint8

// Access patterns. Mixed patterns choose read or write per I/O with
// probability RWMixRead percent.
const (
	Read      RW = iota // sequential reads
	Write               // sequential writes
	RandRead            // random reads
	RandWrite           // random writes
	ReadWrite           // sequential mixed (fio rw, readwrite)
	RandRW              // random mixed
)

var rwNames = [...]string{Read: "read", Write: "write", RandRead: "randread", RandWrite: "randwrite", ReadWrite: "rw", RandRW: "randrw"}

// String returns fio's name of the pattern.
func (rw RW) String() string {
	if int(rw) < len(rwNames) {
		return rwNames[rw]
	}
	return "rw(" + strconv.Itoa(int(rw)) + ")"
}

// Random reports whether offsets are chosen at random.
func (rw RW) Random() bool { return rw == RandRead || rw == RandWrite || rw == RandRW }

// readPct returns the share of reads in percent.
func (rw RW) readPct(mix int) int {
	switch rw {
	case Read, RandRead:
		return 100
	case Write, RandWrite:
		return 0
	}
	return mix
}

// BSSplit is one entry of fio's bssplit: Pct percent of I/Os use Size.
type BSSplit struct {
	Size int64
	Pct  int
}

// DistKind is a random offset distribution.
type DistKind uint8

// Offset distributions of random jobs (fio random_distribution).
const (
	Uniform DistKind = iota // every block equally likely
	Zipf                    // zipf with exponent Param (theta)
	Pareto                  // pareto with Param h: a share h of accesses go to 1-h of the blocks
)

// Distribution is a random job's offset distribution.
type Distribution struct {
	Kind  DistKind
	Param float64
}

// String formats the distribution as fio writes it.
func (d Distribution) String() string {
	switch d.Kind {
	case Zipf:
		return "zipf:" + strconv.FormatFloat(d.Param, 'g', -1, 64)
	case Pareto:
		return "pareto:" + strconv.FormatFloat(d.Param, 'g', -1, 64)
	}
	return "uniform"
}

// Job is one fio-style workload. The zero value of every field means fio's
// default (see EnsureDefaults); sizes are bytes, percentages 0–100.
type Job struct {
	Name      string
	RW        RW
	RWMixRead int       // percent reads of mixed patterns; default 50
	BS        int64     // block size; default 4096
	BSSplit   []BSSplit // when set, each I/O's size is drawn from it; BS is then the smallest
	Size      int64     // bytes of I/O per job instance and its files; 0: the whole target (block-like targets)
	Offset    int64     // start of the I/O range within each file
	IODepth   int       // outstanding I/Os per job instance; default 1
	NumJobs   int       // instances of the job, each with its own queue; default 1

	Runtime    time.Duration // stop after this long (0: when Size is done)
	TimeBased  bool          // keep going (wrapping around) until Runtime
	RampTime   time.Duration // run this long before measuring
	StartDelay time.Duration // idle this long after the group starts (see DelayFromRunStart)
	// DelayFromRunStart: StartDelay counts from the start of the run, not
	// of the job's group — fio's startdelay, which a job of a later group
	// has usually served by the time its group starts.
	DelayFromRunStart bool
	Loops             int // passes over Size when not time based; default 1

	NrFiles        int    // files per instance; default 1
	FileSize       int64  // bytes per file; default Size/NrFiles
	Filename       string // shared file name(s), ':'-separated; empty: FilenameFormat
	FilenameFormat string // per-instance names with $jobname, $jobnum, $filenum; default "$jobname.$jobnum.$filenum"
	Directory      string // relative directory of the files within the target
	// FileByFile is fio's openfiles=1 with file_service_type=sequential:
	// each file is opened (created, for writes), transferred from start
	// to end and closed before the next one, the way a file manager copies.
	FileByFile bool
	Unlink     bool // remove the files when the job ends
	// ValidData: the tool creates a file it reads by setting its valid
	// data length, without writing it, where the target allows
	// (diskspd's SetFileValidData; see ValidDataLayouter); elsewhere the
	// file is written, as fio's layout does.
	ValidData bool

	Fsync    int  // flush after every Fsync writes (0: never)
	EndFsync bool // flush each file when the job's I/O is done
	Direct   bool // O_DIRECT on real targets
	// WriteThrough: each write is on the storage before it completes
	// (fio sync=1: O_SYNC; diskspd -Sh: FILE_FLAG_WRITE_THROUGH).
	WriteThrough bool

	Distribution Distribution
	RandSeed     uint64 // seeds offsets and mixes; 0: derived from the run's seed
	RateIOPS     int    // open-loop arrivals per second per instance (0: closed loop)
	Poisson      bool   // exponential inter-arrival times instead of fixed ones

	Stonewall bool // wait for every earlier job to finish before starting

	// Pos is where the job was defined ("file.fio:12"), for messages.
	Pos string
}

// EnsureDefaults fills in fio's defaults for unset fields.
func (j *Job) EnsureDefaults() {
	if j.RWMixRead == 0 && (j.RW == ReadWrite || j.RW == RandRW) {
		j.RWMixRead = 50
	}
	if j.BS == 0 {
		j.BS = 4096
	}
	if len(j.BSSplit) > 0 {
		j.BS = j.BSSplit[0].Size
		for _, s := range j.BSSplit {
			j.BS = min(j.BS, s.Size)
		}
	}
	if j.IODepth == 0 {
		j.IODepth = 1
	}
	if j.NumJobs == 0 {
		j.NumJobs = 1
	}
	if j.Loops == 0 {
		j.Loops = 1
	}
	if j.NrFiles == 0 {
		j.NrFiles = 1
	}
	if j.Size == 0 && j.FileSize != 0 {
		j.Size = j.FileSize * int64(j.NrFiles)
	}
	if j.FileSize == 0 && j.Size != 0 {
		j.FileSize = j.Size / int64(j.NrFiles)
	}
	if j.FilenameFormat == "" {
		j.FilenameFormat = "$jobname.$jobnum.$filenum"
	}
}

// Validate reports an impossible or unsupported combination of settings,
// wrapping ErrJob.
func (j *Job) Validate() error {
	bad := func(format string, a ...any) error {
		where := j.Pos
		if where != "" {
			where += ": "
		}
		return fmt.Errorf("%w: %sjob %q: %s", ErrJob, where, j.Name, fmt.Sprintf(format, a...))
	}
	switch {
	case j.Name == "":
		return bad("no name")
	case j.RW > RandRW:
		return bad("unknown rw %d", j.RW)
	case j.RWMixRead < 0 || j.RWMixRead > 100:
		return bad("rwmixread=%d is not a percentage", j.RWMixRead)
	case j.BS <= 0 || j.BS > 1<<30:
		return bad("bs=%d must be between 1 and 1 GiB", j.BS)
	case j.Size < 0 || j.Offset < 0 || j.FileSize < 0:
		return bad("negative size, offset or filesize")
	case j.IODepth < 1 || j.IODepth > 65536:
		return bad("iodepth=%d must be between 1 and 65536", j.IODepth)
	case j.NumJobs < 1 || j.NumJobs > 4096:
		return bad("numjobs=%d must be between 1 and 4096", j.NumJobs)
	case j.NrFiles < 1 || j.NrFiles > 1<<20:
		return bad("nrfiles=%d must be between 1 and 1048576", j.NrFiles)
	case j.Loops < 1:
		return bad("loops=%d must be at least 1", j.Loops)
	case j.Runtime < 0 || j.RampTime < 0 || j.StartDelay < 0:
		return bad("negative runtime, ramp_time or startdelay")
	case j.TimeBased && j.Runtime == 0:
		return bad("time_based needs a runtime")
	case j.Fsync < 0 || j.RateIOPS < 0:
		return bad("negative fsync or rate_iops")
	case j.FileByFile && (j.Fsync > 0 || j.EndFsync):
		return bad("openfiles=1 (file by file) does not support fsync or end_fsync")
	case j.FileByFile && j.IODepth > 1:
		return bad("openfiles=1 (file by file) supports iodepth=1 only, not %d", j.IODepth)
	case j.FileSize > 0 && j.FileSize < j.BS && !j.FileByFile:
		return bad("filesize %d is smaller than bs %d", j.FileSize, j.BS)
	case j.Offset > 0 && j.FileSize > 0 && j.Offset >= j.FileSize:
		return bad("offset %d is beyond the file size %d", j.Offset, j.FileSize)
	}
	if len(j.BSSplit) > 0 {
		total := 0
		for _, s := range j.BSSplit {
			if s.Size <= 0 || s.Pct < 0 {
				return bad("bssplit entry %d/%d is invalid", s.Size, s.Pct)
			}
			total += s.Pct
		}
		if total != 100 {
			return bad("bssplit percentages add up to %d, not 100", total)
		}
	}
	switch j.Distribution.Kind {
	case Zipf:
		if !(j.Distribution.Param > 0) || j.Distribution.Param == 1 || j.Distribution.Param > 100 {
			return bad("zipf theta %g must be > 0 and not 1", j.Distribution.Param)
		}
	case Pareto:
		if !(j.Distribution.Param > 0 && j.Distribution.Param < 1) {
			return bad("pareto h %g must be between 0 and 1", j.Distribution.Param)
		}
	}
	if j.Directory != "" && (strings.HasPrefix(j.Directory, "/") || strings.Contains(j.Directory, "..")) {
		return bad("directory=%s: only a relative directory inside the target is allowed (the target says where files go)", j.Directory)
	}
	for _, f := range j.fileNamesRaw() {
		if strings.HasPrefix(f, "/") || strings.Contains(f, "..") {
			return bad("filename=%s: only a relative name inside the target is allowed (give the device or file as --target)", f)
		}
	}
	return nil
}

// fileNamesRaw returns the names given by filename=, if any.
func (j *Job) fileNamesRaw() []string {
	if j.Filename == "" {
		return nil
	}
	return strings.Split(j.Filename, ":")
}

// files returns the names of the files instance inst uses. Instances of a
// job with filename= share its files, as in fio.
func (j *Job) files(inst int) []string {
	if names := j.fileNamesRaw(); names != nil {
		return j.inDir(names)
	}
	names := make([]string, j.NrFiles)
	for f := range names {
		names[f] = strings.NewReplacer("$jobname", j.Name, "$jobnum", strconv.Itoa(inst),
			"$filenum", strconv.Itoa(f)).Replace(j.FilenameFormat)
	}
	return j.inDir(names)
}

func (j *Job) inDir(names []string) []string {
	if j.Directory == "" {
		return names
	}
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strings.TrimSuffix(j.Directory, "/") + "/" + n
	}
	return out
}

// writes reports whether the job writes at all.
func (j *Job) writes() bool { return j.RW.readPct(j.RWMixRead) < 100 }

// reads reports whether the job reads at all.
func (j *Job) reads() bool { return j.RW.readPct(j.RWMixRead) > 0 }

// Overrides change every job of a run, e.g. to shorten a suite.
type Overrides struct {
	// Runtime, when set, is each job's runtime (time-based jobs) or its
	// cap; ramp times and start delays are cut to a quarter of it at most.
	Runtime time.Duration
	Size    int64 // when set: each job's size (per-file sizes scale with it)
	Direct  *bool // when set: each job's direct flag
}

// Apply returns copies of jobs with the overrides applied.
func (o Overrides) Apply(jobs []Job) []Job {
	out := make([]Job, len(jobs))
	for i, j := range jobs {
		if o.Runtime > 0 {
			j.Runtime = o.Runtime
			if j.RampTime > o.Runtime/4 {
				j.RampTime = o.Runtime / 4
			}
			if j.StartDelay > o.Runtime/4 {
				j.StartDelay = o.Runtime / 4
			}
		}
		if o.Size > 0 {
			if j.NrFiles > 1 && j.FileSize > 0 {
				j.FileSize = max(o.Size/int64(j.NrFiles), 1)
			} else {
				j.FileSize = o.Size
			}
			j.Size = j.FileSize * int64(j.NrFiles)
		}
		if o.Direct != nil {
			j.Direct = *o.Direct
		}
		out[i] = j
	}
	return out
}

// startAt returns when the job starts in a group that starts at start, in
// a run that started at genesis.
func (j *Job) startAt(start, genesis time.Duration) time.Duration {
	if j.DelayFromRunStart {
		return max(start, genesis+j.StartDelay)
	}
	return start + j.StartDelay
}
