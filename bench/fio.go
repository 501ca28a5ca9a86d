package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Limits bound what a job file may ask for, so that a small file cannot
// make a run use unbounded memory or time. The zero value of a field means
// its default (DefaultLimits).
type Limits struct {
	Jobs        int   // job sections per file
	Instances   int   // numjobs summed over a group's jobs
	Outstanding int   // I/Os in flight over a group (iodepth × numjobs summed)
	Bytes       int64 // bytes in flight over a group (iodepth × numjobs × largest block)
	Files       int   // files of a job (nrfiles × numjobs)
	FileSize    int64 // bytes of one file
}

// DefaultLimits are the limits of a run.
var DefaultLimits = Limits{
	Jobs: 1024, Instances: 4096, Outstanding: 65536, Bytes: 4 << 30, Files: 1 << 20, FileSize: 1 << 50,
}

// fioKinds maps fio's engine names to what an I/O of each does. The
// block engines submit the same reads and writes; on path targets the
// name also picks how they are submitted (Job.Engine, ParseEngine).
// cpp_null is fio's null engine (engines/null.c) built as an external
// C++ engine, as its examples/cpp_null.fio runs it: the same engine.
var fioKinds = map[string]IOKind{
	"sync": KindBlock, "psync": KindBlock, "vsync": KindBlock, "pvsync": KindBlock, "pvsync2": KindBlock,
	"libaio": KindBlock, "io_uring": KindBlock, "posixaio": KindBlock, "windowsaio": KindBlock, "mmap": KindBlock,
	"null": KindNull, "cpp_null": KindNull, "filecreate": KindFileCreate, "filestat": KindFileStat, "filedelete": KindFileDelete,
	"dircreate": KindDirCreate, "dirstat": KindDirStat, "dirdelete": KindDirDelete,
	"ftruncate": KindFtruncate, "falloc": KindFalloc,
}

// recordedOptions change nothing that reaches the device: CPU placement,
// priorities, reporting, how a verify reports; the buffer options that
// refill or dedupe per write are approximated (approximatedOptions). They
// are accepted and recorded in the report.
var recordedOptions = []string{
	"allow_mounted_write", "atomic", "cgroup", "clat_percentiles", "clocksource", "cmdprio", "cmdprio_bssplit", "cmdprio_class", "cmdprio_percentage",
	"continue_on_error", "cpumask", "cpus_allowed", "cpus_allowed_policy", "create_on_open",
	"create_serialize", "dedupe_global", "dedupe_mode", "dedupe_percentage",
	"dedupe_working_set_percentage", "description", "disable_bw_measurement", "disable_clat", "disable_lat",
	"disable_slat", "disk_util", "error_dump", "exit_what", "exitall_on_error",
	"gtod_cpu", "gtod_reduce", "hugepage-size", "ignore_error", "iomem", "mem",
	"iomem_align", "ioscheduler", "lat_percentiles", "log_compression", "log_max_value", "log_offset",
	"log_prio", "log_unix_epoch", "log_alternate_epoch", "log_issue_time", "log_entries", "log_hist_coarseness",
	"nice", "numa_cpu_nodes", "numa_mem_policy", "per_job_logs", "prio", "prioclass", "prio_percentage",
	"rate_cycle", "read_beyond_wp", "randrepeat", "refill_buffers", "scramble_buffers",
	"slat_percentiles", "stats", "thread", "threads", "uid", "gid", "unified_rw_reporting", "verify_async",
	"verify_async_cpus", "verify_dump", "verify_fatal", "verify_interval", "verify_offset", "verify_state_load",
	"verify_state_save", "verify_write_sequence", "verify_header_seed", "unlink_each_loop", "exitall_on_error", "kb_base",
	"significant_figures", "bs_is_seq_rand", "lockmem", "bs_unaligned", "offset_align", "replay_no_stall",
	"hipri", "fixedbufs", "registerfiles", "sqthread_poll", "sqthread_poll_cpu", "nonvectored", "uncached",
	"userspace_reap", "force_async", "sync_file_range", "serialize_overlap", "io_submit_mode",
	"iodepth_batch", "iodepth_batch_submit", "iodepth_batch_complete", "iodepth_batch_complete_min",
	"iodepth_low", "experimental_verify", "thinkcycles",
	"numa_mem", "write_iolog_chunked", "group_reporting", "new_group",
	"percentile_list", "ratemin", "rate_min", "rate_iops_min",
}

// approximatedOptions are recorded with a note of how nasemu reads them:
// they would change when fio submits, which nasemu's slots (one I/O each,
// submitted when issued) do not model.
var approximatedOptions = map[string]string{
	"iodepth_batch":              "iodepth_batch*: each I/O is submitted when a slot frees, not in batches",
	"iodepth_batch_submit":       "iodepth_batch*: each I/O is submitted when a slot frees, not in batches",
	"iodepth_batch_complete":     "iodepth_batch*: each I/O is submitted when a slot frees, not in batches",
	"iodepth_batch_complete_min": "iodepth_batch*: each I/O is submitted when a slot frees, not in batches",
	"iodepth_low":                "iodepth_low: the queue is refilled at once, not after draining to iodepth_low",
	"io_submit_mode":             "io_submit_mode: submission is inline; offload's thread is not modelled",
	"rate_cycle":                 "rate_cycle: rate_min is checked over the whole run",
	"create_on_open":             "create_on_open: the file engines create in the run; a block engine's files are created before the timed phase",
	"atomic":                     "atomic: writes are not flagged RWF_ATOMIC; their offsets and sizes are the same",
	"dedupe_percentage":          "dedupe_percentage: each slot's buffer is filled once, not per write; no model deduplicates",
	"refill_buffers":             "refill_buffers: each slot's buffer is filled once, not per write",
	"ratemin":                    "rate_min: checked over the whole run",
	"rate_min":                   "rate_min: checked over the whole run",
	"rate_iops_min":              "rate_iops_min: checked over the whole run",
}

