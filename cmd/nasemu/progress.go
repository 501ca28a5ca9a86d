package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nasemu/nasemu/bench"
	"github.com/nasemu/nasemu/models"
	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Progress on stderr
//
// Long runs show a progress bar on stderr — the job group, percent, ETA
// and current IOPS — but only when stderr is a terminal and --quiet is
// not given, so that piped output holds nothing but results (which go to
// stdout in any case).
//
// The runner has no progress callback, so the bar watches the run from
// outside: a target wrapper sees every I/O (issue time, completion time,
// size) and follows the job groups with what the jobs say about them. A
// time-based group is over once I/O is issued past its start delay, ramp
// and runtime; a size-based one once its bytes have moved. Groups run one
// after another (stonewalls), so the first I/O after a group is over
// belongs to the next. Times are the target's clock's, virtual or wall.

// isTerminal reports whether w is a terminal; tests replace it.
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// showProgress reports whether progress belongs on stderr.
func showProgress(stderr io.Writer, quiet bool) bool { return !quiet && isTerminal(stderr) }

// newBar returns a progress bar of max steps on w.
func newBar(w io.Writer, max int64, desc string) *progressbar.ProgressBar {
	return progressbar.NewOptions64(max,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionSetWidth(28),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
	)
}

// group is what the tracker knows of a job group in advance.
type group struct {
	name     string        // its jobs' names
	duration time.Duration // time-based: start delay, ramp and runtime of its longest job
	delay    time.Duration // the shortest start delay of its jobs: the clock starts that long before its first I/O
	bytes    int64         // size-based: bytes its jobs move; 0: unknown (a whole device)
}

func planGroups(jobs []bench.Job) []group {
	var gs []group
	var before time.Duration // planned time of the groups before this one
	for i, j := range jobs {
		j.EnsureDefaults()
		if i == 0 || j.Stonewall {
			if len(gs) > 0 {
				before += gs[len(gs)-1].duration
			}
			gs = append(gs, group{})
		}
		g := &gs[len(gs)-1]
		delay := j.StartDelay
		if j.DelayFromRunStart { // fio's startdelay: from the start of the run
			delay = max(0, delay-before)
		}
		if g.name != "" {
			g.name += " + "
			g.delay = min(g.delay, delay)
		} else {
			g.delay = delay
		}
		g.name += j.Name
		if j.TimeBased || j.Runtime > 0 {
			g.duration = max(g.duration, delay+j.RampTime+j.Runtime)
		}
		if !j.TimeBased && j.Size > 0 {
			g.bytes += j.Size * int64(j.Loops) * int64(j.NumJobs)
		}
	}
	return gs
}

// progressTarget is a target that reports the run's progress on a bar.
type progressTarget struct {
	bench.Target
	label  string // names the target when several run one after another
	mu     sync.Mutex
	bar    *progressbar.ProgressBar
	groups []group
	g      int           // current group
	start  time.Duration // first I/O of the current group, -1: none yet
	moved  int64         // bytes of the current group
	// IOPS over the last iopsWindow or so of the target's clock.
	winStart time.Duration
	winIOs   int64
	iops     float64
	ops      int
}

var (
	_ bench.Target        = (*progressTarget)(nil)
	_ bench.Describer     = (*progressTarget)(nil)
	_ bench.CounterSource = (*progressTarget)(nil)
)

const progressSteps = 1000

// iopsWindow is how much of the target's time the current IOPS are
// counted over: long enough to smooth bursts, short enough to follow a
// job's changes and to show something for short jobs.
const iopsWindow = 250 * time.Millisecond

// withProgress wraps t so that running jobs on it draws a bar on w.
func withProgress(t bench.Target, jobs []bench.Job, w io.Writer) *progressTarget {
	p := &progressTarget{Target: t, groups: planGroups(jobs), start: -1}
	p.bar = newBar(w, progressSteps, p.describe())
	return p
}

