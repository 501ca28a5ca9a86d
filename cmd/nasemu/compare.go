package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nasemu/nasemu"
	"github.com/nasemu/nasemu/bench"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/catalog"
	"github.com/nasemu/nasemu/models/link"
	"github.com/nasemu/nasemu/models/proto"
	"github.com/nasemu/nasemu/models/raid"
	"github.com/nasemu/nasemu/models/setup"
	"github.com/nasemu/nasemu/models/ssd"
	"github.com/nasemu/nasemu/report"
)

// simFacts says what a sim: setup offers apart from speed, given the
// device it was built as: a catalog drive offers its capacity and survives
// no failure; a setup (built-in name or file) what setupFacts says;
// anything else is unknown.
var simFacts = func(name string, dev models.Device) (report.Facts, error) {
	if d, err := catalog.LookupDrive(name); err == nil {
		none := 0
		f := report.Facts{UsableBytes: dev.Capacity(), Tolerates: &none}
		p := setup.Price{Unknown: []string{"drive " + d.Name + " (no price in the catalog)"}}
		if d.Price.USD > 0 {
			p = setup.Price{Parts: []setup.PricePart{{Item: d.Name, Count: 1, UnitUSD: d.Price.USD, Date: d.Price.Date}}}
		}
		f.SetPrice(p)
		return f, nil
	}
	s, err := nasemu.LoadSetup(name)
	if errors.Is(err, setup.ErrNotFound) {
		// The resolver knows the name but neither the catalog nor the
		// setups do (a test's device): nothing is known.
		return report.Facts{}, nil
	}
	if err != nil {
		return report.Facts{}, err
	}
	return setupFacts(s)
}

// setupFacts returns a setup's usable capacity, the drives it may lose,
// the time to rebuild one replaced drive and its price (setup.Price) with
// the price per usable TB.
//
// The rebuild time is an estimate for an idle array: every byte of the
// replacement is written, at the lower of md's rebuild rate (the setup's,
// or md's idle maximum of 200000 KiB/s) and the drive's sustained
// sequential write rate (an SSD's datasheet figure; a hard disk's mean of
// its outer- and inner-zone rates). Foreground I/O throttles a real
// rebuild far below that.
func setupFacts(s *setup.Setup) (report.Facts, error) {
	usable, err := s.UsableCapacity()
	if err != nil {
		return report.Facts{}, err
	}
	tol := s.Tolerates()
	f := report.Facts{UsableBytes: usable, Tolerates: &tol}
	f.SetPrice(s.Price())
	if tol == 0 {
		return f, nil
	}
	md := s.RAID.RebuildRate
	if md == 0 {
		md = raid.DefaultRebuildMaxKiBps * 1024 / 1e6
	}
	var worst time.Duration
	for _, g := range s.Drives {
		capacity, rate := float64(g.Capacity), md
		switch d := g.Drive; {
		case d.SSD != nil:
			if capacity == 0 {
				capacity = float64(d.SSD.Capacity)
			}
			capacity *= 1 - g.Overprovision
			if d.SSD.SeqWriteMBps > 0 {
				rate = min(rate, d.SSD.SeqWriteMBps)
			}
		case d.HDD != nil:
			if capacity == 0 {
				capacity = float64(d.HDD.Capacity)
			}
			inner := d.HDD.InnerMBps
			if inner == 0 {
				inner = d.HDD.OuterMBps / 2
			}
			rate = min(rate, (d.HDD.OuterMBps+inner)/2)
		}
		worst = max(worst, time.Duration(capacity/(rate*1e6)*float64(time.Second)))
	}
	f.Rebuild = worst
	return f, nil
}

// simVariantResolver builds a sim: setup with other SSD over-provisioning
// and scaled drives, for the ssd-profile sweep.
var simVariantResolver bench.VariantResolver = resolveVariant

// resolveVariant builds a catalog SSD, or the storage of a setup, with
// v's over-provisioning and capacity.
//
// Of a setup the sweep measures the array as the NAS's own profiling tool
// does, below its page cache: the drives, the array and any SSD cache,
// without the NAS controller, the network or a file protocol. (The NAS's
// page cache would absorb a scaled-down array whole and hide the SSDs.)
func resolveVariant(name string, seed uint64, v bench.SSDVariant) (bench.SimSetup, error) {
	if d, err := catalog.LookupDrive(name); err == nil {
		return resolveDriveVariant(d, seed, v)
	}
	s, err := nasemu.LoadSetup(name)
	if err != nil {
		return bench.SimSetup{}, err
	}
	if v.Capacity > 0 {
		s = s.WithDriveCapacity(models.Bytes(v.Capacity))
	}
	c := *s
	ssds := 0
	withOP := func(groups []setup.DriveGroup) []setup.DriveGroup {
		out := append([]setup.DriveGroup(nil), groups...)
		for i := range out {
			if out[i].Drive.SSD != nil {
				out[i].Overprovision = v.Overprovision
				ssds += out[i].Count
			}
		}
		return out
	}
	c.Drives = withOP(s.Drives)
	if s.Cache != nil {
		cc := *s.Cache
		cc.Drives = withOP(s.Cache.Drives)
		c.Cache = &cc
	}
	if ssds == 0 {
		return bench.SimSetup{}, fmt.Errorf("%w: setup %s has no SSDs to profile", models.ErrConfig, name)
	}
	c.NAS, c.Encryption = nil, false
	c.Protocol = proto.Config{Protocol: proto.Local}
	c.Link = link.Config{Kind: link.DefaultKind}
	dev, err := c.Build(seed)
	if err != nil {
		return bench.SimSetup{}, err
	}
	return bench.SimSetup{Device: dev, Description: s.Description + " (its array, without NAS, network and protocol)"}, nil
}

