package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/nasemu/nasemu"
	"github.com/nasemu/nasemu/bench"
	"github.com/nasemu/nasemu/iscsi"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/catalog"
	"github.com/nasemu/nasemu/models/setup"
	"github.com/nasemu/nasemu/report"
	"github.com/nasemu/nasemu/smb"
)

// simResolver turns the SETUP of sim:SETUP into a device: a built-in setup
// or a setup file, or else (sim:DRIVE) a single catalog drive.
var simResolver bench.SimResolver = resolveSetup

// resolveSetup builds a built-in setup or a setup file; a name that is
// neither but names a catalog drive gives that drive alone.
func resolveSetup(name string, seed uint64) (bench.SimSetup, error) {
	s, err := nasemu.LoadSetup(name)
	if errors.Is(err, setup.ErrNotFound) {
		if _, derr := catalog.LookupDrive(name); derr == nil {
			return resolveCatalogDrive(name, seed)
		}
	}
	if err != nil {
		return bench.SimSetup{}, err
	}
	dev, err := s.Build(seed)
	if err != nil {
		return bench.SimSetup{}, err
	}
	return bench.SimSetup{Device: dev, Name: "sim:" + s.Name, Description: s.Description}, nil
}

func resolveCatalogDrive(name string, seed uint64) (bench.SimSetup, error) {
	d, err := catalog.LookupDrive(name)
	if err != nil {
		return bench.SimSetup{}, err
	}
	dev, err := d.New(0, seed)
	if err != nil {
		return bench.SimSetup{}, err
	}
	return bench.SimSetup{Device: dev, Description: d.Product}, nil
}

// targets returns the registry of target schemes.
func targets() *bench.Registry {
	return bench.NewRegistry(bench.PathFactory(), bench.SimFactory(simResolver), smb.Factory(), iscsi.BenchFactory())
}

func runBench(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", "--target TARGET (--suite NAME | --job FILE.fio | --job - | --name=JOB --OPTION=VALUE...) [--format table|json|csv | --output-format json|json+|normal|terse] [--out DIR] [--seed N]", stderr)
	target := fs.String("target", "", "where the I/O goes: sim:SETUP, a path (directory, file or block device), smb://USER@HOST:PORT/SHARE[/DIR] or iscsi://HOST:PORT/IQN/LUN")
	suite := fs.String("suite", "", "a suite: "+joinNames(bench.SuiteNames())+" (see --list-suites)")
	jobFile := fs.String("job", "", "a fio job file (- reads it from standard input)")
	outputFormat := fs.String("output-format", "", "write fio's output instead: "+strings.Join(bench.FioFormats, ", ")+" (fio's names and schema)")
	format := fs.String("format", "table", "output format: "+strings.Join(bench.Formats, ", "))
	out := fs.String("out", "", "also write results.json, each job's per-second time series (CSV), the charts (SVG, PNG) and index.html into this directory")
	seed := fs.Uint64("seed", 1, "seed of offsets and models: the same seed gives the same sim results")
	runtime := fs.Duration("runtime", 0, "override every job's runtime, e.g. 10s to shorten a suite")
	size := fs.String("size", "", "override every job's size (files scale with it; never below the job's largest block, or with zonemode=zbd whole zones), e.g. 256MiB")
	direct := fs.String("direct", "", "override direct I/O of every job: 1 (O_DIRECT) or 0 (buffered)")
	list := fs.Bool("list-suites", false, "list the suites and what each reproduces, then exit")
	quiet := fs.Bool("quiet", false, "no progress on stderr (it only shows when stderr is a terminal)")
	keep := fs.Bool("keep", false, "keep the files a failed or interrupted run created on a path target (default: remove them)")
	// fio's command-line jobs: every --option that is not one of ours;
	// with them, --runtime, --size and --direct are fio's options too.
	fioStyle := slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--name=") })
	var fioArgs, own []string
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		fioOwn := fioStyle && (name == "runtime" || name == "size" || name == "direct")
		if strings.HasPrefix(a, "--") && len(name) > 0 && (fs.Lookup(name) == nil || fioOwn) && name != "help" {
			fioArgs = append(fioArgs, a)
			continue
		}
		own = append(own, a)
	}
	if err := parseFlags(fs, own); err != nil {
		return err
	}
	if *list {
		for _, s := range bench.Suites() {
			fmt.Fprintf(stdout, "%-9s %s\n", s.Name, s.Doc)
		}
		return nil
	}
	switch {
	case fs.NArg() > 0:
		return usagef("unexpected arguments %q", fs.Args())
	case *target == "":
		return usagef("--target is required")
	case *suite != "" && *jobFile != "", (*suite == "" && *jobFile == "") == (len(fioArgs) == 0), len(fioArgs) > 0 && (*suite != "" || *jobFile != ""):
		return usagef("give exactly one of --suite, --job and fio's --name=JOB --OPTION=VALUE options")
	case *outputFormat != "" && !slices.Contains(bench.FioFormats, *outputFormat):
		return usagef("unknown --output-format %q (known: %s)", *outputFormat, strings.Join(bench.FioFormats, ", "))
	case !slices.Contains(bench.Formats, *format):
		return usagef("unknown format %q (known: %s)", *format, strings.Join(bench.Formats, ", "))
	}
	var ov bench.Overrides
	ov.Runtime = *runtime
	if *runtime < 0 {
		return usagef("--runtime must not be negative")
	}
	var err error
	if ov.Size, err = sizeFlag(*size); err != nil {
		return err
	}
	switch *direct {
	case "":
	case "0", "1":
		d := *direct == "1"
		ov.Direct = &d
	default:
		return usagef("--direct wants 0 or 1, not %q", *direct)
	}

	if *suite == bench.SSDProfileSuite && strings.HasPrefix(*target, "sim:") {
		// The sweep rebuilds the setup once per OP level; --size scales its drives.
		return runSSDProfile(*target, ov.Size, *seed, *format, *out, showProgress(stderr, *quiet), stdout, stderr)
	}
	var jobs []bench.Job
	switch {
	case *suite != "":
		jobs, err = bench.Suite(*suite)
	case *jobFile != "":
		jobs, err = bench.LoadFio(*jobFile)
	default:
		jobs, err = bench.ParseFioArgs(fioArgs)
	}
	if err != nil {
		return usageError{err}
	}
	jobs = ov.Apply(jobs)

	tg, err := targets().Open(*target, bench.OpenOptions{Seed: *seed})
	if err != nil {
		return benchError(err)
	}
	defer tg.Close()
	cleaner, _ := tg.(bench.Cleaner)
	if *keep {
		cleaner = nil
	}
	stopSignals := onInterrupt(cleaner, stderr)
	run := tg
	var pt *progressTarget
	if showProgress(stderr, *quiet) {
		pt = withProgress(tg, jobs, stderr)
		run = pt
	}
	started := time.Now()
	rep, err := bench.Run(run, jobs, bench.Options{Seed: *seed, Suite: *suite})
	stopSignals()
	if pt != nil {
		pt.finish()
	}
	noteEngines(tg, stderr)
	if err != nil {
		cleanUp(cleaner, stderr)
		if rep != nil && len(rep.Results) > 0 {
			// Keep what finished before the failure: print it, then fail.
			if werr := rep.WriteFormat(stdout, *format); werr != nil {
				return errors.Join(err, werr)
			}
			fmt.Fprintf(stderr, "nasemu bench: the results above are partial: %d of %d jobs finished\n", len(rep.Results), len(jobs))
		}
		return benchError(err)
	}
	if *out != "" {
		if err := rep.WriteDir(*out); err != nil {
			return err
		}
		if err := report.WriteRun(*out, rep, ""); err != nil { // charts and index.html
			return err
		}
	}
	logDir := *out // fio's logs (write_bw_log, ...): in --out, else here, as fio writes them
	if logDir == "" {
		logDir = "."
	}
	if err := rep.WriteLogs(logDir); err != nil {
		return err
	}
	if *outputFormat != "" {
		return rep.WriteFio(stdout, *outputFormat, started)
	}
	return rep.WriteFormat(stdout, *format)
}

