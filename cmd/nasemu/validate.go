package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/nasemu/nasemu"
	"github.com/nasemu/nasemu/bench"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/setup"
	"github.com/nasemu/nasemu/validate"
)

// defaultData is the reference data's place in the source tree; validate
// looks for it in the working directory and its parents.
const defaultData = "testdata/reference/cases.csv"

func runValidate(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("validate", "[--data FILE.csv] [--format table|json]", stderr)
	data := fs.String("data", "", "reference cases (CSV; default "+defaultData+" of the source tree)")
	format := fs.String("format", "table", "output format: table, json")
	seed := fs.Uint64("seed", 1, "seed of the models and workloads")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usagef("unexpected arguments %q", fs.Args())
	case !slices.Contains([]string{"table", "json"}, *format):
		return usagef("unknown format %q (known: table, json)", *format)
	}
	path := *data
	if path == "" {
		var err error
		if path, err = findData(); err != nil {
			return usageError{err}
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return usageError{err}
	}
	defer f.Close()
	cases, err := validate.Load(path, f)
	if err != nil {
		return usageError{err}
	}
	out := validate.Run(cases, validate.Options{Build: validate.SetupBuilder(nasemu.LoadSetup), Files: os.DirFS(filepath.Dir(path)), Seed: *seed})
	if *format == "json" {
		err = validate.WriteJSON(stdout, out)
	} else {
		err = validate.WriteTable(stdout, out)
	}
	if err != nil {
		return err
	}
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

// findData looks for the reference data in the working directory and its
// parents (the source tree's root holds it).
func findData() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, defaultData)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", fmt.Errorf("no %s in the working directory or its parents: give --data", defaultData)
		}
		dir = up
	}
}