// refusedOptions cannot apply to any target nasemu has; each says why.
var refusedOptions = map[string]string{
	"fdp":            "flexible data placement needs an NVMe FDP device and the io_uring_cmd or xnvme engine; no drive in the catalog has FDP",
	"fdp_pli":        "flexible data placement needs an NVMe FDP device; no drive in the catalog has FDP",
	"dataplacement":  "data placement needs an NVMe FDP or streams device; no drive in the catalog has them",
	"plids":          "data placement needs an NVMe FDP device; no drive in the catalog has FDP",
	"md_per_io_size": "protection information needs a namespace formatted with metadata and the io_uring_cmd or xnvme engine",
	"pi_act":         "protection information needs a namespace formatted with metadata and the io_uring_cmd or xnvme engine",
	"pi_chk":         "protection information needs a namespace formatted with metadata and the io_uring_cmd or xnvme engine",
	"apptag":         "protection information needs a namespace formatted with metadata and the io_uring_cmd or xnvme engine",
	"apptag_mask":    "protection information needs a namespace formatted with metadata and the io_uring_cmd or xnvme engine",
	"read_iolog":     "replaying an I/O log is not implemented",
	"write_iolog":    "writing an I/O log is not implemented",
	"exec_prerun":    "nasemu runs no commands from a job file",
	"exec_postrun":   "nasemu runs no commands from a job file",
}

// refusedWhenSet change the I/O in a way nasemu does not reproduce when
// they are set (a value other than 0); at 0, fio's default, they are
// recorded. Each says why.
var refusedWhenSet = map[string]string{
	"bs_is_seq_rand":      "bs_is_seq_rand=1 (block sizes by sequential and random instead of read and write) is not implemented",
	"bs_unaligned":        "bs_unaligned=1 (bsrange sizes that are not multiples of the smallest) is not implemented",
	"offset_align":        "offset_align (the alignment of a percentage offset) is not implemented; give offset in bytes",
	"sync_file_range":     "sync_file_range is not implemented; fdatasync=N writes back every N writes",
	"unlink_each_loop":    "unlink_each_loop=1 (remove the files after each loop) is not implemented",
	"read_beyond_wp":      "read_beyond_wp=1: reads of emulated zones stay below the write pointer (fio's default, 0)",
	"experimental_verify": "experimental_verify=1 (verify by replaying the offsets instead of logging them) is not implemented; verify logs the writes",
	"hipri":               "hipri=1 (polled completions) is not implemented; completions are interrupt-driven",
	"sqthread_poll":       "sqthread_poll=1 (a kernel thread polls the submission queue) is not implemented; each I/O is submitted by a system call",
	"uncached":            "uncached=1 (RWF_DONTCACHE) is not implemented",
	"force_async":         "force_async (IOSQE_ASYNC) is not implemented",
	"nonvectored":         "nonvectored is an io_uring_cmd option; the io_uring engine submits as fio's does",
	"serialize_overlap":   "serialize_overlap=1 is not implemented: overlapping I/Os in flight are not serialized",
	"ioscheduler":         "ioscheduler: nasemu does not switch the host's I/O scheduler; set it in /sys/block before the run",
	"thinkcycles":         "thinkcycles (a loop of N no-ops after each I/O) is not implemented: how long it takes depends on the CPU; give thinktime",
}

// fioOption is one key=value line.
type fioOption struct {
	key, value string
	bare       bool   // written without '='
	pos        string // file:line
}

// fioLine is one line of a job file after includes.
type fioLine struct {
	text string
	pos  string
	file string
	line int
}

// LoadFio parses the fio job file at path ("-": standard input).
func LoadFio(path string) ([]Job, error) {
	if path == "-" {
		return ParseFio("<stdin>", os.Stdin)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrJob, err)
	}
	defer f.Close()
	return ParseFio(path, f)
}

// ParseFio parses a fio job file read from r; file names it in messages
// and is where include directives are resolved from. ${VAR} takes the
// environment's VAR. Every job is given its defaults and validated; the
// error lists every problem of the file, each with file:line. Errors wrap
// ErrJob.
func ParseFio(file string, r io.Reader) ([]Job, error) {
	var errs []error
	errAt := func(pos, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", pos, fmt.Sprintf(format, a...)))
	}
	lines := readFioLines(file, r, 0, errAt)
	var (
		global  []fioOption
		jobs    []Job
		section string
		opts    []fioOption
		secPos  string
		inJob   bool
	)
	finish := func() {
		if !inJob {
			return
		}
		if len(jobs) >= DefaultLimits.Jobs {
			if len(jobs) == DefaultLimits.Jobs {
				errAt(secPos, "more than %d jobs in one file", DefaultLimits.Jobs)
			}
			jobs = append(jobs, Job{})
			return
		}
		j, jerrs := buildFioJob(section, secPos, append(append([]fioOption(nil), global...), opts...))
		errs = append(errs, jerrs...)
		jobs = append(jobs, j)
	}
	for _, l := range lines {
		line := l.text
		if line[0] == '[' {
			if !strings.HasSuffix(line, "]") {
				errAt(l.pos, "section header %q has no closing ']'", line)
				continue
			}
			name := strings.TrimSpace(line[1 : len(line)-1])
			if name == "" || strings.ContainsAny(name, "[]/\\") || strings.Contains(name, "..") {
				errAt(l.pos, "bad section name %q", name)
			}
			finish()
			section, secPos, opts, inJob = name, l.pos, nil, name != "global"
			continue
		}
		if section == "" {
			errAt(l.pos, "option %q outside a section: put it under [global] or a job", line)
			continue
		}
		o := fioOption{pos: l.pos}
		if k, v, ok := strings.Cut(line, "="); ok {
			o.key, o.value = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		} else {
			o.key, o.bare = strings.ToLower(line), true
		}
		if o.key == "" {
			errAt(l.pos, "line %q has no option name", line)
			continue
		}
		v, err := expandEnv(o.value)
		if err != nil {
			errAt(l.pos, "option %s: %v", o.key, err)
			continue
		}
		o.value = v
		if inJob {
			opts = append(opts, o)
		} else {
			global = append(global, o)
		}
	}
	finish()
	if len(jobs) == 0 && len(errs) == 0 {
		errs = append(errs, fmt.Errorf("%s: no job sections", file))
	}
	if len(errs) == 0 {
		for _, g := range splitGroups(jobs) {
			if err := DefaultLimits.check(jobs[g[0]:g[1]]); err != nil {
				errs = append(errs, errors.New(strings.TrimPrefix(err.Error(), ErrJob.Error()+": ")))
			}
		}
	}
	if len(errs) > 0 {
		// A [global] option's error shows once, not once per job.
		seen := map[string]bool{}
		uniq := errs[:0]
		for _, e := range errs {
			if !seen[e.Error()] {
				seen[e.Error()] = true
				uniq = append(uniq, e)
			}
		}
		return nil, fmt.Errorf("%w: %w", ErrJob, errors.Join(uniq...))
	}
	return jobs, nil
}

// maxIncludeDepth bounds nested include directives.
const maxIncludeDepth = 8

