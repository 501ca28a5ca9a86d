// Command nasemu simulates and emulates NAS storage and benchmarks it.
//
// Each subcommand lives in a file of its own and only wires flags to the
// packages that do the work. Exit status: 0 on success, 2 on bad usage or
// bad input, 1 on a failure while running.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strings"

	"github.com/spf13/pflag"
)

// version, when set at build time with -ldflags "-X main.version=...",
// overrides the module version the build records.
var version = ""

// versionString describes the build for --version: the module version (a
// release when built with 'go install ...@vX', "(devel)" otherwise), the
// commit it was built from, when, and whether the tree had uncommitted
// changes (the VCS stamp 'go build' records from a git checkout), and the
// Go version.
func versionString(info *debug.BuildInfo, ok bool) string {
	if !ok {
		if version != "" {
			return "nasemu " + version
		}
		return "nasemu (no build information)"
	}
	v := info.Main.Version
	if version != "" {
		v = version
	}
	if v == "" {
		v = "(devel)"
	}
	vcs := map[string]string{}
	for _, s := range info.Settings {
		vcs[s.Key] = s.Value
	}
	out := "nasemu " + v
	if rev := vcs["vcs.revision"]; rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		out += ", commit " + rev
		if t := vcs["vcs.time"]; t != "" {
			out += " of " + t
		}
		if vcs["vcs.modified"] == "true" {
			out += " with uncommitted changes"
		}
	} else {
		out += ", no commit recorded (built outside a git checkout or with -buildvcs=false)"
	}
	return out + ", " + info.GoVersion
}

// command is one subcommand.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) error
}

// commands maps a subcommand's name to its implementation.
var commands map[string]command

func init() {
	// Assigned here, not in the declaration: runHelp refers to commands.
	commands = map[string]command{
		"bench":    {"run a suite or fio job file against sim:SETUP or a path", runBench},
		"compare":  {"run a suite or job file on several targets and compare them side by side", runCompare},
		"sweep":    {"simulate every combination of setup keys (drives, count, RAID, link, ...) with a suite; shard it over a cluster", runSweep},
		"presets":  {"list the catalog: drives, systems, links, setups", runPresets},
		"mount":    {"mount an emulated NAS share (FUSE) over a backing directory", runMount},
		"umount":   {"unmount a share: its emulator saves its state and exits (or clear one a killed emulator left)", runUmount},
		"nas":      {"serve an emulated NAS share over SMB (FUSE volume + managed smbd on loopback)", runNas},
		"ctl":      {"control a running emulator: status, fail/replace a drive, power loss", runCtl},
		"iscsi":    {"serve an emulated LUN over iSCSI", runISCSI},
		"validate": {"predict the reference measurements and compare (median error, share within 25 %)", runValidate},
		"doctor":   {"check this host for what mount, nas and iscsi need (FUSE, sysctl, Samba, ports) and say how to fix it", runDoctor},
		"help":     {"print the commands, or a command's flags and examples (nasemu help COMMAND)", runHelp},
	}
}

// usageError marks bad usage or bad input: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		usage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	if args[0] == "--version" || args[0] == "version" {
		fmt.Fprintln(stdout, versionString(debug.ReadBuildInfo()))
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "nasemu: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	if path := os.Getenv(cpuProfileEnv); path != "" {
		stop, err := startCPUProfile(path)
		if err != nil {
			fmt.Fprintf(stderr, "nasemu: %s: %v\n", cpuProfileEnv, err)
			return 2
		}
		defer stop()
	}
	err := cmd.run(args[1:], stdout, stderr)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, pflag.ErrHelp):
		return 0
	}
	fmt.Fprintf(stderr, "nasemu %s: %v\n", args[0], err)
	var ue usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

// cpuProfileEnv names a file to write a CPU profile of the command to (Go's
// pprof format): for looking into where a run spends its time, and the
// source of the build's profile-guided optimization (scripts/pgo-profile.sh).
const cpuProfileEnv = "NASEMU_CPUPROFILE"

// startCPUProfile profiles the process into a new file at path and returns
// the function that ends the profile and closes the file.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "nasemu simulates, emulates and benchmarks NAS storage.\n\nUsage: nasemu COMMAND [flags]\n\nCommands:")
	for _, n := range commandNames() {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'nasemu help COMMAND' (or 'nasemu COMMAND --help') for a command's flags and examples;\n'nasemu --version' prints the version.")
}

// commandNames lists the commands in alphabetical order.
func commandNames() []string {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// moreHelp is what a command's --help says after its flags and before its
// examples.
var moreHelp = map[string]string{"bench": benchExitHelp, "ctl": ctlHelp}

// newFlags returns a flag set that reports errors instead of exiting, with
// a usage line naming the subcommand.
func newFlags(name, synopsis string, stderr io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: nasemu %s %s\n\nFlags:\n", name, synopsis)
		fs.PrintDefaults()
		fmt.Fprint(stderr, moreHelp[name])
		printExamples(stderr, name)
	}
	return fs
}

// parseFlags parses args and turns a flag error into a usage error.
func parseFlags(fs *pflag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return usageError{err}
	}
	return nil
}

// Bounds of --time-scale (wall seconds per model second). Below
// minTimeScale the model's shortest waits (an SSD read's tens of µs) shrink
// under the host's own round trip through FUSE or TCP, so nothing is paced;
// above maxTimeScale an HDD's 10 ms seek takes 10 s of wall time, past the
// timeouts of SMB and iSCSI clients.
const (
	minTimeScale = 0.01
	maxTimeScale = 1000.0
)

// checkTimeScale refuses a --time-scale that is not a finite number in
// [minTimeScale, maxTimeScale]: NaN and ±Inf would turn pacing off
// without a word, 0 and negative scales are meaningless.
func checkTimeScale(f float64) error {
	if !(f >= minTimeScale && f <= maxTimeScale) { // false for NaN too
		return usagef("--time-scale %v: must be positive and finite, from %g to %g (wall seconds per model second)", f, minTimeScale, maxTimeScale)
	}
	return nil
}

// joinNames formats a list of names for messages.
func joinNames(names []string) string { return strings.Join(names, ", ") }
