package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/nasemu/nasemu"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/catalog"
	"github.com/nasemu/nasemu/models/link"
	"github.com/nasemu/nasemu/models/setup"
)

// presetLists maps the argument of 'nasemu presets' to the function that
// prints that part of the catalog.
var presetLists = map[string]func(io.Writer) error{
	"drives":  printDrives,
	"systems": printSystems,
	"links":   printLinks,
	"setups":  printSetups,
}

var presetOrder = []string{"drives", "systems", "links", "setups"}

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

func printLinks(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "LINK\tDESCRIPTION\tKEY FIGURES")
	for _, k := range link.Kinds() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", k.Name, k.Description, k.Summary())
	}
	return tw.Flush()
}

func printSetups(w io.Writer) error {
	all, err := setup.List(nasemu.Setups)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SETUP\tUSABLE\tTOLERATES\tDESCRIPTION")
	for _, s := range all {
		usable := "?"
		if c, err := s.UsableCapacity(); err == nil {
			usable = models.Bytes(c).Human()
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", s.Name, usable, s.Tolerates(), s.Description)
	}
	return tw.Flush()
}

// printSystems lists the catalog systems (NAS and servers).
func printSystems(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SYSTEM\tPRODUCT\tKEY FIGURES")
	for _, s := range catalog.Systems() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", s.Name, s.Product, s.Summary())
	}
	return tw.Flush()
}