// readFioLines returns the non-empty, non-comment lines of a job file with
// include directives replaced by the lines of the files they name.
func readFioLines(file string, r io.Reader, depth int, errAt func(pos, format string, a ...any)) []fioLine {
	var out []fioLine
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		pos := fmt.Sprintf("%s:%d", file, n)
		line := stripComment(sc.Text())
		if line == "" {
			continue
		}
		if inc, ok := strings.CutPrefix(line, "include "); ok {
			inc = strings.TrimSpace(inc)
			if depth >= maxIncludeDepth {
				errAt(pos, "include %s: more than %d nested includes", inc, maxIncludeDepth)
				continue
			}
			p := inc
			if !filepath.IsAbs(p) && file != "<stdin>" && file != "<command line>" {
				p = filepath.Join(filepath.Dir(file), p)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				errAt(pos, "include %s: %v", inc, err)
				continue
			}
			out = append(out, readFioLines(p, bytes.NewReader(b), depth+1, errAt)...)
			continue
		}
		out = append(out, fioLine{text: line, pos: pos, file: file, line: n})
	}
	if err := sc.Err(); err != nil {
		errAt(file, "%v", err)
	}
	return out
}

// stripComment trims a line and removes a comment: a line starting with
// ';' or '#', or one after blank space ("runtime=60 ; one minute").
func stripComment(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || s[0] == ';' || s[0] == '#' {
		return ""
	}
	for i := 1; i < len(s); i++ {
		if (s[i] == ';' || s[i] == '#') && (s[i-1] == ' ' || s[i-1] == '\t') {
			return strings.TrimSpace(s[:i])
		}
	}
	return s
}

var envRE = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// expandEnv replaces ${VAR} with the environment's VAR.
func expandEnv(v string) (string, error) {
	var missing []string
	out := envRE.ReplaceAllStringFunc(v, func(m string) string {
		name := m[2 : len(m)-1]
		val, ok := os.LookupEnv(name)
		if !ok {
			missing = append(missing, name)
		}
		return val
	})
	if missing != nil {
		return "", fmt.Errorf("environment variable %s is not set", strings.Join(missing, ", "))
	}
	return out, nil
}

// fioState carries what options of a section tell each other.
type fioState struct {
	kb       int64 // kb_base
	zone     int64 // zonesize, for sizes in zones ("4z")
	mix      int   // rwmixread as written, -1 when not
	doVerify int   // do_verify as written, -1 when not
	rateIOPS string
	rngSet   bool // random_generator given
	mapSet   bool // norandommap given
}

// buildFioJob applies a section's options (global ones first) and
// validates the job.
func buildFioJob(section, secPos string, all []fioOption) (Job, []error) {
	var errs []error
	j := Job{Name: section, Pos: secPos, Engine: EnginePsync, RandomMap: true}
	st := fioState{kb: 1024, mix: -1, doVerify: -1}
	for _, o := range all {
		switch o.key {
		case "kb_base":
			switch o.value {
			case "1024":
				st.kb = 1024
			case "1000":
				st.kb = 1000
			default:
				errs = append(errs, fmt.Errorf("%s: option kb_base: want 1000 or 1024, not %q", o.pos, o.value))
			}
		case "zonesize":
			if n, err := parseSize(o.value, st.kb); err == nil {
				st.zone = n
			}
		}
	}
	for _, o := range all {
		if err := applyFio(&j, o, &st); err != nil {
			errs = append(errs, fmt.Errorf("%s: option %s: %v", o.pos, o.key, err))
		}
	}
	switch mixed := j.RW == ReadWrite || j.RW == RandRW; {
	case st.mix == 0 && mixed: // all writes
		j.RW = map[RW]RW{ReadWrite: Write, RandRW: RandWrite}[j.RW]
	case st.mix == 100 && mixed:
		j.RW = map[RW]RW{ReadWrite: Read, RandRW: RandRead}[j.RW]
	case st.mix >= 0 && mixed:
		j.RWMixRead = st.mix
	}
	if j.Verify != "" {
		j.DoVerify = st.doVerify != 0
	}
	if j.TrimPct > 0 && !j.trimVerify() {
		// fio trims the blocks it logs for verify only with verify and
		// trim_backlog set (its td->trim_verify); so does nasemu.
		j.Notes = append(j.Notes, "trim_percentage: fio trims nothing without verify and trim_backlog, nor does nasemu")
	}
	if j.TimeBased && j.Runtime == 0 {
		// fio: "time_based requires a runtime/timeout setting", a
		// warning, and the job runs without it (init.c fixup_options).
		j.TimeBased = false
		j.Notes = append(j.Notes, "time_based without runtime: fio drops it (with a warning) and runs the job by size, as nasemu does")
	}
	if j.SPRandom { // fio's defaults under sprandom
		j.LFSR = j.LFSR || !st.rngSet
		j.RandomMap = j.RandomMap && st.mapSet
	}
	if len(errs) > 0 {
		return j, errs
	}
	j.EnsureDefaults()
	if err := j.Validate(); err != nil {
		errs = append(errs, errors.New(strings.TrimPrefix(err.Error(), ErrJob.Error()+": ")))
	}
	return j, errs
}

