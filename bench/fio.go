package bench

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// harmlessOptions are accepted and have no effect.
var harmlessOptions = []string{
	"allow_mounted_write", "clat_percentiles", "create_on_open", "description", "disk_util",
	"fallocate", "group_reporting", "invalidate", "lat_percentiles", "new_group", "norandommap",
	"percentile_list", "randrepeat", "thread", "unified_rw_reporting",
}

// harmlessEngines are the ioengine values accepted: each submits the same
// reads and writes; the queue depth is what iodepth says.
var harmlessEngines = []string{"io_uring", "libaio", "posixaio", "psync", "pvsync", "pvsync2", "sync", "vsync", "windowsaio"}

// fioOption is one key=value line.
type fioOption struct {
	key, value string
	bare       bool // written without '='
	line       int
}

// LoadFio parses the fio job file at path.
func LoadFio(path string) ([]Job, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrJob, err)
	}
	defer f.Close()
	return ParseFio(path, f)
}

// ParseFio parses a fio job file read from r; file names it in messages.
// Every job is given its defaults and validated. Errors wrap ErrJob.
func ParseFio(file string, r io.Reader) ([]Job, error) {
	var (
		global  []fioOption
		jobs    []Job
		section string
		opts    []fioOption
		secLine int
		inJob   bool
	)
	errAt := func(line int, format string, a ...any) error {
		return fmt.Errorf("%w: %s:%d: %s", ErrJob, file, line, fmt.Sprintf(format, a...))
	}
	finish := func() error {
		if !inJob {
			return nil
		}
		j := Job{Name: section, Pos: fmt.Sprintf("%s:%d", file, secLine)}
		all := append(append([]fioOption(nil), global...), opts...)
		kb := int64(1024)
		for _, o := range all {
			if o.key == "kb_base" {
				switch o.value {
				case "1024":
					kb = 1024
				case "1000":
					kb = 1000
				default:
					return errAt(o.line, "option kb_base: want 1000 or 1024, not %q", o.value)
				}
			}
		}
		st := fioState{kb: kb, mix: -1}
		for _, o := range all {
			if err := applyFio(&j, o, &st); err != nil {
				return errAt(o.line, "option %s: %v", o.key, err)
			}
		}
		switch mixed := j.RW == ReadWrite || j.RW == RandRW; {
		case st.mix == 0 && mixed: // all writes
			j.RW = map[RW]RW{ReadWrite: Write, RandRW: RandWrite}[j.RW]
		case st.mix >= 0 && mixed:
			j.RWMixRead = st.mix
		}
		j.EnsureDefaults()
		if err := j.Validate(); err != nil {
			return err
		}
		jobs = append(jobs, j)
		return nil
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || line[0] == ';' || line[0] == '#':
			continue
		case line[0] == '[':
			if !strings.HasSuffix(line, "]") {
				return nil, errAt(n, "section header %q has no closing ']'", line)
			}
			name := strings.TrimSpace(line[1 : len(line)-1])
			if name == "" || strings.ContainsAny(name, "[]/\\") || strings.Contains(name, "..") {
				return nil, errAt(n, "bad section name %q", name)
			}
			if err := finish(); err != nil {
				return nil, err
			}
			section, secLine, opts, inJob = name, n, nil, name != "global"
			continue
		case strings.HasPrefix(line, "include "):
			return nil, errAt(n, "include is not supported: put the jobs in one file")
		case section == "":
			return nil, errAt(n, "option %q outside a section: put it under [global] or a job", line)
		}
		o := fioOption{line: n}
		if k, v, ok := strings.Cut(line, "="); ok {
			o.key, o.value = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		} else {
			o.key, o.bare = strings.ToLower(line), true
		}
		if o.key == "" {
			return nil, errAt(n, "line %q has no option name", line)
		}
		if strings.Contains(o.value, "$") && o.key != "filename_format" {
			return nil, errAt(n, "option %s: environment variables (%s) are not supported", o.key, o.value)
		}
		if inJob {
			opts = append(opts, o)
		} else {
			global = append(global, o)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrJob, file, err)
	}
	if err := finish(); err != nil {
		return nil, err
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("%w: %s: no job sections", ErrJob, file)
	}
	return jobs, nil
}

