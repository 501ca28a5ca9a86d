package bench

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/ssd"
)

// The ssd-profile suite
//
// NAS vendors' SSD profiling tools answer "how much of this SSD should I
// leave unused?" by measuring random-write performance at several
// over-provisioning (OP) levels. RunSSDProfile does the same in simulation:
// for each OP level it builds the setup afresh with that extra OP on every
// SSD, preconditions it as SNIA's PTS does (the whole user capacity written
// twice sequentially, 128 KiB at queue depth 32), then writes 4 KiB
// uniformly random blocks at queue depth 32 in rounds of a fixed amount of
// data, recording each round's IOPS against the data written, until the
// rounds meet ssd.SteadyState (over a 5-round window, max−min ≤ 20 % of
// the mean and the least-squares line's excursion ≤ 10 %). Write
// amplification is NAND over host bytes of the drives during the
// steady-state window.
//
// Unlike the PTS, steady state is only looked for once the random phase
// has written MinWritten user capacities (5 by default). The PTS's rounds
// are a minute of a real drive's writes, and a 25-round write saturation
// test turns a drive over several times; a simulated round is a share of
// a scaled drive. Without that floor a drive with much spare area passes
// the criterion before garbage collection has even started (its IOPS are
// flat and fast), and a drive with little drifts slowly enough out of the
// sequential fill's state to pass it while write amplification is still
// well above its steady value.
//
// The recommended OP is the knee of the curve of steady-state IOPS against
// OP: the smallest level whose next level gains less in IOPS than it gives
// up in usable capacity, both relative (10 points more OP at 40 % gives up
// a sixth of what is left, so it must add a sixth to the IOPS). That is
// where random-write IOPS times usable capacity peaks; beyond it, each
// step of OP costs more capacity than it returns in speed. With 10-point
// steps a step always gives up at least 10 %, so the knee is never past
// the point where +10 % OP gains < 10 % IOPS.

// SSDProfileSuite names the over-provisioning sweep among the suites.
const SSDProfileSuite = "ssd-profile"

// SSDVariant is how RunSSDProfile asks for a setup to be rebuilt.
type SSDVariant struct {
	// Overprovision is the extra over-provisioning of every SSD of the
	// setup (array members and cache), a fraction 0–0.6 of its capacity
	// (ssd.Config.Overprovision).
	Overprovision float64
	// Capacity, when positive, scales every drive down to this user
	// capacity (as sold, before over-provisioning), keeping its per-die
	// geometry, so a sweep of a 500 GB drive runs in seconds.
	Capacity int64
}

// VariantResolver resolves the SETUP of "sim:SETUP" as a SimResolver does,
// with its SSDs changed as v says; a setup without SSDs is an error (which
// RunSSDProfile wraps in ErrTarget). The program injects it next to its
// SimResolver.
type VariantResolver func(setup string, seed uint64, v SSDVariant) (SimSetup, error)

// Default sweep parameters.
const (
	defaultRoundShare   = 0.5 // a round writes half the user capacity
	defaultMinWritten   = 5   // user capacities written before steady state counts
	defaultMaxRounds    = 40  // 20 capacities: beyond that the drive is not converging
	profileBlockSize    = 4096
	profileQueueDepth   = 32
	profileFillBlock    = 128 << 10
	profileSteadyWindow = 5
)

// DefaultOPLevels are the levels swept by default: 0 %, 10 %, … 60 %.
var DefaultOPLevels = []float64{0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6}

// ProfileOptions configure SSDProfile; the zero value means the defaults.
type ProfileOptions struct {
	Levels   []float64 // OP levels, ascending; default DefaultOPLevels
	Capacity int64     // scale every drive to this user capacity; 0: as the setup has it
	// RoundShare is the data written per round as a share of the user
	// capacity; default 0.5.
	RoundShare float64
	// MinWritten is the data, in user capacities, that the random phase
	// writes before steady state is looked for; default 5. See below.
	MinWritten float64
	MaxRounds  int // rounds per level before giving up on steady state; default 40
	Seed       uint64
	// Progress, when set, is called after every round.
	Progress func(ProfileProgress)
}