// applyFio sets the job field that option o describes.
func applyFio(j *Job, o fioOption, st *fioState) error {
	kb := st.kb
	v := o.value
	if o.bare {
		v = "1"
	}
	size := func(s string) (int64, error) { return parseSizeZ(s, kb, st.zone) }
	var err error
	if why, ok := refusedOptions[o.key]; ok {
		return errors.New(why)
	}
	switch o.key {
	case "kb_base", "zonesize":
	case "name":
		if v == "" {
			return fmt.Errorf("empty name")
		}
		j.Name = v
	case "ioengine":
		name, _, _ := strings.Cut(v, ":")
		k, ok := fioKinds[name]
		if !ok {
			names := make([]string, 0, len(fioKinds))
			for n := range fioKinds {
				names = append(names, n)
			}
			slices.Sort(names)
			return fmt.Errorf("ioengine %q is not a file or block engine nasemu can run (accepted: %s)", v, strings.Join(names, ", "))
		}
		j.Kind, j.EngineName = k, name
		// How a path target submits: a block engine's own way; mmap,
		// which has no asynchronous counterpart, and the engines that
		// submit nothing get the default, psync.
		j.Engine = EnginePsync
		if e, err := ParseEngine(name); err == nil && k == KindBlock {
			j.Engine = e
		}
	case "fallocate":
		j.Fallocate, err = ParseFallocate(v)
	case "rw", "readwrite":
		err = parseRW(j, v, kb)
	case "rw_sequencer":
		switch {
		case v == "sequential":
			j.SeqIdentical = false
		case v == "identical":
			j.SeqIdentical = true
		default:
			return fmt.Errorf("%q: want sequential or identical", v)
		}
	case "rwmixread", "rwmixwrite":
		var p int64
		if p, err = parseInt(v, 0, 100); err == nil {
			st.mix = int(p)
			if o.key == "rwmixwrite" {
				st.mix = 100 - int(p)
			}
		}
	case "bs", "blocksize":
		var s [3]int64
		if s, err = parseTriple(v, func(x string) (int64, error) {
			n, err := parseSize(x, kb)
			if err == nil && n == 0 {
				err = fmt.Errorf("a block size of 0 is not a block size")
			}
			return n, err
		}); err == nil {
			j.BS, j.BSW, j.BST = s[0], s[1], s[2]
		}
	case "bsrange", "blocksize_range":
		var lo, hi [3]int64
		if lo, hi, err = parseRanges(v, kb); err == nil {
			j.BS, j.BSW, j.BST = lo[0], lo[1], lo[2]
			j.BSMax = hi
		}
	case "bssplit":
		parts := strings.Split(v, ",")
		if len(parts) > 3 {
			return fmt.Errorf("%q: at most three lists (read, write, trim)", v)
		}
		var splits [3][]BSSplit
		for i, p := range parts {
			if p == "" {
				continue
			}
			if splits[i], err = parseBSSplit(p, kb); err != nil {
				return err
			}
		}
		if len(parts) == 1 {
			splits[1], splits[2] = splits[0], splits[0]
		} else if len(parts) == 2 {
			splits[2] = splits[1]
		}
		j.BSSplit, j.BSSplitW, j.BSSplitT = splits[0], splits[1], splits[2]
	case "blockalign", "ba":
		var s [3]int64
		if s, err = parseTriple(v, func(x string) (int64, error) { return parseSize(x, kb) }); err == nil {
			j.BlockAlign = s[0]
		}
	case "size":
		if p, ok := strings.CutSuffix(v, "%"); ok {
			j.SizePct, err = parsePct(p)
			return err
		}
		j.Size, err = size(v)
	case "io_size", "io_limit":
		if strings.HasSuffix(v, "%") {
			return fmt.Errorf("%q: io_size in percent is not supported; give bytes", v)
		}
		j.IOSize, err = size(v)
	case "number_ios":
		j.NumberIOs, err = parseInt(v, 0, 1<<50)
	case "fill_device", "fill_fs":
		j.FillDevice, err = parseBool(v)
	case "filesize":
		lo, hi, isRange := strings.Cut(v, "-")
		if j.FileSize, err = size(lo); err == nil && isRange {
			j.FileSizeMax, err = size(hi)
		}
	case "offset":
		if p, ok := strings.CutSuffix(v, "%"); ok {
			j.OffsetPct, err = parsePct(p)
			return err
		}
		j.Offset, err = size(v)
	case "offset_increment":
		if strings.HasSuffix(v, "%") {
			return fmt.Errorf("%q: offset_increment in percent is not supported; give bytes", v)
		}
		j.OffsetIncrement, err = size(v)
	case "iodepth":
		j.IODepth, err = parseIntField(v, 1, 65536)
	case "numjobs":
		j.NumJobs, err = parseIntField(v, 1, 4096)
	case "iodepth_batch_complete_max":
		// 0 is fio's "as iodepth_batch_complete_min", which is 1 unless set.
		if j.ReapBatch, err = parseIntField(v, 0, 65536); err == nil {
			record(j, o.key, v)
		}
	case "loops":
		j.Loops, err = parseIntField(v, 1, 1<<20)
	case "nrfiles", "nr_files":
		j.NrFiles, err = parseIntField(v, 1, 1<<20)
	case "openfiles", "open_files":
		var n int
		if n, err = parseIntField(v, 1, 1<<20); err == nil {
			j.FileByFile = n == 1 && j.Kind == KindBlock
		}
	case "file_service_type":
		kind, _, _ := strings.Cut(v, ":")
		switch kind {
		case "roundrobin", "sequential", "random":
			j.FileService = kind
		case "zipf", "pareto", "normal", "gauss":
			j.FileService = "random"
			j.Notes = append(j.Notes, fmt.Sprintf("file_service_type=%s: files chosen uniformly at random", v))
		default:
			return fmt.Errorf("%q: want roundrobin, sequential or random", v)
		}
	case "runtime", "timeout":
		j.Runtime, err = parseTime(v)
	case "ramp_time":
		j.RampTime, err = parseTime(v)
	case "startdelay":
		// fio measures it from its own start: a job of a later group
		// starts with its group unless the delay has not passed yet.
		lo, _, _ := strings.Cut(v, "-")
		j.StartDelay, err = parseTime(lo)
		j.DelayFromRunStart = true
	case "time_based":
		j.TimeBased, err = parseBool(v)
	case "stonewall", "wait_for_previous":
		j.Stonewall, err = parseBool(v)
	case "new_group":
		j.NewGroup, err = parseBool(v)
	case "wait_for":
		j.WaitFor = v
	case "exitall":
		j.ExitAll, err = parseBool(v)
	case "continue_on_error":
		j.ContinueOnError = v
		record(j, o.key, v)
	case "group_reporting":
		j.GroupReporting, err = parseBool(v)
	case "direct":
		j.Direct, err = parseBool(v)
	case "buffered":
		var b bool
		b, err = parseBool(v)
		j.Direct = !b
	case "sync":
		switch v {
		case "1", "sync", "dsync":
			j.WriteThrough = true
		case "0", "none":
			j.WriteThrough = false
		default:
			return fmt.Errorf("%q: want 0, 1, none, sync or dsync", v)
		}
	case "fsync":
		j.Fsync, err = parseIntField(v, 0, 1<<30)
	case "fdatasync":
		j.Fdatasync, err = parseIntField(v, 0, 1<<30)
	case "end_fsync":
		j.EndFsync, err = parseBool(v)
	case "fsync_on_close":
		j.FsyncOnClose, err = parseBool(v)
	case "pre_read":
		j.PreRead, err = parseBool(v)
	case "unlink":
		j.Unlink, err = parseBool(v)
	case "overwrite":
		var b bool
		if b, err = parseBool(v); b {
			j.Notes = append(j.Notes, "overwrite=1: files of write jobs are laid out (allocated) before the run, not written")
		}
	case "filename":
		var names []string
		for _, f := range strings.Split(v, ":") {
			n, dev, ferr := mapFileName(f)
			if ferr != nil {
				return ferr
			}
			if dev != "" {
				if dev == "null" || dev == "zero" {
					j.Kind = KindNull
				}
				j.DeviceName = "/dev/" + dev
			}
			names = append(names, n)
		}
		j.Filename = strings.Join(names, ":")
	case "filename_format":
		j.FilenameFormat = strings.TrimPrefix(path.Clean("/"+v), "/")
		if strings.Contains(v, "..") || j.FilenameFormat == "" {
			return fmt.Errorf("%q: a file name inside the target", v)
		}
	case "directory":
		d := path.Clean("/" + strings.Split(v, ":")[0])
		if strings.Contains(v, "..") {
			return fmt.Errorf("%s: a directory with '..' could leave the target", v)
		}
		j.Directory = strings.TrimPrefix(d, "/")
	case "random_distribution":
		j.Distribution, err = parseDistribution(v, kb)
	case "random_sequence_stride":
		j.Distribution.SeqStride, err = parseBool(v)
	case "norandommap":
		var b bool
		b, err = parseBool(v)
		j.RandomMap = !b
		st.mapSet = true
	case "sprandom":
		j.SPRandom, err = parseBool(v)
	case "spr_op":
		j.SPROP, err = strconv.ParseFloat(v, 64)
		if err != nil || !(j.SPROP > 0 && j.SPROP < 1) {
			return fmt.Errorf("%q: an over-provisioning ratio in (0, 1)", v)
		}
	case "spr_num_regions":
		j.SPRRegions, err = parseIntField(v, 1, 1<<20)
	case "spr_cs":
		j.SPRCache, err = size(v)
	case "zero_buffers":
		j.Buffer.Zero, err = parseBool(v)
	case "buffer_pattern":
		j.Buffer.Pattern, err = parsePattern(v)
	case "buffer_compress_percentage":
		var p int64
		p, err = parseInt(v, 0, 100)
		j.Buffer.CompressPct = int(p)
	case "buffer_compress_chunk":
		j.Buffer.Chunk, err = size(v)
	case "flow":
		j.Flow, err = parseIntField(v, 0, 1<<20)
	case "flow_id":
		j.FlowID, err = parseIntField(v, 0, 1<<20)
	case "flow_sleep":
		j.FlowSleep, err = parseTimeUnit(v, time.Microsecond)
	case "random_generator":
		st.rngSet = true
		switch v {
		case "tausworthe", "tausworthe64":
			j.LFSR = false
		case "lfsr":
			j.LFSR = true
		default:
			return fmt.Errorf("%q: want tausworthe, tausworthe64 or lfsr", v)
		}
	case "percentage_random":
		var p [3]int64
		if p, err = parseTriple(v, func(x string) (int64, error) { return parseInt(x, 0, 100) }); err == nil {
			for i := range p {
				j.PctRandom[i] = int(p[i])
				if p[i] == 0 {
					j.PctRandom[i] = -1 // explicitly none
				}
			}
		}
	case "randseed":
		var n int64
		n, err = parseInt(v, 0, math.MaxInt64)
		j.RandSeed = uint64(n)
	case "rate":
		j.RateBytes, err = parseTriple(v, func(x string) (int64, error) { return parseSize(x, kb) })
	case "rate_iops":
		var r [3]int64
		if r, err = parseTriple(v, func(x string) (int64, error) { return parseInt(x, 0, 1<<30) }); err == nil {
			j.RateIOPSDir = [3]int{int(r[0]), int(r[1]), int(r[2])}
			if !strings.Contains(v, ",") {
				j.RateIOPS = int(r[0])
			}
		}
	case "rate_process":
		switch v {
		case "linear":
			j.Poisson = false
		case "poisson":
			j.Poisson = true
		default:
			return fmt.Errorf("%q is not supported (linear or poisson)", v)
		}
	case "thinktime":
		j.ThinkTime, err = parseTimeUnit(v, time.Microsecond)
	case "thinktime_spin":
		j.ThinkSpin, err = parseTimeUnit(v, time.Microsecond)
	case "thinktime_blocks":
		j.ThinkBlocks, err = parseIntField(v, 1, 1<<30)
	case "thinktime_blocks_type":
		switch v {
		case "complete":
			j.ThinkIssue = false
		case "issue":
			j.ThinkIssue = true
		default:
			return fmt.Errorf("%q: want complete or issue", v)
		}
	case "thinktime_iotime":
		j.ThinkIOTime, err = parseTimeUnit(v, time.Second) // fio: seconds when the unit is omitted
	case "rate_ignore_thinktime":
		j.RateIgnoreThink, err = parseBool(v)
	case "latency_target":
		j.LatTarget, err = parseTimeUnit(v, time.Microsecond)
	case "latency_window":
		j.LatWindow, err = parseTimeUnit(v, time.Microsecond)
	case "latency_percentile":
		j.LatPercentile, err = strconv.ParseFloat(v, 64)
	case "latency_run":
		record(j, o.key, v)
	case "steadystate", "ss":
		if j.SteadyState == nil {
			j.SteadyState = &Steady{}
		}
		err = parseSteady(j.SteadyState, v)
	case "steadystate_duration", "ss_dur":
		if j.SteadyState == nil {
			j.SteadyState = &Steady{}
		}
		j.SteadyState.Dur, err = parseTime(v)
	case "steadystate_ramp_time", "ss_ramp":
		if j.SteadyState == nil {
			j.SteadyState = &Steady{}
		}
		j.SteadyState.Ramp, err = parseTime(v)
	case "steadystate_check_interval", "ss_interval":
		var d time.Duration
		if d, err = parseTime(v); err == nil && d%time.Second != 0 {
			err = fmt.Errorf("%q: nasemu samples once a second; give whole seconds", v)
		}
		record(j, o.key, v)
	case "verify":
		switch v {
		case "0", "none":
			j.Verify = ""
		case "md5", "crc64", "crc32c", "crc32c-intel", "crc32", "crc16", "crc7", "xxhash", "sha512", "sha256",
			"sha1", "sha3-224", "sha3-256", "sha3-384", "sha3-512", "meta", "pattern", "null":
			j.Verify = v
		default:
			return fmt.Errorf("%q is not a verify method fio knows", v)
		}
	case "do_verify":
		var b bool
		if b, err = parseBool(v); err == nil {
			st.doVerify = map[bool]int{true: 1, false: 0}[b]
		}
	case "verify_backlog":
		j.VerifyBacklog, err = parseInt(v, 0, 1<<40)
	case "trim_percentage":
		j.TrimPct, err = parseIntField(v, 0, 100)
	case "trim_backlog":
		j.TrimBacklog, err = parseSize(v, kb) // fio reads it as a value with units
	case "trim_backlog_batch":
		j.TrimBatch, err = parseIntField(v, 0, 1<<30)
	case "trim_verify_zero":
		var b bool
		b, err = parseBool(v)
		j.TrimNoZero = !b
	case "invalidate":
		var b bool
		b, err = parseBool(v)
		j.NoInvalidate = !b
	case "create_only":
		j.CreateOnly, err = parseBool(v)
	case "create_fsync":
		var b bool
		b, err = parseBool(v)
		j.NoCreateFsync = !b
	case "allow_file_create":
		var b bool
		b, err = parseBool(v)
		j.NoFileCreate = !b
	case "verify_pattern":
		j.VerifyPattern, err = parsePattern(v)
		if j.Verify == "" {
			j.Verify = "pattern"
		}
	case "zonemode":
		switch v {
		case "none":
			j.ZoneSize, j.ZBD = 0, false
		case "strided":
		case "zbd":
			// No drive in the catalog is zoned: fio then emulates zones
			// on the conventional target (its ZBD_NONE model).
			j.ZBD = true
			j.ZoneSize = st.zone
			if st.zone < 512 {
				return fmt.Errorf("zonemode=zbd needs zonesize of at least 512 bytes")
			}
			j.Notes = append(j.Notes, "zonemode=zbd: the target has no zones; they are emulated as fio emulates them on a conventional device")
		default:
			return fmt.Errorf("%q: want none, strided or zbd", v)
		}
	case "zone_reset_threshold", "zone_reset_frequency":
		var f float64
		if f, err = strconv.ParseFloat(v, 64); err != nil || !(f >= 0 && f <= 1) {
			return fmt.Errorf("%q: a fraction from 0 to 1", v)
		}
		if o.key == "zone_reset_threshold" {
			j.ZoneResetThreshold = f
		} else {
			j.ZoneResetFreq = f
		}
	case "zonerange":
		j.ZoneRange, err = size(v)
	case "zoneskip":
		j.ZoneSkip, err = size(v)
	case "max_open_zones", "job_max_open_zones":
		j.MaxOpenZones, err = parseIntField(v, 0, 1<<20)
	case "zone_append", "zonecapacity", "ignore_zone_limits":
		record(j, o.key, v)
	case "write_bw_log":
		j.BWLog = logName(v, o.bare, j.Name)
	case "write_lat_log":
		j.LatLog = logName(v, o.bare, j.Name)
	case "write_iops_log":
		j.IOPSLog = logName(v, o.bare, j.Name)
	case "write_hist_log":
		j.HistLog = logName(v, o.bare, j.Name)
	case "log_avg_msec", "log_hist_msec":
		var n int64
		n, err = parseInt(v, 0, 1<<31)
		j.LogAvg = time.Duration(n) * time.Millisecond
	default:
		if why, ok := refusedWhenSet[o.key]; ok && v != "0" {
			return errors.New(why)
		}
		if !slices.Contains(recordedOptions, o.key) {
			return fmt.Errorf("not an option nasemu knows (nor, as far as it knows, fio); check the spelling")
		}
		if o.key == "percentile_list" {
			for _, p := range strings.Split(v, ":") {
				f, perr := strconv.ParseFloat(p, 64)
				if perr != nil || f < 0 || f > 100 {
					return fmt.Errorf("%q: percentiles between 0 and 100, ':'-separated", v)
				}
				j.PercentileList = append(j.PercentileList, f)
			}
		}
		if note, ok := approximatedOptions[o.key]; ok && !slices.Contains(j.Notes, note) {
			j.Notes = append(j.Notes, note)
		}
		switch o.key {
		case "ratemin", "rate_min":
			j.RateMin, err = parseTriple(v, func(x string) (int64, error) { return parseSize(x, kb) })
		case "rate_iops_min":
			var r [3]int64
			r, err = parseTriple(v, func(x string) (int64, error) { return parseInt(x, 0, 1<<30) })
			j.RateMinIOPS = [3]int{int(r[0]), int(r[1]), int(r[2])}
		}
		record(j, o.key, v)
	}
	if o.key == "zonemode" && v == "strided" {
		j.ZoneSize = st.zone
		if st.zone == 0 {
			return fmt.Errorf("zonemode=strided needs zonesize")
		}
	}
	return err
}