// fioState carries what options of a section tell each other.
type fioState struct {
	kb  int64 // kb_base
	mix int   // rwmixread as written, -1 when not
}

// applyFio sets the job field that option o describes.
func applyFio(j *Job, o fioOption, st *fioState) error {
	kb := st.kb
	v := o.value
	if o.bare {
		v = "1"
	}
	var err error
	switch o.key {
	case "kb_base":
	case "name":
		if v == "" {
			return fmt.Errorf("empty name")
		}
		j.Name = v
	case "ioengine":
		if !slices.Contains(harmlessEngines, v) {
			return fmt.Errorf("ioengine %q is not supported (accepted: %s)", v, strings.Join(harmlessEngines, ", "))
		}
	case "rw", "readwrite":
		if strings.Contains(v, ":") {
			return fmt.Errorf("%q: an offset modifier after ':' is not supported", v)
		}
		switch v {
		case "read":
			j.RW = Read
		case "write":
			j.RW = Write
		case "randread":
			j.RW = RandRead
		case "randwrite":
			j.RW = RandWrite
		case "rw", "readwrite":
			j.RW = ReadWrite
		case "randrw":
			j.RW = RandRW
		default:
			return fmt.Errorf("%q is not supported (want read, write, randread, randwrite, rw or randrw)", v)
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
		j.BS, err = parseSizePair(v, kb)
	case "bssplit":
		j.BSSplit, err = parseBSSplit(v, kb)
	case "size":
		if strings.HasSuffix(v, "%") {
			return fmt.Errorf("%q: a size in percent is not supported", v)
		}
		j.Size, err = parseSize(v, kb)
	case "filesize":
		j.FileSize, err = parseSize(v, kb)
	case "offset":
		if strings.HasSuffix(v, "%") {
			return fmt.Errorf("%q: an offset in percent is not supported", v)
		}
		j.Offset, err = parseSize(v, kb)
	case "iodepth":
		j.IODepth, err = parseIntField(v, 1, 65536)
	case "numjobs":
		j.NumJobs, err = parseIntField(v, 1, 4096)
	case "loops":
		j.Loops, err = parseIntField(v, 1, 1<<20)
	case "nrfiles":
		j.NrFiles, err = parseIntField(v, 1, 1<<20)
	case "openfiles":
		var n int
		if n, err = parseIntField(v, 1, 1<<20); err == nil {
			j.FileByFile = n == 1
		}
	case "file_service_type":
		if v != "roundrobin" && v != "sequential" {
			return fmt.Errorf("%q is not supported (roundrobin, or sequential with openfiles=1)", v)
		}
	case "runtime", "timeout":
		j.Runtime, err = parseTime(v)
	case "ramp_time":
		j.RampTime, err = parseTime(v)
	case "startdelay":
		// fio measures it from its own start: a job of a later group
		// starts with its group unless the delay has not passed yet.
		j.StartDelay, err = parseTime(v)
		j.DelayFromRunStart = true
	case "time_based":
		j.TimeBased, err = parseBool(v)
	case "stonewall", "wait_for_previous":
		j.Stonewall, err = parseBool(v)
	case "direct":
		j.Direct, err = parseBool(v)
	case "buffered":
		var b bool
		b, err = parseBool(v)
		j.Direct = !b
	case "sync":
		switch v {
		case "sync", "dsync":
			j.WriteThrough = true
		case "none":
			j.WriteThrough = false
		default:
			j.WriteThrough, err = parseBool(v)
		}
	case "fsync", "fdatasync":
		j.Fsync, err = parseIntField(v, 0, 1<<30)
	case "end_fsync":
		j.EndFsync, err = parseBool(v)
	case "unlink":
		j.Unlink, err = parseBool(v)
	case "overwrite":
		var b bool
		if b, err = parseBool(v); b {
			return fmt.Errorf("overwrite=1 is not supported: files of write jobs are laid out without data")
		}
	case "filename":
		for _, f := range strings.Split(v, ":") {
			if strings.HasPrefix(f, "/") || strings.Contains(f, "..") {
				return fmt.Errorf("%s: only a relative name inside the target is allowed (give the device or file as --target)", f)
			}
		}
		j.Filename = v
	case "filename_format":
		j.FilenameFormat = v
	case "directory":
		if strings.HasPrefix(v, "/") || strings.Contains(v, "..") {
			return fmt.Errorf("%s: only a relative directory inside the target is allowed (--target says where files go)", v)
		}
		j.Directory = v
	case "random_distribution":
		j.Distribution, err = parseDistribution(v)
	case "randseed":
		var n int64
		n, err = parseInt(v, 0, math.MaxInt64)
		j.RandSeed = uint64(n)
	case "rate_iops":
		if strings.Contains(v, ",") {
			return fmt.Errorf("%q: separate read and write rates are not supported", v)
		}
		j.RateIOPS, err = parseIntField(v, 0, 1<<30)
	case "rate_process":
		switch v {
		case "linear":
			j.Poisson = false
		case "poisson":
			j.Poisson = true
		default:
			return fmt.Errorf("%q is not supported (linear or poisson)", v)
		}
	default:
		if !slices.Contains(harmlessOptions, o.key) {
			return fmt.Errorf("not supported by nasemu (it would change the I/O pattern or is unknown); remove it or see the bench package docs")
		}
	}
	return err
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

// parseSizePair parses bs: one size, or "read,write" when both are equal.
func parseSizePair(s string, kb int64) (int64, error) {
	r, w, pair := strings.Cut(s, ",")
	a, err := parseSize(r, kb)
	if err != nil || !pair {
		return a, err
	}
	b, err := parseSize(w, kb)
	if err != nil {
		return 0, err
	}
	if a != b && w != "" {
		return 0, fmt.Errorf("%q: different read and write block sizes are not supported", s)
	}
	return a, nil
}

// parseBSSplit parses "4k/10:64k/50:32k/40"; an entry without a percentage
// gets an equal share of what is left.
func parseBSSplit(s string, kb int64) ([]BSSplit, error) {
	if strings.Contains(s, ",") {
		return nil, fmt.Errorf("%q: separate read and write splits are not supported", s)
	}
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
func parseTime(s string) (time.Duration, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	unit := time.Second
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
		return 0, fmt.Errorf("bad time %q: want a number of seconds or a unit such as 500ms, 30s, 2m", s)
	}
	return time.Duration(v * float64(unit)), nil
}

// parseDistribution parses random_distribution.
func parseDistribution(s string) (Distribution, error) {
	kind, param, hasParam := strings.Cut(s, ":")
	switch kind {
	case "random", "uniform":
		if hasParam {
			return Distribution{}, fmt.Errorf("%q: uniform takes no parameter", s)
		}
		return Distribution{}, nil
	case "zipf", "pareto":
		if !hasParam {
			return Distribution{}, fmt.Errorf("%q: %s needs a parameter, e.g. %s:0.9", s, kind, kind)
		}
		v, err := strconv.ParseFloat(param, 64)
		if err != nil {
			return Distribution{}, fmt.Errorf("%q: bad parameter", s)
		}
		d := Distribution{Kind: Zipf, Param: v}
		if kind == "pareto" {
			d.Kind = Pareto
		}
		return d, nil
	}
	return Distribution{}, fmt.Errorf("%q is not supported (uniform, zipf:THETA or pareto:H)", s)
}