// Description forwards to the wrapped target, so reports say the same.
func (p *progressTarget) Description() string {
	if d, ok := p.Target.(bench.Describer); ok {
		return d.Description()
	}
	return ""
}

// DeviceCounters forwards to the wrapped target.
func (p *progressTarget) DeviceCounters() bench.DeviceCounters {
	if c, ok := p.Target.(bench.CounterSource); ok {
		return c.DeviceCounters()
	}
	return bench.DeviceCounters{Source: "none"}
}

// Open wraps the file so that its I/O is seen.
func (p *progressTarget) Open(at time.Duration, name string, size int64, flags bench.OpenFlags) (bench.File, time.Duration, error) {
	f, done, err := p.Target.Open(at, name, size, flags)
	if err != nil {
		return f, done, err
	}
	return &progressFile{File: f, p: p}, done, nil
}

// Unwrap returns the target under the progress display.
func (p *progressTarget) Unwrap() bench.Target { return p.Target }

// Unwrap returns the file under the progress display.
func (f *progressFile) Unwrap() bench.File { return f.File }

// finish completes the bar.
func (p *progressTarget) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.g = len(p.groups) - 1
	p.bar.Describe(p.describe())
	_ = p.bar.Finish()
}

type progressFile struct {
	bench.File
	p *progressTarget
}

// Do implements bench.File.
func (f *progressFile) Do(at time.Duration, op models.Op, off, n int64, buf []byte) (time.Duration, error) {
	done, err := f.File.Do(at, op, off, n, buf)
	if err == nil && (op == models.Read || op == models.Write) {
		f.p.saw(at, done, n)
	}
	return done, err
}

// saw accounts for an I/O of n bytes issued at at that completed at done.
func (p *progressTarget) saw(at, done time.Duration, n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.over(at) && p.g < len(p.groups)-1 {
		p.g++
		p.start, p.moved, p.iops = -1, 0, 0
	}
	if p.start < 0 {
		// The group's clock started its start delay before this I/O;
		// the delay is part of the group's planned duration.
		p.start = at - p.groups[p.g].delay
		p.winStart, p.winIOs = at, 0
	}
	p.moved += n
	p.winIOs++
	if d := done - p.winStart; d >= iopsWindow {
		p.iops = float64(p.winIOs) / d.Seconds()
		p.winStart, p.winIOs = done, 0
	}
	if p.ops++; p.ops%256 == 0 {
		p.bar.Describe(p.describe())
		_ = p.bar.Set64(int64(p.fraction(done) * progressSteps))
	}
}

// over reports whether the current group is done by time or bytes when
// an I/O is issued at at.
func (p *progressTarget) over(at time.Duration) bool {
	g := p.groups[p.g]
	switch {
	case p.start < 0:
		return false
	case g.duration > 0:
		return at >= p.start+g.duration
	case g.bytes > 0:
		return p.moved >= g.bytes
	}
	return false
}

// fraction is the share of the run done, each group counting the same.
func (p *progressTarget) fraction(now time.Duration) float64 {
	g := p.groups[p.g]
	part := 0.0
	switch {
	case p.start < 0:
	case g.duration > 0:
		part = float64(now-p.start) / float64(g.duration)
	case g.bytes > 0:
		part = float64(p.moved) / float64(g.bytes)
	}
	return (float64(p.g) + min(max(part, 0), 1)) / float64(len(p.groups))
}

func (p *progressTarget) describe() string {
	name := p.groups[p.g].name
	if len(name) > 40 {
		name = name[:39] + "…"
	}
	s := fmt.Sprintf("[%d/%d] %s", p.g+1, len(p.groups), name)
	if p.label != "" {
		s = p.label + " " + s
	}
	if p.iops > 0 {
		s += fmt.Sprintf(" %s IOPS", strings.TrimSpace(siNumber(p.iops)))
	}
	return s
}

// siNumber formats a rate with k or M.
func siNumber(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.2fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}