// record notes an accepted option for the report.
func record(j *Job, key, value string) {
	j.Recorded = append(j.Recorded, Setting{Key: key, Value: value})
}

// logName is a log's file prefix: the value, or the job's name when the
// option is bare.
func logName(v string, bare bool, job string) string {
	if bare || v == "" || v == "1" {
		return job
	}
	return path.Base(v)
}

// mapFileName maps a fio filename to a name inside the target: a block
// device (/dev/sdb) is the target's whole address space (its base name is
// returned as dev), an absolute path is a file at that path inside the
// target. ".." is refused.
func mapFileName(f string) (name, dev string, err error) {
	if strings.Contains(f, "..") {
		return "", "", fmt.Errorf("%s: a name with '..' could leave the target", f)
	}
	if d, ok := strings.CutPrefix(f, "/dev/"); ok && d != "" && !strings.Contains(d, "/") {
		return "dev-" + d, d, nil
	}
	n := strings.TrimPrefix(path.Clean("/"+f), "/")
	if n == "" {
		return "", "", fmt.Errorf("%q: not a file name", f)
	}
	return n, "", nil
}

// parseRW parses rw=, with fio's ':' modifier.
func parseRW(j *Job, v string, kb int64) error {
	kind, mod, hasMod := strings.Cut(v, ":")
	rws := map[string]RW{"read": Read, "write": Write, "randread": RandRead, "randwrite": RandWrite,
		"rw": ReadWrite, "readwrite": ReadWrite, "randrw": RandRW, "trim": Trim, "randtrim": RandTrim,
		"trimwrite": TrimWrite, "randtrimwrite": RandTrimWrite}
	rw, ok := rws[kind]
	if !ok {
		return fmt.Errorf("%q is not a pattern (read, write, randread, randwrite, rw, randrw, trim, randtrim, trimwrite, randtrimwrite)", v)
	}
	j.RW = rw
	j.SeqAdd, j.RandNr = 0, 0
	if !hasMod {
		return nil
	}
	if rw.Random() {
		n, err := parseInt(mod, 1, 1<<30)
		if err != nil {
			return fmt.Errorf("%q: a random pattern's modifier is a number of I/Os: %v", v, err)
		}
		j.RandNr = int(n)
		return nil
	}
	neg := strings.HasPrefix(mod, "-")
	n, err := parseSize(strings.TrimPrefix(mod, "-"), kb)
	if err != nil {
		return err
	}
	if neg {
		n = -n
	}
	j.SeqAdd = n
	return nil
}