// ProfileProgress says how far a sweep has got.
type ProfileProgress struct {
	Level, Levels int     // index of the level being measured, and how many there are
	Overprovision float64 // the level's OP
	Round         int     // rounds done at this level
	MaxRounds     int
	IOPS          float64 // the last round's IOPS
}

// ProfileRound is one round of random writes at one OP level.
type ProfileRound struct {
	// Written is the host data written by the random phase so far, at
	// the end of the round, in bytes.
	Written int64   `json:"written_bytes"`
	IOPS    float64 `json:"iops"`
}

// ProfileLevel is the outcome of one OP level.
type ProfileLevel struct {
	Overprovision float64        `json:"overprovision"`
	UserBytes     int64          `json:"user_bytes"` // what the setup offers at this level
	Rounds        []ProfileRound `json:"rounds"`
	Steady        bool           `json:"steady"`      // the last five rounds met ssd.SteadyState
	SteadyIOPS    float64        `json:"steady_iops"` // mean of the last five rounds
	// WA is the drives' write amplification (NAND bytes over host bytes
	// reaching the drives) over the last five rounds.
	WA float64 `json:"wa"`
}

// SSDProfile is the outcome of an over-provisioning sweep.
type SSDProfile struct {
	Target      string         `json:"target"`
	Description string         `json:"description,omitempty"`
	Capacity    int64          `json:"capacity_bytes,omitempty"` // the drives' scaled capacity, if scaled
	Levels      []ProfileLevel `json:"levels"`
	// Recommended is the knee (see Knee).
	Recommended float64 `json:"recommended_op"`
}

// RunSSDProfile sweeps the over-provisioning of setup's SSDs, building the
// setup through resolve once per level; target names it in the result.
func RunSSDProfile(target, setup string, resolve VariantResolver, opt ProfileOptions) (*SSDProfile, error) {
	if opt.Levels == nil {
		opt.Levels = DefaultOPLevels
	}
	if opt.RoundShare == 0 {
		opt.RoundShare = defaultRoundShare
	}
	if opt.MinWritten == 0 {
		opt.MinWritten = defaultMinWritten
	}
	if opt.MaxRounds == 0 {
		opt.MaxRounds = defaultMaxRounds
	}
	switch {
	case len(opt.Levels) == 0:
		return nil, fmt.Errorf("%w: ssd-profile: no OP levels", ErrJob)
	case !(opt.RoundShare > 0 && opt.RoundShare <= 4):
		return nil, fmt.Errorf("%w: ssd-profile: round share %g must be in (0, 4]", ErrJob, opt.RoundShare)
	case opt.MaxRounds < profileSteadyWindow:
		return nil, fmt.Errorf("%w: ssd-profile: at least %d rounds are needed for steady state", ErrJob, profileSteadyWindow)
	case opt.MinWritten < 0:
		return nil, fmt.Errorf("%w: ssd-profile: negative minimum written", ErrJob)
	case opt.Capacity < 0:
		return nil, fmt.Errorf("%w: ssd-profile: negative capacity", ErrJob)
	}
	for i, op := range opt.Levels {
		if math.IsNaN(op) || op < 0 || op > 0.6 || (i > 0 && op <= opt.Levels[i-1]) {
			return nil, fmt.Errorf("%w: ssd-profile: OP levels must ascend within 0..0.6, got %v", ErrJob, opt.Levels)
		}
	}
	p := &SSDProfile{Target: target, Capacity: opt.Capacity}
	for i, op := range opt.Levels {
		s, err := resolve(setup, opt.Seed, SSDVariant{Overprovision: op, Capacity: opt.Capacity})
		if err != nil {
			return nil, fmt.Errorf("%w: %s at %.0f%% OP: %w", ErrTarget, target, op*100, err)
		}
		if s.Name != "" {
			p.Target = s.Name
		}
		p.Description = s.Description
		lv, err := profileLevel(s.Device, op, opt, func(round int, iops float64) {
			if opt.Progress != nil {
				opt.Progress(ProfileProgress{Level: i, Levels: len(opt.Levels), Overprovision: op,
					Round: round, MaxRounds: opt.MaxRounds, IOPS: iops})
			}
		})
		if err != nil {
			return nil, fmt.Errorf("%s at %.0f%% OP: %w", target, op*100, err)
		}
		p.Levels = append(p.Levels, lv)
	}
	p.Recommended = Knee(p.Levels)
	return p, nil
}

