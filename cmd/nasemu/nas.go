package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/nasemu/nasemu"
	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/fusefs"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/smb"
)

// nasInfo is what a running 'nasemu nas' serves, for tests.
type nasInfo struct {
	Mountpoint string // the FUSE mount smbd shares
	RunDir     string // mount point, Samba state, control socket
	SMB        *smb.Samba
	FS         *fusefs.FS
	URL        string // bench target address of the share, no password
}

func runNas(args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return nas(ctx, args, stderr, nil)
}

// nas serves the emulated volume of a setup over SMB until ctx is done
// (SIGINT, SIGTERM), the share is unmounted from outside or smbd dies.
// ready, when set, is called once everything serves.
//
// Where the costs are charged: the FUSE mount charges the setup's whole
// model, its link and protocol layers included; smbd and loopback are not
// charged for anything. Loopback is not the modelled network: it has
// neither the link's bandwidth (1 GbE caps a copy at about 118 MB/s,
// loopback does not) nor its latency, and the host's SMB stack is not the
// NAS's. A mount that dropped the link and protocol layers (protocol
// local) would let this host's loopback and CPU stand in for the NAS's
// network and protocol processing, and the results would depend on the
// host. So every modelled cost is charged exactly once, by the mount.
//
// What the real path costs in this process on top (the client, smbd,
// FUSE, scheduling) is this host's overhead and adds to the model's time
// where it cannot overlap with it (small requests at low queue depth);
// fusefs subtracts FUSE's own round trip, the rest is not compensated.
// smbd also makes more than one file system call for some client requests,
// and fusefs charges each lookup, getattr and setattr as a stat of the
// protocol: a file a client creates, writes and closes costs smbd two
// lookups, a getattr, two setattrs, the create and the release (measured),
// seven charged operations where the model of an SMB client charges two.
// That is a known over-charge of small-file work (see the fidelity test);
// the generated smb.conf keeps smbd from making calls a client did not ask
// for (see smb.SambaConf), and case sensitivity keeps it from listing the
// directory on every create.
//
// The client's own costs are not the NAS's: the model's client-side time
// per file operation (proto.Config.ClientOp, Explorer's copy engine) is
// turned off, since the real client spends its own.
func nas(ctx context.Context, args []string, stderr io.Writer, ready func(nasInfo)) error {
	fs := newFlags("nas", "--setup SETUP --backing DIR --smb HOST:PORT [--user U --password-file F] [--share NAME]", stderr)
	setupName := fs.String("setup", "", "the modelled NAS: a built-in setup's name or a YAML file")
	backing := fs.String("backing", "", "directory that holds the share's files (kept across runs)")
	smbAddr := fs.String("smb", "", "serve the share over SMB at HOST:PORT, a loopback address (e.g. 127.0.0.1:4450)")
	iscsiAddr := fs.String("iscsi", "", "serve the emulated LUN over iSCSI at HOST:PORT (not yet available)")
	userName := fs.String("user", "", "the account allowed on the share: an existing Unix user (default: the current user)")
	passwordFile := fs.String("password-file", "", "file whose first line is the account's password (default: $"+smb.PasswordEnv+")")
	share := fs.String("share", "nas", "the share's name")
	scale := fs.Float64("time-scale", 1, "run the model F times slower than real time (for setups faster than this host)")
	seed := fs.Uint64("seed", 1, "seed of the model's random choices")
	verbose := fs.Bool("verbose", false, "log every event of the emulator")
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
	case *iscsiAddr != "":
		return usagef("--iscsi is not available in nasemu nas yet; use nasemu iscsi")
	case *smbAddr == "":
		return usagef("--smb HOST:PORT is required")
	case *scale <= 0:
		return usagef("--time-scale must be positive, got %v", *scale)
	case strings.ContainsAny(*share, "/\\[]\n"):
		return usagef("--share %q: not a share name", *share)
	}
	if st, err := os.Stat(*backing); err != nil || !st.IsDir() {
		return usagef("--backing %s: not a directory", *backing)
	}
	if *userName == "" {
		u, err := user.Current()
		if err != nil {
			return usagef("--user is required: %v", err)
		}
		*userName = u.Username
	}
	if _, err := user.Lookup(*userName); err != nil {
		return usagef("--user %s: not a Unix user of this machine (smbd serves files as that user)", *userName)
	}
	password, err := nasPassword(*passwordFile)
	if err != nil {
		return err
	}
	probe := smb.SambaConfig{Dir: "-", Path: "-", Addr: *smbAddr, Password: password}
	if err := probe.Validate(); err != nil {
		return usagef("--smb: %v", err)
	}

	s, err := nasemu.LoadSetup(*setupName)
	if err != nil {
		return usageError{err}
	}
	// The client is real and pays its own per-file work: the model's
	// client-side cost of a file operation (Explorer's copy engine and
	// redirector, proto.Config.ClientOp) is not charged again.
	s.Protocol.ClientOp = -1
	model, err := s.Build(*seed)
	if err != nil {
		return usageError{err}
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	f, err := fusefs.New(model, emu.NewWallClock(*scale, -1), *backing, fusefs.Options{Logger: log, Replacement: replacementDrives(s, *seed)})
	if err != nil {
		return err
	}

	runDir := filepath.Join(stateBase(), "nas-"+strconv.Itoa(os.Getpid()))
	mnt := filepath.Join(runDir, "share")
	if err := os.MkdirAll(mnt, 0o755); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	// The run directory is private but smbd's user must reach the mount.
	os.Chmod(runDir, 0o711)
	defer os.RemoveAll(runDir)
	ctl, err := net.Listen("unix", filepath.Join(runDir, "ctl.sock"))
	if err != nil {
		return fmt.Errorf("control socket: %w", err)
	}
	defer ctl.Close()
	go f.ServeControl(ctl)

	if err := f.Mount(mnt); err != nil {
		return err
	}
	unmounted := make(chan struct{})
	go func() { f.Wait(); close(unmounted) }()
	srv, err := smb.StartSamba(smb.SambaConfig{Dir: filepath.Join(runDir, "samba"), Addr: *smbAddr, Share: *share, Path: mnt, User: *userName, Password: password})
	if err != nil {
		err = nasError(err)
		return errors.Join(err, f.Unmount())
	}
	stopAll := func() error {
		return errors.Join(srv.Stop(), f.Unmount())
	}
	capacity, free := f.Usage()
	fmt.Fprintf(stderr, "nasemu nas: %s (%s usable, %s free), files in %s\n", s.Name, models.Bytes(capacity), models.Bytes(free), f.Backing())
	fmt.Fprintf(stderr, "nasemu nas: SMB share //%s/%s for user %s (target %s)\n", srv.Addr(), srv.Share(), *userName, srv.URL(""))
	fmt.Fprintf(stderr, "nasemu nas: control socket %s\n", filepath.Join(runDir, "ctl.sock"))
	if ready != nil {
		ready(nasInfo{Mountpoint: mnt, RunDir: runDir, SMB: srv, FS: f, URL: srv.URL("")})
	}
	select {
	case <-ctx.Done():
		fmt.Fprintln(stderr, "nasemu nas: stopping")
		return stopAll()
	case <-unmounted:
		return errors.Join(errors.New("the share was unmounted from outside"), stopAll())
	case <-srv.Exited():
		return errors.Join(errors.New("smbd exited"), stopAll())
	}
}

// nasPassword reads the share's password from a file or the environment;
// it is never printed.
func nasPassword(file string) (string, error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", usagef("--password-file: %v", err)
		}
		pw, _, _ := strings.Cut(string(b), "\n")
		pw = strings.TrimSuffix(pw, "\r")
		if pw == "" {
			return "", usagef("--password-file %s: the first line is empty", file)
		}
		return pw, nil
	}
	if pw := os.Getenv(smb.PasswordEnv); pw != "" {
		return pw, nil
	}
	return "", usagef("give the share's password with --password-file or $%s", smb.PasswordEnv)
}

// nasError marks a missing Samba installation or a taken port as bad
// input.
func nasError(err error) error {
	if errors.Is(err, smb.ErrNoSamba) {
		return usageError{fmt.Errorf("%w: install it to serve SMB", err)}
	}
	return err
}