// parseTriple parses fio's per-direction "R,W,T" values: one value is
// all three; a missing trim value is the write value; an empty one is 0
// (the default).
func parseTriple(s string, parse func(string) (int64, error)) ([3]int64, error) {
	var out [3]int64
	parts := strings.Split(s, ",")
	if len(parts) > 3 {
		return out, fmt.Errorf("%q: at most three values (read, write, trim)", s)
	}
	for i, p := range parts {
		if p == "" {
			continue
		}
		n, err := parse(p)
		if err != nil {
			return out, err
		}
		out[i] = n
	}
	switch len(parts) {
	case 1:
		out[1], out[2] = out[0], out[0]
	case 2:
		out[2] = out[1]
	}
	return out, nil
}

// parseRanges parses bsrange: "lo-hi" per direction.
func parseRanges(s string, kb int64) (lo, hi [3]int64, err error) {
	parts := strings.Split(s, ",")
	if len(parts) > 3 {
		return lo, hi, fmt.Errorf("%q: at most three ranges", s)
	}
	for i, p := range parts {
		a, b, ok := strings.Cut(p, "-")
		if !ok {
			b = a
		}
		if lo[i], err = parseSize(a, kb); err != nil {
			return
		}
		if hi[i], err = parseSize(b, kb); err != nil {
			return
		}
		if lo[i] == 0 || hi[i] < lo[i] {
			return lo, hi, fmt.Errorf("%q: want lo-hi with 0 < lo ≤ hi", p)
		}
	}
	for i := len(parts); i < 3; i++ {
		lo[i], hi[i] = lo[len(parts)-1], hi[len(parts)-1]
	}
	return lo, hi, nil
}