// profileLevel preconditions dev and runs rounds of random writes until
// steady state.
func profileLevel(dev models.Device, op float64, opt ProfileOptions, progress func(int, float64)) (ProfileLevel, error) {
	lv := ProfileLevel{Overprovision: op, UserBytes: dev.Capacity()}
	user := dev.Capacity()
	if user < 2*profileFillBlock {
		return lv, fmt.Errorf("%w: %d bytes are too few to profile", ErrTarget, user)
	}
	fill := ssd.NewLoad(ssd.Stimulus{Op: models.Write, BlockSize: profileFillBlock, QueueDepth: profileQueueDepth})
	at, err := fill.Run(dev, 0, 2*(user/profileFillBlock))
	if err != nil {
		return lv, fmt.Errorf("preconditioning: %w", err)
	}
	rnd := ssd.NewLoad(ssd.Stimulus{Op: models.Write, BlockSize: profileBlockSize, Random: true,
		QueueDepth: profileQueueDepth, Seed: opt.Seed})
	perRound := max(int64(float64(user)*opt.RoundShare)/profileBlockSize, profileQueueDepth)
	var iops []float64
	type sample struct{ host, nand float64 }
	var marks []sample // drive counters at the start of each round
	var written int64
	for round := range opt.MaxRounds {
		h, _ := models.Sum(dev, "host_bytes_written")
		n, _ := models.Sum(dev, "nand_bytes_written")
		marks = append(marks, sample{h, n})
		end, err := rnd.Run(dev, at, perRound)
		if err != nil {
			return lv, fmt.Errorf("random writes: %w", err)
		}
		// Rounds follow each other without a pause, as the PTS runs
		// them: the next round's queue fills as this one's drains.
		x := float64(perRound) / time.Duration(end-at).Seconds()
		at = end
		written += perRound * profileBlockSize
		iops = append(iops, x)
		lv.Rounds = append(lv.Rounds, ProfileRound{Written: written, IOPS: x})
		progress(round+1, x)
		if float64(written) >= opt.MinWritten*float64(user) && ssd.SteadyState(iops) {
			lv.Steady = true
			break
		}
	}
	k := len(iops) - profileSteadyWindow
	for _, x := range iops[k:] {
		lv.SteadyIOPS += x
	}
	lv.SteadyIOPS /= profileSteadyWindow
	h, _ := models.Sum(dev, "host_bytes_written")
	n, _ := models.Sum(dev, "nand_bytes_written")
	if dh := h - marks[k].host; dh > 0 {
		lv.WA = (n - marks[k].nand) / dh
	}
	return lv, nil
}

// Knee returns the recommended over-provisioning of a sweep: the smallest
// level whose next level gains less in steady-state IOPS than it gives up
// in usable capacity, both as fractions (where IOPS times usable capacity
// stops growing), or the last level when every step gains more. Levels
// must be in ascending order of OP.
func Knee(levels []ProfileLevel) float64 {
	if len(levels) == 0 {
		return 0
	}
	for i := 0; i+1 < len(levels); i++ {
		a, b := levels[i], levels[i+1]
		if a.SteadyIOPS <= 0 || a.UserBytes <= 0 {
			return a.Overprovision
		}
		gain := b.SteadyIOPS/a.SteadyIOPS - 1
		cost := 1 - float64(b.UserBytes)/float64(a.UserBytes)
		if gain < cost {
			return a.Overprovision
		}
	}
	return levels[len(levels)-1].Overprovision
}

