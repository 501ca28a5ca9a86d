package bench

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// RW is a job's access pattern, named as fio names it.
type RW uint8

// Access patterns. Mixed patterns choose read or write per I/O with
// probability RWMixRead percent.
const (
	Read          RW = iota // sequential reads
	Write                   // sequential writes
	RandRead                // random reads
	RandWrite               // random writes
	ReadWrite               // sequential mixed (fio rw, readwrite)
	RandRW                  // random mixed
	Trim                    // sequential trims
	RandTrim                // random trims
	TrimWrite               // sequential: trim a block, then write it
	RandTrimWrite           // random: trim a block, then write it
)

var rwNames = [...]string{Read: "read", Write: "write", RandRead: "randread", RandWrite: "randwrite", ReadWrite: "rw", RandRW: "randrw",
	Trim: "trim", RandTrim: "randtrim", TrimWrite: "trimwrite", RandTrimWrite: "randtrimwrite"}

// String returns fio's name of the pattern.
func (rw RW) String() string {
	if int(rw) < len(rwNames) {
		return rwNames[rw]
	}
	return "rw(" + strconv.Itoa(int(rw)) + ")"
}

// Random reports whether offsets are chosen at random.
func (rw RW) Random() bool {
	return rw == RandRead || rw == RandWrite || rw == RandRW || rw == RandTrim || rw == RandTrimWrite
}

// trims reports whether the pattern trims.
func (rw RW) trims() bool { return rw >= Trim }