func parsePct(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f <= 0 || f > 100 {
		return 0, fmt.Errorf("%q%%: want a percentage in (0, 100]", s)
	}
	return f, nil
}

// parseSizeZ is parseSize that also takes sizes in zones ("4z").
func parseSizeZ(s string, kb, zone int64) (int64, error) {
	if n, ok := strings.CutSuffix(strings.ToLower(s), "z"); ok {
		if zone == 0 {
			return 0, fmt.Errorf("%q: a size in zones needs zonesize", s)
		}
		k, err := parseInt(n, 0, 1<<40)
		if err != nil || k > (1<<62)/zone {
			return 0, fmt.Errorf("%q: bad number of zones", s)
		}
		return k * zone, nil
	}
	return parseSize(s, kb)
}

// parsePattern parses verify_pattern: 0x hex bytes or a quoted string.
func parsePattern(s string) ([]byte, error) {
	if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		if len(h)%2 == 1 {
			h = "0" + h
		}
		out := make([]byte, len(h)/2)
		for i := range out {
			b, err := strconv.ParseUint(h[2*i:2*i+2], 16, 8)
			if err != nil {
				return nil, fmt.Errorf("%q: bad hex pattern", s)
			}
			out[i] = byte(b)
		}
		return out, nil
	}
	if u, err := strconv.Unquote(s); err == nil && u != "" {
		return []byte(u), nil
	}
	if n, err := strconv.ParseUint(s, 10, 32); err == nil {
		return []byte{byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24)}, nil
	}
	return nil, fmt.Errorf("%q: want 0xHEX, a decimal number or a quoted string", s)
}

// parseSteady parses ss=iops:10%, ss=bw_slope:0.1%, ss=lat:5%.
func parseSteady(ss *Steady, v string) error {
	kind, lim, ok := strings.Cut(v, ":")
	if !ok {
		return fmt.Errorf("%q: want METRIC:LIMIT, e.g. iops:10%%", v)
	}
	metric, slope := strings.CutSuffix(kind, "_slope")
	if metric != "iops" && metric != "bw" && metric != "lat" {
		return fmt.Errorf("%q: the metric is iops, bw or lat (with _slope)", v)
	}
	ss.Metric, ss.Slope = metric, slope
	l, pct := strings.CutSuffix(lim, "%")
	f, err := strconv.ParseFloat(l, 64)
	if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("%q: bad limit", v)
	}
	ss.Limit, ss.Pct = f, pct
	return nil
}

func parseInt(s string, lo, hi int64) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not an integer", s)
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("%d is out of range [%d, %d]", n, lo, hi)
	}
	return n, nil
}

func parseIntField(s string, lo, hi int64) (int, error) {
	n, err := parseInt(s, lo, hi)
	return int(n), err
}

func parseBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a boolean (1 or 0)", s)
}