func resolveDriveVariant(d catalog.Drive, seed uint64, v bench.SSDVariant) (bench.SimSetup, error) {
	if d.SSD == nil {
		return bench.SimSetup{}, fmt.Errorf("%w: %s is a hard disk: ssd-profile needs SSDs", models.ErrConfig, d.Name)
	}
	c := *d.SSD
	if v.Capacity > 0 {
		var err error
		if c, err = c.ScaleTo(v.Capacity); err != nil {
			return bench.SimSetup{}, err
		}
	}
	c.Overprovision = v.Overprovision
	dev, err := ssd.New(c, seed)
	if err != nil {
		return bench.SimSetup{}, err
	}
	return bench.SimSetup{Device: dev, Description: d.Product}, nil
}

// factsOf returns what target addr offers apart from speed: from the
// target itself when it knows, from simFacts for sim: targets; unknown
// otherwise.
func factsOf(addr string, tg bench.Target) (report.Facts, error) {
	if f, ok := tg.(report.FactSource); ok {
		return f.Facts(), nil
	}
	setup, isSim := strings.CutPrefix(addr, "sim:")
	sim, ok := tg.(*bench.Sim)
	if !isSim || !ok {
		return report.Facts{}, nil
	}
	return simFacts(setup, sim.Device())
}