// ssdProfileJobs is the sweep's workload at the device's current
// over-provisioning, as ordinary jobs, for targets that cannot be rebuilt
// with other levels (a real device): the sequential precondition, then
// 4 KiB random writes at queue depth 32 for five minutes.
func ssdProfileJobs() []Job {
	return []Job{
		{Name: "precondition SEQ128K Q32 write x2", RW: Write, BS: profileFillBlock, IODepth: profileQueueDepth,
			Loops: 2, Direct: true, Filename: "ssd-profile.dat", Stonewall: true},
		{Name: "RND4K Q32T1 write", RW: RandWrite, BS: profileBlockSize, IODepth: profileQueueDepth,
			Direct: true, TimeBased: true, Runtime: 5 * time.Minute, Filename: "ssd-profile.dat", Stonewall: true},
	}
}

// WriteFormat writes the sweep as "table", "json" or "csv" (one row per
// round of every level).
func (p *SSDProfile) WriteFormat(w io.Writer, format string) error {
	switch format {
	case "table":
		return p.WriteTable(w)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(p)
	case "csv":
		cw := csv.NewWriter(w)
		_ = cw.Write([]string{"target", "overprovision", "user_bytes", "round", "written_bytes", "iops", "steady", "steady_iops", "wa"})
		for _, lv := range p.Levels {
			for i, r := range lv.Rounds {
				_ = cw.Write([]string{p.Target, ftoa(lv.Overprovision), itoa(lv.UserBytes), strconv.Itoa(i + 1), itoa(r.Written),
					ftoa(r.IOPS), strconv.FormatBool(lv.Steady), ftoa(lv.SteadyIOPS), ftoa(lv.WA)})
			}
		}
		cw.Flush()
		return cw.Error()
	}
	return fmt.Errorf("unknown format %q (known: %s)", format, strings.Join(Formats, ", "))
}

// WriteTable writes the sweep for people: one line per level.
func (p *SSDProfile) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "target %s (virtual time), suite %s", p.Target, SSDProfileSuite)
	if p.Capacity > 0 {
		fmt.Fprintf(w, ", drives scaled to %s", binaryBytes(p.Capacity))
	}
	fmt.Fprintln(w)
	if p.Description != "" {
		fmt.Fprintln(w, p.Description)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "OP\tUSABLE\tROUNDS\tWRITTEN (×USABLE)\tSTEADY\tIOPS\tWA\t")
	for _, lv := range p.Levels {
		var written int64
		if n := len(lv.Rounds); n > 0 {
			written = lv.Rounds[n-1].Written
		}
		steady := "yes"
		if !lv.Steady {
			steady = "no"
		}
		fmt.Fprintf(tw, "%.0f%%\t%s\t%d\t%.1f\t%s\t%.0f\t%.2f\t\n", lv.Overprovision*100, binaryBytes(lv.UserBytes),
			len(lv.Rounds), float64(written)/float64(max(lv.UserBytes, 1)), steady, lv.SteadyIOPS, lv.WA)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "recommended over-provisioning: %.0f%% (beyond it, more OP gains less IOPS than it costs capacity)\n", p.Recommended*100)
	return err
}

// binaryBytes formats a (scaled) capacity in binary units: "921.6 MiB".
func binaryBytes(b int64) string {
	switch {
	case b >= 1<<40:
		return strconv.FormatFloat(float64(b)/(1<<40), 'f', 2, 64) + " TiB"
	case b >= 1<<30:
		return strconv.FormatFloat(float64(b)/(1<<30), 'f', 2, 64) + " GiB"
	}
	return strconv.FormatFloat(float64(b)/(1<<20), 'f', 1, 64) + " MiB"
}
