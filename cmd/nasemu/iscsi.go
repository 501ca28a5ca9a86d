package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"

	"github.com/nasemu/nasemu"
	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/iscsi"
	"github.com/nasemu/nasemu/iscsi/scsi"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fixed"
	"github.com/nasemu/nasemu/models/setup"
	"github.com/nasemu/nasemu/serve"
)

func runISCSI(args []string, stdout, stderr io.Writer) error {
	return untilSignal(func(ctx context.Context) error { return serveISCSI(ctx, args, stderr, nil) })
}

// freeSetup is the --setup value of a zero-cost LUN: the emulator's own
// overhead, for comparisons with other targets.
const freeSetup = "free"

// serveISCSI serves an emulated LUN until ctx is done. ready, when not
// nil, receives the listening address (for tests).
func serveISCSI(ctx context.Context, args []string, stderr io.Writer, ready chan<- string) error {
	fs := newFlags("iscsi", "--setup SETUP --backing FILE [--listen 127.0.0.1:3260] [--iqn IQN] [--chap-user U --chap-secret-file F] [--socket PATH] [--state-dir DIR]", stderr)
	setupName := fs.String("setup", "", "the modelled NAS: a built-in setup's name, a YAML file, or \"free\" (no cost; needs --size)")
	backing := fs.String("backing", "", "file that holds the LUN's bytes (created sparse; kept across runs)")
	listen := fs.String("listen", "127.0.0.1:3260", "address to listen on (only this one)")
	iqn := fs.String("iqn", iscsi.DefaultIQN, "target name")
	chapUser := fs.String("chap-user", "", "require CHAP with this user name")
	chapFile := fs.String("chap-secret-file", "", "file holding the CHAP secret (12 to 255 bytes; a trailing newline is dropped)")
	size := fs.String("size", "", "LUN size: the first SIZE bytes of the setup's volume (required for --setup free)")
	blockSize := fs.Int("block-size", 512, "logical block size in bytes")
	scale := fs.Float64("time-scale", 1, "run the model F times slower than real time")
	seed := fs.Uint64("seed", 1, "seed of the model's random choices")
	verbose := fs.Bool("verbose", false, "log logins and logouts too")
	socket := fs.String("socket", "", "control socket path for 'nasemu ctl' (default: ctl.sock in the run's state directory)")
	stateDirFlag := fs.String("state-dir", "", "directory that keeps the array's failed and rebuilding drives across restarts (in "+emu.ArrayStateFile+"; default: not kept)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usagef("unexpected arguments %q", fs.Args())
	case *setupName == "":
		return usagef("--setup is required")
	case *backing == "":
		return usagef("--backing is required")
	case checkTimeScale(*scale) != nil:
		return checkTimeScale(*scale)
	}
	var limit int64
	if *size != "" {
		b, err := models.ParseBytes(*size)
		if err != nil || b == 0 {
			return usagef("--size: %v", errors.Join(err, errors.New("want a positive size")))
		}
		limit = int64(b)
	}
	var model models.Device
	var s *setup.Setup
	desc := *setupName
	if *setupName == freeSetup {
		if limit == 0 {
			return usagef("--setup free needs --size")
		}
		d, err := fixed.New(fixed.Config{Capacity: limit, Units: 1 << 10})
		if err != nil {
			return usageError{err}
		}
		model = d
	} else {
		var err error
		if s, err = nasemu.LoadSetup(*setupName); err != nil {
			return usageError{err}
		}
		if model, err = s.Build(*seed); err != nil {
			return usageError{err}
		}
		desc = s.Name
	}
	if limit > 0 && limit < model.Capacity() {
		model = iscsi.Truncate(model, limit)
	}
	chap, err := readCHAP(*chapUser, *chapFile)
	if err != nil {
		return err
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	file, err := emu.OpenFileStore(*backing, model.Capacity())
	if err != nil {
		return usagef("--backing: %v", err)
	}
	// Paced waits end when the server stops or loses power, so that a
	// signal is honoured at once even while a long-paced command is in
	// flight.
	clock := iscsi.NewStopClock(emu.NewWallClock(*scale, -1))
	vol, err := emu.NewVolume(model, serve.NewLUNStore(file, serve.WritesThrough(s), clock), emu.Options{Clock: clock, Logger: log})
	if err != nil {
		file.Close()
		return err
	}
	defer func() {
		vol.LogLate() // how far the host fell behind the model, if it did
		vol.Close()
	}()
	var replacement func(int) (models.Device, error)
	if s != nil {
		replacement = serve.ReplacementDrives(s, *seed)
	}
	if *stateDirFlag != "" {
		if err := checkStateDir(*stateDirFlag); err != nil {
			return err
		}
		// The array comes back as it went down: degraded, rebuilding.
		if err := vol.LoadArrays(*stateDirFlag, replacement); err != nil {
			return usagef("--state-dir: %v", err)
		}
	}
	lu, err := scsi.New(vol, scsi.Config{BlockSize: *blockSize, ID: iscsi.LUNID(*iqn, 0), Logger: log})
	if err != nil {
		return usageError{err}
	}
	stateDir, ctlListener, err := controlSocket("iscsi-", socket)
	if err != nil {
		return err
	}
	defer stateDir.RemoveAll()
	defer ctlListener.Close()
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		return usagef("--listen %s: %v", *listen, err)
	}
	srv, err := serve.NewLUN(iscsi.TargetConfig{IQN: *iqn, Alias: desc, LU: lu, CHAP: chap, Logger: log}, l, clock, vol)
	if err != nil {
		l.Close()
		return usageError{err}
	}
	ctl := &serve.Control{LUN: srv, LUNBacking: *backing, LUNSize: model.Capacity(), Volume: vol, LUNVolume: vol, Logger: log,
		Replacement: replacement, StateDir: *stateDirFlag}
	go ctl.Serve(ctlListener)
	fmt.Fprintf(stderr, "nasemu iscsi: %s (%s, %d-byte blocks) at %s as %s\n",
		desc, models.Bytes(model.Capacity()).Human(), *blockSize, srv.Addr(), *iqn)
	fmt.Fprintf(stderr, "nasemu iscsi: control socket %s (nasemu ctl --socket %s status)\n", *socket, *socket)
	if ready != nil {
		ready <- srv.Addr()
	}
	select {
	case <-ctx.Done():
		fmt.Fprintln(stderr, "nasemu iscsi: stopping")
	case err := <-srv.Failed():
		srv.Stop()
		return err
	}
	if err := srv.Stop(); err != nil {
		return err
	}
	if *stateDirFlag != "" {
		// A rebuild that finished while serving is saved as done.
		if err := vol.SaveArrays(*stateDirFlag); err != nil {
			return errors.Join(err, vol.Sync())
		}
	}
	return vol.Sync()
}

// checkStateDir refuses a --state-dir that is not a directory (a symlink
// included: the emulator writes there as root).
func checkStateDir(dir string) error {
	st, err := os.Lstat(dir)
	if err != nil {
		return usagef("--state-dir: %v", err)
	}
	if !st.IsDir() {
		return usagef("--state-dir %s: not a directory (%v)", dir, st.Mode().Type())
	}
	return nil
}

// readCHAP returns the CHAP credentials of --chap-user and
// --chap-secret-file (nil when neither is given).
func readCHAP(user, file string) (*iscsi.CHAP, error) {
	if (user == "") != (file == "") {
		return nil, usagef("--chap-user and --chap-secret-file go together")
	}
	if user == "" {
		return nil, nil
	}
	secret, err := os.ReadFile(file)
	if err != nil {
		return nil, usagef("--chap-secret-file: %v", err)
	}
	return &iscsi.CHAP{User: user, Secret: strings.TrimRight(string(secret), "\r\n")}, nil
}