// readPct returns the share of reads in percent.
func (rw RW) readPct(mix int) int {
	switch rw {
	case Read, RandRead:
		return 100
	case Write, RandWrite, Trim, RandTrim, TrimWrite, RandTrimWrite:
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
	Uniform  DistKind = iota // every block equally likely
	Zipf                     // zipf with exponent Param (theta)
	Pareto                   // pareto with Param h: a share h of accesses go to 1-h of the blocks
	Normal                   // gaussian around the middle with deviation Param percent of the range
	Zoned                    // Zones: a share of accesses to a share of the range
	ZonedAbs                 // Zones: a share of accesses to a number of bytes
	Sequence                 // Seq: these block indexes in order, repeated
)

// Distribution is a random job's offset distribution.
type Distribution struct {
	Kind  DistKind
	Param float64
	Zones []DistZone // zoned, zoned_abs
	Seq   []uint64   // sequence
	// SeqStride: after each pass over Seq, its base moves on by len(Seq)
	// blocks (fio random_sequence_stride=1).
	SeqStride bool
}

// DistZone is one zone of a zoned distribution: Access percent of the I/Os
// go to Pct percent of the range (zoned) or to Size bytes (zoned_abs).
type DistZone struct {
	Access, Pct float64
	Size        int64
}

// Dir is an I/O direction, as fio's per-direction options order them
// (bs=R,W,T).
type Dir uint8

// Directions.
const (
	DirRead Dir = iota
	DirWrite
	DirTrim
)

var dirNames = [...]string{"read", "write", "trim"}

// String names the direction as fio's JSON does.
func (d Dir) String() string { return dirNames[d] }

// IOKind is what one of a job's I/Os does (the kind of fio's ioengine).
// The block engines (sync, psync, libaio, io_uring, ...) all read and
// write the target; how a path target submits them is Job.Engine's
// concern (Job.EngineName keeps the name as written).
type IOKind uint8

// I/O kinds.
const (
	KindBlock      IOKind = iota // reads, writes and trims of the target
	KindNull                     // no I/O: each completes when it is issued
	KindFileCreate               // each I/O creates one of the job's files
	KindFileStat                 // each I/O stats one of the job's files
	KindFileDelete               // each I/O deletes one of the job's files
	KindDirCreate                // each I/O creates a directory
	KindDirStat                  // each I/O stats a directory
	KindDirDelete                // each I/O removes a directory
	KindFtruncate                // each write truncates the file to its offset
	KindFalloc                   // writes allocate, reads allocate keeping the size, trims punch holes
)

var kindNames = [...]string{"block", "null", "filecreate", "filestat", "filedelete", "dircreate", "dirstat", "dirdelete", "ftruncate", "falloc"}

// String names the kind as fio names its engine ("block" for all the
// block engines).
func (k IOKind) String() string { return kindNames[k] }

// fileEngine reports whether each I/O is an operation on a whole file or
// directory.
func (k IOKind) fileEngine() bool { return k >= KindFileCreate && k <= KindDirDelete }

// Steady is a steadystate criterion (fio ss=): the job ends once the
// last Dur of per-second samples (after Ramp) meet it.
type Steady struct {
	Metric string  // "iops", "bw" or "lat"
	Slope  bool    // the least-squares slope, not the deviation from the mean
	Limit  float64 // percent of the mean (Pct) or an absolute figure
	Pct    bool
	Dur    time.Duration
	Ramp   time.Duration
	// RoundIOs, when positive, replaces the criterion above by SNIA PTS's
	// steady-state window (PTS-E 1.1, 2.1.24): the job's completions are
	// cut into rounds of RoundIOs each, the metric of a round is its
	// IOPS or bandwidth over the round's own span of virtual time, and
	// the job ends once the last SteadyRounds rounds' range is within
	// 20 % of their mean and their best-fit line's excursion within 10 %
	// (ssd.SteadyState). Rounds of completions rather than seconds let a
	// job of a second close its window in milliseconds of model time.
	RoundIOs int64
}

// SteadyRounds is the PTS measurement window: five rounds.
const SteadyRounds = 5

// Setting is an option accepted because it does not change what reaches
// the device; the report records it.
type Setting struct {
	Key   string `json:"key"`
	Value string `json:"value"`
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
	// ReapBatch is how many completions a path target's asynchronous
	// engine reaps per completion timestamp before it refills the queue:
	// fio's iodepth_batch_complete_max, whose default is 1. At depth, each
	// reaped I/O's completion time then includes the submissions made
	// before it was reaped, as in fio's clat. 0 is fio's default, 1.
	ReapBatch int

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
	// Engine is how a path target submits the I/O (fio's ioengine; see
	// Engine); job files without ioengine get fio's default, psync.
	Engine Engine
	// Fallocate is how a path target preallocates the job's files when it
	// lays them out (fio's fallocate; see Fallocate).
	Fallocate Fallocate
	// WriteThrough: each write is on the storage before it completes
	// (fio sync=1: O_SYNC; diskspd -Sh: FILE_FLAG_WRITE_THROUGH).
	WriteThrough bool

	Distribution Distribution
	RandSeed     uint64 // seeds offsets and mixes; 0: derived from the run's seed
	RateIOPS     int    // open-loop arrivals per second per instance (0: closed loop)
	Poisson      bool   // exponential inter-arrival times instead of fixed ones

	Stonewall bool // wait for every earlier job to finish before starting

	// Per-direction block sizes (fio bs=R,W,T, bsrange, bssplit=R,W,T):
	// BS is the read size; BSW and BST are the write and trim sizes (0:
	// BS); BSMax is a bsrange's upper end per direction (0: fixed).
	BSW, BST        int64
	BSMax           [3]int64
	BSSplitW        []BSSplit
	BSSplitT        []BSSplit
	BlockAlign      int64 // random offsets are multiples of it (0: the smallest block size)
	SizePct         float64
	OffsetPct       float64       // offset in percent of the file or device (0: none)
	IOSize          int64         // bytes of I/O per instance (fio io_size; 0: Size)
	NumberIOs       int64         // stop after this many I/Os per instance (0: no limit)
	FillDevice      bool          // write until the file or device is full
	OffsetIncrement int64         // instance N starts at Offset + N·OffsetIncrement
	FileSizeMax     int64         // filesize=lo-hi: each file's size drawn from [FileSize, FileSizeMax]
	FileService     string        // roundrobin (default), sequential, random
	SeqAdd          int64         // rw=read:8k: bytes skipped (negative: backwards) after each sequential I/O
	RandNr          int           // rw=randread:N: a new random offset every N I/Os, sequential between
	SeqIdentical    bool          // rw_sequencer=identical: repeat the offset instead
	PctRandom       [3]int        // percentage_random per direction (0: unset, fully random when random)
	LFSR            bool          // random_generator=lfsr: each block once per pass
	RandomMap       bool          // uniform random offsets cover each block once per pass (fio's random map; job files have it unless norandommap), else drawn with replacement
	SPRandom        bool          // sprandom: SPRandom preconditioning offsets (see sprandom)
	SPROP           float64       // spr_op: the drive's over-provisioning (0: fio's 0.15)
	SPRRegions      int           // spr_num_regions (0: fio's 100)
	SPRCache        int64         // spr_cs: the drive's cache, bytes; rewrites wait a region more when set
	Buffer          BufferFill    // what the job's writes carry on a real target
	Flow            int           // flow: weight of the job's share of its flow's I/O (0: no flow control)
	FlowID          int           // flow_id: jobs with the same id share a flow
	FlowSleep       time.Duration // flow_sleep: how long a job the flow holds back waits (0: until another job issues)
	RateBytes       [3]int64
	RateIOPSDir     [3]int // per direction; RateIOPS is the read rate when set alone
	RateMin         [3]int64
	RateMinIOPS     [3]int
	ThinkTime       time.Duration // idle after every ThinkBlocks I/Os, once those in flight complete (see thinker)
	ThinkSpin       time.Duration // of it, spent spinning on a real target's CPU (at most ThinkTime)
	ThinkBlocks     int           // I/Os between thinktimes (0: unset, 1 unless ThinkIOTime is set)
	ThinkIssue      bool          // thinktime_blocks_type=issue: ThinkBlocks counts I/Os issued, not completed
	ThinkIOTime     time.Duration // thinktime_iotime: also think after this long without (0: none)
	RateIgnoreThink bool          // rate_ignore_thinktime: the rate schedule moves on by the thinktime
	LatTarget       time.Duration // latency_target: find the depth that meets it
	LatWindow       time.Duration
	LatPercentile   float64
	SteadyState     *Steady
	Kind            IOKind // what each I/O does (fio's ioengine; see IOKind)
	EngineName      string // ioengine as written; "" is fio's default (psync)
	Verify          string // verify=, "" none
	DoVerify        bool   // read back and check after writing (fio do_verify, default 1)
	VerifyBacklog   int64  // verify after every VerifyBacklog writes (0: at the end)
	VerifyPattern   []byte
	// Verify-trim (fio trim_percentage, trim_backlog, trim_backlog_batch,
	// trim_verify_zero): TrimPct % of the writes logged for verify are
	// trimmed, a batch of TrimBatch (0: TrimBacklog) after every
	// TrimBacklog logged writes; a trimmed range then verifies as zeros
	// (TrimNoZero: it is not verified).
	TrimPct         int
	TrimBacklog     int64
	TrimBatch       int
	TrimNoZero      bool
	CreateOnly      bool // create_only: lay the files out and do no I/O
	NoCreateFsync   bool // create_fsync=0: a layout does not fsync the files it writes
	NoFileCreate    bool // allow_file_create=0: a file the job needs must exist
	NoInvalidate    bool // invalidate=0: keep the files' cached pages (fio drops them by default)
	Fdatasync       int  // as Fsync, with fdatasync
	FsyncOnClose    bool
	PreRead         bool
	ExitAll         bool   // when this job ends, the others of its group stop
	WaitFor         string // start when this job has finished
	ContinueOnError string // none, read, write, io, verify, all
	GroupReporting  bool
	NewGroup        bool
	PercentileList  []float64
	BWLog           string // write_bw_log prefix
	LatLog          string
	IOPSLog         string
	HistLog         string
	LogAvg          time.Duration
	ZoneSize        int64 // zonemode=strided or zbd: zone size
	ZoneRange       int64 // strided: bytes per zone range (default ZoneSize)
	ZoneSkip        int64 // strided: bytes skipped after each zone
	ZBD             bool  // zonemode=zbd: writes sequential within zones
	MaxOpenZones    int
	// zone_reset_threshold and zone_reset_frequency (fio's zrt, zrf):
	// once the zones' valid data reach ZoneResetThreshold of the job's
	// range, every 1/ZoneResetFreq-th write resets its zone first.
	ZoneResetThreshold, ZoneResetFreq float64
	DeviceName                        string    // filename named a block device (e.g. /dev/sdb): the target's whole address space
	Recorded                          []Setting // accepted options that change nothing the device sees
	Notes                             []string  // how nasemu read an option that it approximates

	// Pos is where the job was defined ("file.fio:12"), for messages.
	Pos string
}

// WorkingSet returns the bytes the job reads or writes over: its files'
// total (shared files once, per-instance files once per instance), from
// its offset on; 0 when the job spans the whole target.
func (j Job) WorkingSet() int64 {
	j.EnsureDefaults()
	if j.Size == 0 && j.FileSize == 0 {
		return 0
	}
	files := int64(j.NrFiles) * int64(j.NumJobs)
	if j.Filename != "" {
		files = int64(len(strings.Split(j.Filename, ":")))
	}
	per := j.FileSize
	if per == 0 {
		per = j.Size / int64(j.NrFiles)
	}
	return per*files + j.Offset
}

// EnsureDefaults fills in fio's defaults for unset fields.
func (j *Job) EnsureDefaults() {
	if j.RWMixRead == 0 && (j.RW == ReadWrite || j.RW == RandRW) {
		j.RWMixRead = 50
	}
	if j.BS == 0 {
		j.BS = 4096
	}
	if j.BSW == 0 {
		j.BSW = j.BS
	}
	if j.BST == 0 {
		j.BST = j.BS
	}
	if len(j.BSSplitW) == 0 {
		j.BSSplitW = j.BSSplit
	}
	if len(j.BSSplitT) == 0 {
		j.BSSplitT = j.BSSplit
	}
	j.BS = splitMin(j.BSSplit, j.BS)
	j.BSW = splitMin(j.BSSplitW, j.BSW)
	j.BST = splitMin(j.BSSplitT, j.BST)
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
	if j.SPRandom && j.SPROP == 0 {
		j.SPROP = 0.15
	}
	if j.SPRandom && j.SPRRegions == 0 {
		j.SPRRegions = 100
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

// splitMin is the smallest size of a bssplit, or bs without one.
func splitMin(split []BSSplit, bs int64) int64 {
	if len(split) == 0 {
		return bs
	}
	n := split[0].Size
	for _, s := range split {
		n = min(n, s.Size)
	}
	return n
}

// bsOf returns the fixed (smallest) block size of direction d.
func (j *Job) bsOf(d Dir) int64 {
	return [3]int64{j.BS, j.BSW, j.BST}[d]
}

// splitOf returns direction d's bssplit.
func (j *Job) splitOf(d Dir) []BSSplit {
	return [3][]BSSplit{j.BSSplit, j.BSSplitW, j.BSSplitT}[d]
}

// minBS is the smallest block size of any direction the job uses.
func (j *Job) minBS() int64 {
	n := int64(math.MaxInt64)
	for _, d := range j.dirs() {
		n = min(n, j.bsOf(d))
	}
	return n
}

// dirs returns the directions the job issues.
func (j *Job) dirs() []Dir {
	var out []Dir
	if j.reads() {
		out = append(out, DirRead)
	}
	if j.writes() && !(j.RW == Trim || j.RW == RandTrim) {
		out = append(out, DirWrite)
	}
	if j.RW.trims() {
		out = append(out, DirTrim)
	}
	if out == nil {
		out = append(out, DirRead)
	}
	return out
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
	case j.RW > RandTrimWrite:
		return bad("unknown rw %d", j.RW)
	case j.RWMixRead < 0 || j.RWMixRead > 100:
		return bad("rwmixread=%d is not a percentage", j.RWMixRead)
	case j.BS <= 0 || j.BS > 1<<30 || j.BSW <= 0 || j.BSW > 1<<30 || j.BST <= 0 || j.BST > 1<<30:
		return bad("bs=%d,%d,%d: a block size must be between 1 and 1 GiB", j.BS, j.BSW, j.BST)
	case j.BSMax[0] > 1<<30 || j.BSMax[1] > 1<<30 || j.BSMax[2] > 1<<30:
		return bad("bsrange above 1 GiB")
	case j.BlockAlign < 0 || j.IOSize < 0 || j.NumberIOs < 0 || j.OffsetIncrement < 0 || j.FileSizeMax < 0:
		return bad("negative blockalign, io_size, number_ios, offset_increment or filesize")
	case j.SizePct < 0 || j.SizePct > 100 || j.OffsetPct < 0 || j.OffsetPct >= 100:
		return bad("size or offset in percent out of range")
	case j.FileSizeMax > 0 && j.FileSizeMax < j.FileSize:
		return bad("filesize range %d-%d is reversed", j.FileSize, j.FileSizeMax)
	case j.ThinkTime < 0 || j.ThinkSpin < 0 || j.ThinkBlocks < 0 || j.ThinkIOTime < 0 || j.LatTarget < 0 || j.LatWindow < 0:
		return bad("negative thinktime or latency target")
	case j.LatTarget > 0 && (j.LatPercentile <= 0 || j.LatPercentile > 100):
		return bad("latency_percentile=%g must be in (0, 100]", j.LatPercentile)
	case j.Fdatasync < 0:
		return bad("negative fdatasync")
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
	case !j.Engine.valid():
		return bad("unknown ioengine %q", j.Engine)
	case !j.Fallocate.valid():
		return bad("unknown fallocate %q", j.Fallocate)
	case j.Fsync < 0 || j.RateIOPS < 0:
		return bad("negative fsync or rate_iops")
	case j.FileByFile && (j.Fsync > 0 || j.EndFsync):
		return bad("openfiles=1 (file by file) does not support fsync or end_fsync")
	case j.FileByFile && j.IODepth > 1:
		return bad("openfiles=1 (file by file) supports iodepth=1 only, not %d", j.IODepth)
	case j.FileSize > 0 && j.FileSize < j.minBS() && !j.FileByFile && j.Kind == KindBlock:
		return bad("filesize %d is smaller than bs %d", j.FileSize, j.BS)
	case j.SPRandom && (!j.RW.Random() || !j.writes() || !j.LFSR || j.RandomMap):
		return bad("sprandom needs random writes, random_generator=lfsr and norandommap=1 (fio sets the last two when they are not given)")
	case j.SPRandom && (j.SPROP <= 0 || j.SPROP >= 1 || j.SPRRegions < 1 || j.SPRRegions > 1<<20 || j.SPRCache < 0):
		return bad("sprandom: spr_op=%g must be in (0, 1), spr_num_regions=%d in [1, 1048576], spr_cs not negative", j.SPROP, j.SPRRegions)
	case j.SPRandom && (len(j.BSSplitW) > 0 || j.BSMax[DirWrite] > 0 || j.TimeBased):
		return bad("sprandom writes the drive once in blocks of one size: no bssplit, bsrange or time_based")
	}
	for _, split := range [][]BSSplit{j.BSSplit, j.BSSplitW, j.BSSplitT} {
		if len(split) == 0 {
			continue
		}
		total := 0
		for _, s := range split {
			if s.Size <= 0 || s.Size > 1<<30 || s.Pct < 0 {
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
	if j.Distribution.Kind == Normal && !(j.Distribution.Param > 0 && j.Distribution.Param <= 100) {
		return bad("normal deviation %g must be in (0, 100]", j.Distribution.Param)
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
	Size    int64 // when set: each job's size (per-file sizes scale with it), at least its largest block (zonemode=zbd: whole zones)
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
			// never below one I/O of the job's largest block, and a zoned
			// job keeps whole zones
			if j.Kind == KindBlock && !j.FileByFile {
				j.FileSize = max(j.FileSize, maxIOSize(&j))
			}
			if j.ZBD && j.ZoneSize > 0 {
				j.FileSize = (j.FileSize + j.ZoneSize - 1) / j.ZoneSize * j.ZoneSize
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

// trimVerify reports whether writes logged for verify are trimmed (fio's
// td->trim_verify: verify, trim_backlog and trim_percentage all set).
func (j *Job) trimVerify() bool {
	return j.Verify != "" && j.TrimBacklog > 0 && j.TrimPct > 0
}