// sizeFlag parses --size, the size of every job (bench and compare): ""
// leaves the jobs' own.
func sizeFlag(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	b, err := models.ParseBytes(s)
	if err != nil || b == 0 {
		return 0, usagef("--size: %v", errors.Join(err, errors.New("want a positive size")))
	}
	return int64(b), nil
}

// benchExitHelp documents the exit status, the same for every target.
const benchExitHelp = `
Exit status (the same for every target):
  0  the run is done
  1  the run failed: the target or its I/O failed (a refused or lost
     connection, an I/O error, no space left, an interruption); the results
     of the jobs that finished are printed, files the run created on a path
     target are removed (unless --keep)
  2  bad input: a bad flag, job file, setup or target address, a target the
     jobs cannot use (read-only, too small, not enough free space: nothing
     was written)
`

// benchError marks bad input (a bad job, target or setup) as a usage error
// (exit status 2). A target that cannot be reached or fails while
// connecting is a failure of the run (1) whatever the target's kind says.
func benchError(err error) error {
	if targetDown(err) {
		return err
	}
	if errors.Is(err, bench.ErrJob) || errors.Is(err, bench.ErrTarget) || errors.Is(err, models.ErrConfig) {
		return usageError{err}
	}
	return err
}

// targetDown reports a network failure: a refused, reset or timed-out
// connection, an unreachable host.
func targetDown(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) {
		return true
	}
	for _, e := range []error{syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ETIMEDOUT, syscall.EHOSTUNREACH,
		syscall.ENETUNREACH, syscall.EPIPE, context.DeadlineExceeded, os.ErrDeadlineExceeded} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// onInterrupt removes what the run created when SIGINT or SIGTERM
// arrives, then exits with status 1; the returned function stops
// watching.
func onInterrupt(c bench.Cleaner, stderr io.Writer) (stop func()) {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			fmt.Fprintf(stderr, "nasemu bench: %v: the run is stopped\n", sig)
			cleanUp(c, stderr)
			os.Exit(1)
		case <-done:
		}
	}()
	return func() {
		signal.Stop(sigs)
		close(done)
	}
}

// cleanUp removes the files a failed run created, saying so.
func cleanUp(c bench.Cleaner, stderr io.Writer) {
	if c == nil {
		return
	}
	var n int
	if p, ok := c.(*bench.Path); ok {
		n = len(p.Created())
	}
	if err := c.Cleanup(); err != nil {
		fmt.Fprintf(stderr, "nasemu bench: removing the files the run created: %v\n", err)
		return
	}
	if n > 0 {
		fmt.Fprintf(stderr, "nasemu bench: removed the %d file(s) the run created (--keep keeps them)\n", n)
	}
}

// noteEngines says which jobs ran otherwise than they asked: on another
// engine, or at a depth their engine does not keep.
func noteEngines(t bench.Target, stderr io.Writer) {
	wc, ok := t.Clock().(*bench.WallClock)
	if !ok {
		return
	}
	for _, u := range wc.Engines() {
		if u.Note != "" {
			fmt.Fprintf(stderr, "nasemu bench: job %q: %s\n", u.Job, u.Note)
		}
	}
}
