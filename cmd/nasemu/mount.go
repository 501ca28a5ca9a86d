package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/nasemu/nasemu"
	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/fusefs"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/setup"
	"github.com/nasemu/nasemu/rundir"
	"github.com/nasemu/nasemu/serve"
)

func runMount(args []string, stdout, stderr io.Writer) error {
	return untilSignal(func(ctx context.Context) error { return mount(ctx, args, stderr) })
}

// mount serves a share until ctx is done (a signal) or it is unmounted
// from outside.
func mount(ctx context.Context, args []string, stderr io.Writer) error {
	fs := newFlags("mount", "--setup SETUP --backing DIR MOUNTPOINT [--metrics HOST:PORT] [--time-scale F] [--socket PATH] [--ready-file PATH] [--nonempty]", stderr)
	setupName := fs.String("setup", "", "the modelled NAS: a built-in setup's name or a YAML file")
	backing := fs.String("backing", "", "directory that holds the share's files (kept across mounts)")
	metricsAddr := fs.String("metrics", "", "serve Prometheus metrics at HOST:PORT, a loopback address (e.g. 127.0.0.1:9108)")
	metricsPublic := fs.Bool("metrics-public", false, "allow --metrics on an address other hosts reach (served without authentication)")
	scale := fs.Float64("time-scale", 1, "run the model F times slower than real time (for setups faster than this host)")
	socket := fs.String("socket", "", "control socket path (default: ctl.sock in the run's state directory)")
	seed := fs.Uint64("seed", 1, "seed of the model's random choices")
	verbose := fs.Bool("verbose", false, "log every event of the emulator")
	debug := fs.Bool("debug", false, "log every FUSE request")
	nonempty := fs.Bool("nonempty", false, "mount over a directory that has files in it (hidden while mounted)")
	readyFile := fs.String("ready-file", "", "once the share is up, write PATH (KEY=VALUE lines: pid, mountpoint, socket, metrics); removed at exit")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() != 1:
		return usagef("want one MOUNTPOINT, got %d arguments", fs.NArg())
	case *setupName == "":
		return usagef("--setup is required")
	case *backing == "":
		return usagef("--backing is required")
	case checkTimeScale(*scale) != nil:
		return checkTimeScale(*scale)
	case *metricsAddr != "" && !*metricsPublic && !loopback(*metricsAddr):
		return usagef("--metrics %s: not a loopback address; the metrics are served without authentication, so give --metrics-public to serve them to other hosts", *metricsAddr)
	}
	mountpoint := fs.Arg(0)
	sweepStateDirs("mount", stderr)
	if err := clearStale(mountpoint, "mount", stderr); err != nil {
		return err
	}
	if _, err := fusefs.CheckMount(mountpoint, *backing); err != nil {
		if errors.Is(err, fusefs.ErrMountpoint) || errors.Is(err, fusefs.ErrBackingPlacement) {
			return usageError{err}
		}
		return err
	}
	if err := checkDir("--backing", *backing); err != nil {
		return err
	}

	s, err := nasemu.LoadSetup(*setupName)
	if err != nil {
		return usageError{err}
	}
	model, err := s.Build(*seed)
	if err != nil {
		return usageError{err}
	}
	if !*nonempty {
		if err := checkEmpty(mountpoint); err != nil {
			return err
		}
	}

	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	metrics := fusefs.NewMetrics()
	f, err := fusefs.New(model, emu.NewWallClock(*scale, -1), *backing, fusefs.Options{
		Logger:          log,
		Metrics:         metrics,
		Replacement:     serve.ReplacementDrives(s, *seed),
		Debug:           *debug,
		JournalInterval: journalInterval(s),
	})
	if err != nil {
		return err
	}
	defer f.Unmount() // an early return frees the backing directory (Unmount runs once)

	stateDir, ctl, err := controlSocket("mount-", socket)
	if err != nil {
		return err
	}
	defer stateDir.RemoveAll()
	defer ctl.Close()
	go (&serve.Control{FS: f, Volume: f.Volume(), Logger: log}).Serve(ctl)

	if *metricsAddr != "" {
		addr, stop, err := serveMetrics(*metricsAddr, metrics, healthHandler(f, nil))
		if err != nil {
			return err
		}
		defer stop()
		*metricsAddr = addr
		fmt.Fprintf(stderr, "nasemu mount: metrics at http://%s/metrics (health at /healthz)\n", addr)
	}

	if err := f.Mount(mountpoint); err != nil {
		return err
	}
	capacity, free := f.Usage()
	fmt.Fprintf(stderr, "nasemu mount: %s mounted at %s (%s usable, %s free), files in %s\n",
		s.Name, mountpoint, models.Bytes(capacity).Human(), models.Bytes(free).Human(), f.Backing())
	fmt.Fprintf(stderr, "nasemu mount: control socket %s (nasemu ctl --socket %s status)\n", *socket, *socket)
	if *readyFile != "" {
		if err := writeReadyFile(*readyFile, [][2]string{{"pid", strconv.Itoa(os.Getpid())}, {"mountpoint", f.Status().Mountpoint}, {"socket", *socket}, {"metrics", *metricsAddr}}); err != nil {
			return errors.Join(err, f.Unmount())
		}
		defer os.Remove(*readyFile)
	}

	unmounted := make(chan struct{})
	go func() { f.Wait(); close(unmounted) }()
	select {
	case <-ctx.Done():
		fmt.Fprintln(stderr, "nasemu mount: unmounting")
	case <-unmounted:
		fmt.Fprintln(stderr, "nasemu mount: unmounted from outside")
	}
	return f.Unmount()
}