func runCompare(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("compare", "(--suite NAME | --job FILE.fio) TARGET TARGET... [--size SIZE] [--set KEY=VALUE]... [--format table|json|csv] [--out DIR] [--seed N] [--runtime D]", stderr)
	suite := fs.String("suite", "", "a suite: "+joinNames(bench.SuiteNames()))
	jobFile := fs.String("job", "", "a fio job file")
	format := fs.String("format", "table", "output format: "+strings.Join(bench.Formats, ", "))
	out := fs.String("out", "", "also write comparison.json, the charts (SVG, PNG) and index.html into this directory")
	seed := fs.Uint64("seed", 1, "seed of offsets and models: the same seed gives the same sim results")
	runtime := fs.Duration("runtime", 0, "override every job's runtime, e.g. 10s to shorten a suite")
	size := fs.String("size", "", "override every job's size (files scale with it), e.g. 64GiB: larger than the NAS's page cache to measure its storage")
	setArgs := fs.StringArray("set", nil, "set a setup key on every sim: target, e.g. drives.count=6 or link.kind=10gbe (repeatable; keys as in setup files)")
	quiet := fs.Bool("quiet", false, "no progress on stderr")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() < 2:
		return usagef("give at least two targets to compare")
	case (*suite == "") == (*jobFile == ""):
		return usagef("give exactly one of --suite and --job")
	case *suite == bench.SSDProfileSuite:
		return usagef("compare runs job suites; run ssd-profile with nasemu bench, once per setup")
	case !slices.Contains(bench.Formats, *format):
		return usagef("unknown format %q (known: %s)", *format, strings.Join(bench.Formats, ", "))
	case *runtime < 0:
		return usagef("--runtime must not be negative")
	}
	sizeOverride, err := sizeFlag(*size)
	if err != nil {
		return err
	}
	var sets setFlags
	for _, arg := range *setArgs {
		k, v, err := setup.ParseSet(arg)
		if err != nil {
			return usagef("--set: %v", err)
		}
		sets = append(sets, [2]string{k, v})
	}
	for _, addr := range fs.Args() {
		if len(sets) > 0 && !strings.HasPrefix(addr, "sim:") {
			return usagef("--set changes setups: target %s is not a sim:SETUP", addr)
		}
	}
	var jobs []bench.Job
	workload := *suite
	if *suite != "" {
		jobs, err = bench.Suite(*suite)
	} else {
		jobs, err = bench.LoadFio(*jobFile)
		workload = filepath.Base(*jobFile)
	}
	if err != nil {
		return usageError{err}
	}
	jobs = bench.Overrides{Runtime: *runtime, Size: sizeOverride}.Apply(jobs)
	working := make(map[string]int64, len(jobs))
	for _, j := range jobs {
		working[j.Name] = j.WorkingSet()
	}

	cmp := &report.Comparison{Workload: workload}
	reg := targets()
	if len(sets) > 0 {
		reg = bench.NewRegistry(bench.SimFactory(func(name string, seed uint64) (bench.SimSetup, error) {
			s, err := sets.load(name)
			if err != nil {
				return bench.SimSetup{}, err
			}
			dev, err := s.Build(seed)
			if err != nil {
				return bench.SimSetup{}, err
			}
			return bench.SimSetup{Device: dev, Name: "sim:" + s.Name, Description: s.Description + " with " + sets.String()}, nil
		}))
	}
	for _, addr := range fs.Args() {
		run, err := compareOne(reg, addr, jobs, *seed, *suite, sets, showProgress(stderr, *quiet), stderr)
		if err != nil {
			return err
		}
		run.NotePageCache(working)
		cmp.Runs = append(cmp.Runs, run)
	}
	if *out != "" {
		if err := report.WriteCompare(*out, cmp); err != nil {
			return err
		}
		b, err := json.MarshalIndent(cmp, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(*out, "comparison.json"), append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return cmp.WriteFormat(stdout, *format)
}

// compareOne runs the jobs on one target of a comparison.
func compareOne(reg *bench.Registry, addr string, jobs []bench.Job, seed uint64, suite string, sets setFlags, progress bool, stderr io.Writer) (report.Run, error) {
	tg, err := reg.Open(addr, bench.OpenOptions{Seed: seed})
	if err != nil {
		return report.Run{}, benchError(err)
	}
	defer tg.Close()
	facts, err := factsOf(addr, tg)
	if err != nil {
		return report.Run{}, benchError(err)
	}
	if name, ok := strings.CutPrefix(addr, "sim:"); ok {
		// Of a setup (with the --set keys): its facts and NAS page cache.
		if s, err := sets.load(name); err == nil {
			if facts, err = setupFacts(s); err != nil {
				return report.Run{}, benchError(err)
			}
			if s.NAS != nil {
				facts.PageCacheBytes = s.NAS.Config.PageCacheBytes()
			}
		}
	}
	var run bench.Target = tg
	var pt *progressTarget
	if progress {
		pt = withProgress(tg, jobs, stderr)
		pt.label = addr
		run = pt
	}
	rep, err := bench.Run(run, jobs, bench.Options{Seed: seed, Suite: suite})
	if pt != nil {
		pt.finish()
	}
	if err != nil {
		return report.Run{}, benchError(err)
	}
	return report.Run{Report: rep, Facts: facts}, nil
}

// defaultProfileCapacity is the capacity ssd-profile scales each drive to
// unless --size says otherwise: a full-size sweep writes terabytes.
const defaultProfileCapacity = 1 << 30

// runSSDProfile runs the over-provisioning sweep on a sim: setup.
func runSSDProfile(target string, size int64, seed uint64, format, out string, progress bool, stdout, stderr io.Writer) error {
	setup, ok := strings.CutPrefix(target, "sim:")
	if !ok || setup == "" {
		return usagef("ssd-profile sweeps a sim:SETUP, not %q", target)
	}
	if size == 0 {
		size = defaultProfileCapacity
	}
	opt := bench.ProfileOptions{Capacity: size, Seed: seed}
	finish := func() {}
	if progress {
		bar := newBar(stderr, progressSteps, "ssd-profile "+target)
		// A level takes about a dozen rounds; the bar counts levels.
		const typicalRounds = 12
		opt.Progress = func(p bench.ProfileProgress) {
			part := min(float64(p.Round)/typicalRounds, 1)
			bar.Describe(fmt.Sprintf("[OP %.0f%%, %d/%d] round %d, %s IOPS", p.Overprovision*100, p.Level+1, p.Levels, p.Round, siNumber(p.IOPS)))
			_ = bar.Set64(int64((float64(p.Level) + part) / float64(p.Levels) * progressSteps))
		}
		finish = func() { _ = bar.Finish() }
	}
	prof, err := bench.RunSSDProfile(target, setup, simVariantResolver, opt)
	finish()
	if err != nil {
		return benchError(err)
	}
	if out != "" {
		if err := report.WriteProfile(out, prof); err != nil {
			return err
		}
		f, err := os.Create(filepath.Join(out, "ssd-profile.json"))
		if err != nil {
			return err
		}
		if err := prof.WriteFormat(f, "json"); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return prof.WriteFormat(stdout, format)
}

// setFlags are compare's --set KEY=VALUE arguments, in order.
type setFlags [][2]string

func (f setFlags) String() string {
	parts := make([]string, len(f))
	for i, kv := range f {
		parts[i] = kv[0] + "=" + kv[1]
	}
	return strings.Join(parts, ", ")
}

// load loads setup name with the keys set, each through the setup's
// parser (setup.With), so a bad key or an impossible value is refused as
// in a setup file.
func (f setFlags) load(name string) (*setup.Setup, error) {
	s, err := nasemu.LoadSetup(name)
	if errors.Is(err, setup.ErrNotFound) && len(f) > 0 {
		if _, derr := catalog.LookupDrive(name); derr == nil {
			return nil, fmt.Errorf("%w: --set changes setups: %s is a catalog drive", models.ErrConfig, name)
		}
	}
	if err != nil {
		return nil, err
	}
	for _, kv := range f {
		if s, err = s.With(kv[0], kv[1]); err != nil {
			return nil, err
		}
	}
	return s, nil
}
