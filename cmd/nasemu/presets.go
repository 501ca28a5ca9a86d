package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/nasemu/nasemu/models/catalog"
)

// presetLists maps the argument of 'nasemu presets' to the function that
// prints that part of the catalog.
var presetLists = map[string]func(io.Writer) error{
	"drives": printDrives,
}

var presetOrder = []string{"drives"}

func runPresets(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("presets", "[drives|systems|links|setups]", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	which := presetOrder
	switch fs.NArg() {
	case 0:
	case 1:
		if _, ok := presetLists[fs.Arg(0)]; !ok {
			return usagef("unknown preset list %q (known: %s)", fs.Arg(0), joinNames(presetOrder))
		}
		which = []string{fs.Arg(0)}
	default:
		return usagef("want at most one list name, got %d", fs.NArg())
	}
	for i, name := range which {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		if err := presetLists[name](stdout); err != nil {
			return err
		}
	}
	return nil
}

func printDrives(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DRIVE\tKIND\tPRODUCT\tKEY FIGURES")
	for _, d := range catalog.Drives() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", d.Name, d.Kind(), d.Product, d.Summary())
	}
	return tw.Flush()
}