// loopback reports whether HOST:PORT names a loopback address only
// (127.0.0.0/8, ::1 or localhost); an empty host means every interface.
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// stateBase is the directory that holds the state directories of running
// emulators (rundir.Base: never a directory another user could have made).
func stateBase() string { return rundir.Base() }

// controlSocket creates the run's state directory (prefix, mode 0700) and
// listens on the control socket *socket, by default ctl.sock in that
// directory (then set in *socket).
func controlSocket(prefix string, socket *string) (*rundir.Dir, net.Listener, error) {
	stateDir, err := runStateDir(prefix, 0o700)
	if err != nil {
		return nil, nil, err
	}
	if *socket == "" {
		*socket = stateDir.Join("ctl.sock")
	}
	l, err := fusefs.ListenControl(*socket)
	if err != nil {
		stateDir.RemoveAll()
		if errors.Is(err, fusefs.ErrSocketPath) {
			return nil, nil, usageError{fmt.Errorf("--socket: %w", err)}
		}
		return nil, nil, err
	}
	return stateDir, l, nil
}

// runStateDir creates this run's state directory afresh in the state base:
// prefix, the process id and random characters, with mode perm.
func runStateDir(prefix string, perm os.FileMode) (*rundir.Dir, error) {
	base, err := rundir.OpenBase(stateBase())
	if err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	defer base.Close()
	if perm&0o001 != 0 {
		// Others must pass through the base to reach this directory (a
		// nas's share user, to its mount point).
		if err := base.Chmod(0o711); err != nil {
			return nil, fmt.Errorf("state directory: %w", err)
		}
	}
	d, err := base.MkdirTemp(prefix+strconv.Itoa(os.Getpid())+"-", perm)
	if err != nil {
		return nil, fmt.Errorf("state directory: %w", err)
	}
	return d, nil
}

// journalInterval is how often the mount commits its namespace changes
// (fusefs.Options.JournalInterval): the setup's NAS filesystem's commit
// interval, so that a power loss loses what that NAS would lose; 0 (the
// fusefs default, ext4's 5 s) when the setup has no NAS.
func journalInterval(s *setup.Setup) time.Duration {
	if s.NAS == nil {
		return 0
	}
	return s.NAS.Config.WithDefaults().JournalInterval
}