// parseSize parses a fio size: a number with an optional k, m, g, t or p
// prefix, an optional 'i' and an optional 'b', case-insensitive.
func parseSize(s string, kb int64) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	t = strings.TrimSuffix(t, "b")
	iec := strings.HasSuffix(t, "i")
	t = strings.TrimSuffix(t, "i")
	mult := int64(1)
	if t != "" {
		if p := strings.IndexByte("kmgtp", t[len(t)-1]); p >= 0 {
			base := kb
			if iec { // the IEC prefix means the other base (fio's compatibility mode with kb_base=1024)
				base = map[int64]int64{1024: 1000, 1000: 1024}[kb]
			}
			for range p + 1 {
				mult *= base
			}
			t = t[:len(t)-1]
		} else if iec {
			return 0, fmt.Errorf("bad size %q", s)
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || math.IsNaN(v) || v*float64(mult) >= 1<<62 || strings.ContainsAny(t, "xXeEnN+") {
		return 0, fmt.Errorf("bad size %q: want a number with an optional unit such as 4k or 1g", s)
	}
	return int64(math.Round(v * float64(mult))), nil
}

// parseBSSplit parses "4k/10:64k/50:32k/40"; an entry without a percentage
// gets an equal share of what is left.
func parseBSSplit(s string, kb int64) ([]BSSplit, error) {
	var out []BSSplit
	left, open := 100, 0
	for _, part := range strings.Split(s, ":") {
		sz, pct, hasPct := strings.Cut(part, "/")
		n, err := parseSize(sz, kb)
		if err != nil {
			return nil, err
		}
		if n == 0 {
			return nil, fmt.Errorf("%q: zero block size", s)
		}
		p := -1
		if hasPct && pct != "" {
			v, err := parseInt(pct, 0, 100)
			if err != nil {
				return nil, err
			}
			p = int(v)
			left -= p
		} else {
			open++
		}
		out = append(out, BSSplit{Size: n, Pct: p})
	}
	for i := range out {
		if out[i].Pct < 0 {
			if left < 0 {
				return nil, fmt.Errorf("%q: percentages exceed 100", s)
			}
			out[i].Pct = left / open
			left -= out[i].Pct
			open--
		}
	}
	return out, nil
}

// parseTime parses a fio time; a bare number is seconds.
func parseTime(s string) (time.Duration, error) { return parseTimeUnit(s, time.Second) }

// parseTimeUnit parses a fio time; a bare number is in unit.
func parseTimeUnit(s string, unit time.Duration) (time.Duration, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	for _, u := range []struct {
		suffix string
		d      time.Duration
	}{{"usec", time.Microsecond}, {"us", time.Microsecond}, {"msec", time.Millisecond}, {"ms", time.Millisecond},
		{"sec", time.Second}, {"s", time.Second}, {"min", time.Minute}, {"m", time.Minute}, {"h", time.Hour}, {"d", 24 * time.Hour}} {
		if strings.HasSuffix(t, u.suffix) {
			t, unit = strings.TrimSuffix(t, u.suffix), u.d
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || math.IsNaN(v) || v*float64(unit) > float64(1000*time.Hour) || strings.ContainsAny(t, "xXeEnN+") {
		return 0, fmt.Errorf("bad time %q: want a number or a unit such as 500ms, 30s, 2m", s)
	}
	return time.Duration(v * float64(unit)), nil
}

// parseDistribution parses random_distribution.
func parseDistribution(s string, kb int64) (Distribution, error) {
	first, _, _ := strings.Cut(s, ",")
	if first != s && !strings.HasPrefix(first, "zoned") && !strings.HasPrefix(first, "sequence") {
		return Distribution{}, fmt.Errorf("%q: one distribution for every direction", s)
	}
	if strings.HasPrefix(first, "zoned") && strings.Contains(s, ",") {
		return Distribution{}, fmt.Errorf("%q: per-direction zoned distributions are not supported; give one", s)
	}
	kind, param, hasParam := strings.Cut(s, ":")
	switch kind {
	case "random", "uniform":
		if hasParam {
			return Distribution{}, fmt.Errorf("%q: uniform takes no parameter", s)
		}
		return Distribution{}, nil
	case "zipf", "pareto", "normal", "gauss":
		if !hasParam {
			return Distribution{}, fmt.Errorf("%q: %s needs a parameter, e.g. %s:0.9", s, kind, kind)
		}
		p, _, _ := strings.Cut(param, ":")
		v, err := strconv.ParseFloat(p, 64)
		if err != nil {
			return Distribution{}, fmt.Errorf("%q: bad parameter", s)
		}
		d := Distribution{Kind: Zipf, Param: v}
		switch kind {
		case "pareto":
			d.Kind = Pareto
		case "normal", "gauss":
			d.Kind = Normal
		}
		return d, nil
	case "zoned", "zoned_abs":
		d := Distribution{Kind: Zoned}
		if kind == "zoned_abs" {
			d.Kind = ZonedAbs
		}
		var access, share float64
		for _, z := range strings.Split(param, ":") {
			a, sz, ok := strings.Cut(z, "/")
			if !ok {
				return Distribution{}, fmt.Errorf("%q: each zone is ACCESS%%/SIZE", s)
			}
			af, err := strconv.ParseFloat(a, 64)
			if err != nil || af < 0 {
				return Distribution{}, fmt.Errorf("%q: bad access share %q", s, a)
			}
			dz := DistZone{Access: af}
			switch {
			case sz == "" && d.Kind == Zoned:
				dz.Pct = 100 - share
			case d.Kind == Zoned:
				if dz.Pct, err = strconv.ParseFloat(sz, 64); err != nil || dz.Pct < 0 {
					return Distribution{}, fmt.Errorf("%q: bad size share %q", s, sz)
				}
			default:
				if dz.Size, err = parseSize(sz, kb); err != nil {
					return Distribution{}, err
				}
			}
			access += af
			share += dz.Pct
			d.Zones = append(d.Zones, dz)
		}
		if math.Abs(access-100) > 1e-9 || share > 100+1e-9 {
			return Distribution{}, fmt.Errorf("%q: the access shares must add up to 100 and the sizes to at most 100", s)
		}
		return d, nil
	case "sequence":
		d := Distribution{Kind: Sequence}
		for _, p := range strings.Split(strings.ReplaceAll(param, ":", ","), ",") {
			n, err := strconv.ParseUint(p, 10, 63)
			if err != nil {
				return Distribution{}, fmt.Errorf("%q: block indexes, ','-separated", s)
			}
			d.Seq = append(d.Seq, n)
		}
		if len(d.Seq) == 0 || len(d.Seq) > 64 {
			return Distribution{}, fmt.Errorf("%q: 1 to 64 block indexes", s)
		}
		return d, nil
	}
	return Distribution{}, fmt.Errorf("%q is not supported (random, zipf:THETA, pareto:H, normal:DEV, zoned:..., zoned_abs:..., sequence:...)", s)
}

// ParseFioArgs parses fio's command-line form of jobs ("--name=a
// --rw=randread --bs=4k --name=b ..."): options before the first --name
// are global, each --name starts a job, as fio reads them. Errors name
// the argument's position.
func ParseFioArgs(args []string) ([]Job, error) {
	var b strings.Builder
	b.WriteString("[global]\n")
	for i, a := range args {
		opt, ok := strings.CutPrefix(a, "--")
		if !ok || opt == "" {
			return nil, fmt.Errorf("%w: <command line>: argument %d %q is not a --option", ErrJob, i+1, a)
		}
		if strings.ContainsAny(opt, "\n[]") {
			return nil, fmt.Errorf("%w: <command line>: argument %d %q is not an option", ErrJob, i+1, a)
		}
		if name, ok := strings.CutPrefix(opt, "name="); ok {
			fmt.Fprintf(&b, "[%s]\n", name)
			continue
		}
		b.WriteString(opt + "\n")
	}
	return ParseFio("<command line>", strings.NewReader(b.String()))
}
