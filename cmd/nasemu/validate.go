package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/nasemu/nasemu"
	"github.com/nasemu/nasemu/bench"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/setup"
	"github.com/nasemu/nasemu/validate"
)

// defaultData names the built-in reference data (nasemu.Reference, the
// source tree's testdata/reference embedded in the binary) in messages.
const defaultData = "testdata/reference/" + nasemu.ReferenceCases

func runValidate(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("validate", "[--data FILE.csv] [--format table|json] [--leave-out REVIEW | --cross]", stderr)
	data := fs.String("data", "", "reference cases (CSV; default: the built-in "+defaultData+")")
	format := fs.String("format", "table", "output format: table, json")
	seed := fs.Uint64("seed", 1, "seed of the models and workloads")
	leaveOut := fs.String("leave-out", "", "predict only this review's rows (e.g. 003), with every calibration set from them switched to its class default")
	cross := fs.Bool("cross", false, "leave each review out in turn: fitted and leave-one-review-out error side by side")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usagef("unexpected arguments %q", fs.Args())
	case *cross && *leaveOut != "":
		return usagef("give at most one of --leave-out and --cross")
	case !slices.Contains([]string{"table", "json"}, *format):
		return usagef("unknown format %q (known: table, json)", *format)
	}
	path, f, files, err := openCases(*data)
	if err != nil {
		return usageError{err}
	}
	defer f.Close()
	cases, err := validate.Load(path, f)
	if err != nil {
		return usageError{err}
	}
	opt := validate.Options{Build: validate.SetupBuilder(nasemu.LoadSetup), Files: files, Seed: *seed}
	if *leaveOut != "" {
		off, err := validate.LeaveOut(cases, *leaveOut)
		if err != nil {
			return usageError{err}
		}
		cases = validate.Only(cases, *leaveOut)
		opt.Build = validate.SetupBuilder(nasemu.LoadSetup, off...)
		if *format == "table" {
			var names []string
			for _, c := range off {
				names = append(names, c.Name)
			}
			fmt.Fprintf(stdout, "review %s left out: calibrations from its rows at their class defaults: %v\n\n", *leaveOut, names)
		}
	}
	out := validate.Run(cases, opt)
	if *cross {
		folds, err := validate.Cross(cases, out, opt, func(off []validate.Calibration) validate.Builder {
			return validate.SetupBuilder(nasemu.LoadSetup, off...)
		})
		if err != nil {
			return usageError{err}
		}
		if *format == "json" {
			err = validate.WriteCrossJSON(stdout, folds)
		} else {
			err = validate.WriteCrossTable(stdout, folds)
		}
		if err != nil {
			return err
		}
		for _, f := range folds {
			if err := outcomeError(path, f.LeftOut); err != nil {
				return fmt.Errorf("review %s left out: %w", f.Review, err)
			}
		}
		return outcomeError(path, out)
	}
	if *format == "json" {
		err = validate.WriteJSON(stdout, out)
	} else {
		err = validate.WriteTable(stdout, out)
	}
	if err != nil {
		return err
	}
	return outcomeError(path, out)
}

// outcomeError returns the first case that failed as an error: bad input
// (a usage error) when the case's data or setup was wrong.
func outcomeError(path string, out []validate.Outcome) error {
	for _, o := range out {
		if o.Err != nil {
			if errors.Is(o.Err, models.ErrConfig) || errors.Is(o.Err, setup.ErrNotFound) || errors.Is(o.Err, bench.ErrJob) || errors.Is(o.Err, validate.ErrData) {
				return usageError{fmt.Errorf("%s:%d: %s: %w", path, o.Line, o.ID, o.Err)}
			}
			return fmt.Errorf("%s: %w", o.ID, o.Err)
		}
	}
	return nil
}

// openCases opens the reference cases at path, or the built-in ones when
// path is empty, with the directory their job files are named in.
func openCases(path string) (name string, f io.ReadCloser, files fs.FS, err error) {
	if path == "" {
		f, err = nasemu.Reference.Open(nasemu.ReferenceCases)
		return defaultData, f, nasemu.Reference, err
	}
	f, err = os.Open(path)
	return path, f, os.DirFS(filepath.Dir(path)), err
}
