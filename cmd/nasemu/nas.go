package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nasemu/nasemu"
	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/fusefs"
	"github.com/nasemu/nasemu/iscsi"
	"github.com/nasemu/nasemu/iscsi/scsi"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/proto"
	"github.com/nasemu/nasemu/serve"
	"github.com/nasemu/nasemu/smb"
)

// nasInfo is what a running 'nasemu nas' serves, for tests.
type nasInfo struct {
	Mountpoint string // the FUSE mount smbd shares ("" without --smb)
	RunDir     string // mount point, Samba state, control socket
	SMB        *smb.Samba
	FS         *fusefs.FS
	URL        string // bench target address of the share, no password

	Metrics string // the address of /metrics and /healthz ("" without --metrics)

	ISCSI  string          // the iSCSI portal's address ("" without --iscsi)
	IQN    string          // the target's name
	Array  *serve.NASArray // the one-array model, with --iscsi
	Volume *emu.Volume     // the volume that serialises the model
}

func runNas(args []string, stdout, stderr io.Writer) error {
	return untilSignal(func(ctx context.Context) error { return nas(ctx, args, stderr, nil) })
}

// nas serves the emulated NAS of a setup until ctx is done (SIGINT,
// SIGTERM), the share is unmounted from outside, smbd dies or the iSCSI
// target fails: its volume over SMB (--smb), its LUN over iSCSI (--iscsi),
// or both. ready, when set, is called once everything serves.
//
// Every modelled cost, the link and protocol layers included, is charged
// once, by the FUSE mount: loopback and this host's smbd are not the
// modelled network and NAS, and letting them stand in would make results
// depend on the host. The mount is told smbd is its front
// (fusefs.FrontSMB) and charges each client request once, however many
// file system calls smbd makes for it; the generated smb.conf keeps smbd
// from making calls no client asked for (smb.SambaConf). The host's own
// round trips are answered early by their measured cost (FUSE's at mount,
// fusefs.Options.Compensation; SMB's while serving, serve.SMBCompensator),
// and the model's client-side time per file operation is off, since the
// real client spends its own. docs/notes/nas-smb-charging.md has the
// measurements behind these choices.
//
// The LUN (--iscsi) is charged to the same model as the share
// (serve.NASArray): a region at the end of the array (--lun-size, default
// a quarter of it), its bytes in --lun outside the share's backing
// directory, its host path not compensated (as in 'nasemu iscsi'). The
// control socket acts on both (serve.Control).
func nas(ctx context.Context, args []string, stderr io.Writer, ready func(nasInfo)) error {
	fs := newFlags("nas", "--setup SETUP (--smb HOST:PORT --backing DIR [--user U --password-file F] | --iscsi HOST:PORT --lun FILE)...", stderr)
	setupName := fs.String("setup", "", "the modelled NAS: a built-in setup's name or a YAML file")
	backing := fs.String("backing", "", "directory that holds the share's files (kept across runs; with --smb)")
	smbAddr := fs.String("smb", "", "serve the share over SMB at HOST:PORT, a loopback address (e.g. 127.0.0.1:4450) unless --smb-public")
	smbPublic := fs.Bool("smb-public", false, "allow --smb on an address other hosts reach (0.0.0.0:445 in a container); the password alone guards the share")
	metricsAddr := fs.String("metrics", "", "serve the share's Prometheus metrics at HOST:PORT/metrics and its health at /healthz (with --smb), a loopback address unless --metrics-public")
	metricsPublic := fs.Bool("metrics-public", false, "allow --metrics on an address other hosts reach (served without authentication)")
	userName := fs.String("user", "", "the account allowed on the share: an existing Unix user (default: the current user)")
	passwordFile := fs.String("password-file", "", "file whose first line is the account's password (default: $"+smb.PasswordEnv+")")
	share := fs.String("share", "nas", "the share's name")
	iscsiAddr := fs.String("iscsi", "", "also serve a LUN of the same array over iSCSI at HOST:PORT")
	lunFile := fs.String("lun", "", "file that holds the LUN's bytes (created sparse; kept across runs; with --iscsi)")
	lunStateDir := fs.String("state-dir", "", "with --iscsi and no --smb: directory that keeps the array's failed and rebuilding drives across restarts (in "+emu.ArrayStateFile+"; with a share, its --backing directory keeps them)")
	lunSizeFlag := fs.String("lun-size", "", "the LUN's size, carved from the end of the array (default: a quarter of the array)")
	iqn := fs.String("iqn", iscsi.DefaultIQN, "the iSCSI target's name")
	chapUser := fs.String("chap-user", "", "require iSCSI CHAP with this user name")
	chapFile := fs.String("chap-secret-file", "", "file holding the CHAP secret (12 to 255 bytes; a trailing newline is dropped)")
	scale := fs.Float64("time-scale", 1, "run the model F times slower than real time (for setups faster than this host)")
	seed := fs.Uint64("seed", 1, "seed of the model's random choices")
	verbose := fs.Bool("verbose", false, "log every event of the emulator")
	readyFile := fs.String("ready-file", "", "once the share and the LUN are up, write PATH (KEY=VALUE lines: pid, smb, iscsi, socket, metrics); removed at exit")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case fs.NArg() > 0:
		return usagef("unexpected arguments %q", fs.Args())
	case *setupName == "":
		return usagef("--setup is required")
	case *smbAddr == "" && *iscsiAddr == "":
		return usagef("--smb HOST:PORT or --iscsi HOST:PORT is required (or both)")
	case *lunStateDir != "" && *smbAddr != "":
		return usagef("--state-dir is for a LUN served without a share: with --smb, the --backing directory keeps the array's state")
	case *smbAddr != "" && *backing == "":
		return usagef("--backing is required with --smb")
	case *metricsAddr != "" && *smbAddr == "":
		return usagef("--metrics goes with --smb: they are the share's metrics")
	case *metricsAddr != "" && !*metricsPublic && !loopback(*metricsAddr):
		return usagef("--metrics %s: not a loopback address; the metrics are served without authentication, so give --metrics-public to serve them to other hosts", *metricsAddr)
	case *iscsiAddr != "" && *lunFile == "":
		return usagef("--lun FILE is required with --iscsi: the file that holds the LUN's bytes")
	case *iscsiAddr == "" && (*lunFile != "" || *lunSizeFlag != "" || *chapUser != ""):
		return usagef("--lun, --lun-size and --chap-user go with --iscsi")
	case checkTimeScale(*scale) != nil:
		return checkTimeScale(*scale)
	case strings.ContainsAny(*share, "/\\[]\n"):
		return usagef("--share %q: not a share name", *share)
	}
	var password string
	if *smbAddr != "" {
		if err := checkDir("--backing", *backing); err != nil {
			return err
		}
		if *userName == "" {
			u, err := user.Current()
			if err != nil {
				return usagef("--user is required: %v", err)
			}
			*userName = u.Username
		}
		u, err := user.Lookup(*userName)
		if err != nil {
			return usagef("--user %s: not a Unix user of this machine (smbd serves files as that user)", *userName)
		}
		if !mayWrite(u, *backing) {
			fmt.Fprintf(stderr, "nasemu nas: warning: user %s cannot write --backing %s: the share is read-only for them (give them the directory)\n", *userName, *backing)
		}
		if password, err = nasPassword(*passwordFile); err != nil {
			return err
		}
		probe := smb.SambaConfig{Dir: "-", Path: "-", Addr: *smbAddr, Public: *smbPublic, Password: password}
		if err := probe.Validate(); err != nil {
			return usagef("--smb: %v", err)
		}
	}
	var lunSize int64
	if *lunSizeFlag != "" {
		b, err := models.ParseBytes(*lunSizeFlag)
		if err != nil || b == 0 {
			return usagef("--lun-size: %v", errors.Join(err, errors.New("want a positive size")))
		}
		lunSize = int64(b)
	}
	if *iscsiAddr != "" && *backing != "" {
		l, _ := filepath.Abs(*lunFile)
		b, _ := filepath.Abs(*backing)
		if rel, err := filepath.Rel(b, l); err == nil && !strings.HasPrefix(rel, "..") {
			return usagef("--lun %s lies in --backing %s: the share would show the LUN's bytes as a file", *lunFile, *backing)
		}
	}
	chap, err := readCHAP(*chapUser, *chapFile)
	if err != nil {
		return err
	}

	s, err := nasemu.LoadSetup(*setupName)
	if err != nil {
		return usageError{err}
	}
	sweepStateDirs("nas", stderr)
	// The client is real and pays its own per-file work: the model's
	// client-side cost of a file operation (Explorer's copy engine and
	// redirector, proto.Config.ClientOp) is not charged again, and it
	// reads ahead and writes behind with its own cache
	// (proto.Config.ClientCache).
	s.Protocol.ClientOp = -1
	if s.Protocol.Protocol == proto.SMB2 || s.Protocol.Protocol == proto.SMB3 {
		s.Protocol.ClientCache = new(bool)
	}
	model, err := s.Build(*seed)
	if err != nil {
		return usageError{err}
	}
	var arr *serve.NASArray
	if *iscsiAddr != "" {
		if lunSize == 0 {
			lunSize = model.Capacity() / 4
		}
		if arr, err = serve.NewNASArray(model, lunSize); err != nil {
			return usagef("--lun-size: %v", err)
		}
		model = arr
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	wall := emu.NewWallClock(*scale, -1)
	clock := serve.NewCompClock(wall)
	info := nasInfo{Array: arr}

	// The share's volume, unmounted yet, or a volume of its own that
	// serialises the array of a LUN served alone.
	var f *fusefs.FS
	var metrics *fusefs.Metrics
	if *smbAddr != "" {
		if *metricsAddr != "" { // counting costs each request a little: only when asked
			metrics = fusefs.NewMetrics()
		}
		f, err = fusefs.New(model, clock, *backing, fusefs.Options{Logger: log, Metrics: metrics, Replacement: serve.ReplacementDrives(s, *seed), Front: fusefs.FrontSMB, JournalInterval: journalInterval(s)})
		if err != nil {
			return err
		}
		defer f.Unmount() // an early return frees the backing directory (Unmount runs once)
		info.FS, info.Volume = f, f.Volume()
	} else {
		// It charges and paces; the LUN's bytes are in its own file.
		if info.Volume, err = emu.NewVolume(model, emu.NewMemStore(model.Capacity()), emu.Options{Clock: wall, Logger: log}); err != nil {
			return err
		}
		defer info.Volume.Close()
		if *lunStateDir != "" {
			if err := checkStateDir(*lunStateDir); err != nil {
				return err
			}
			// The array comes back as it went down: degraded, rebuilding.
			if err := info.Volume.LoadArrays(*lunStateDir, serve.ReplacementDrives(s, *seed)); err != nil {
				return usagef("--state-dir: %v", err)
			}
		}
	}

	var lun *serve.LUN
	var lunVol *emu.Volume
	stopLUN := func() error { return nil }
	if *iscsiAddr != "" {
		file, err := emu.OpenFileStore(*lunFile, arr.LUNSize())
		if err != nil {
			return usagef("--lun: %v", err)
		}
		// Paced waits end when the LUN stops or loses power, so that a
		// signal is honoured at once even while a long-paced command is
		// in flight.
		lunClock := iscsi.NewStopClock(wall)
		lunStore := serve.NewLUNStore(file, serve.WritesThrough(s), lunClock)
		lunVol, err = serve.NewLUNVolume(info.Volume, arr, lunStore, emu.Options{Clock: lunClock, Logger: log})
		if err != nil {
			lunStore.Close()
			return err
		}
		lu, err := scsi.New(lunVol, scsi.Config{ID: iscsi.LUNID(*iqn, 0), Logger: log})
		if err != nil {
			lunStore.Close()
			return usageError{err}
		}
		l, err := net.Listen("tcp", *iscsiAddr)
		if err != nil {
			lunStore.Close()
			return usagef("--iscsi %s: %v", *iscsiAddr, err)
		}
		if lun, err = serve.NewLUN(iscsi.TargetConfig{IQN: *iqn, Alias: s.Name, LU: lu, CHAP: chap, Logger: log}, l, lunClock, lunVol); err != nil {
			l.Close()
			lunStore.Close()
			return usageError{err}
		}
		info.ISCSI, info.IQN = lun.Addr(), *iqn
		stopLUN = func() error {
			err := lun.Stop()
			lunVol.LogLate()
			if *lunStateDir != "" {
				// A rebuild that finished while serving is saved as done.
				err = errors.Join(err, info.Volume.SaveArrays(*lunStateDir))
			}
			return errors.Join(err, lunStore.Sync(), lunStore.Close())
		}
	}
	ctl := &serve.Control{FS: f, LUN: lun, LUNBacking: *lunFile, Volume: info.Volume, LUNVolume: lunVol, Replacement: serve.ReplacementDrives(s, *seed), StateDir: *lunStateDir, Logger: log}
	if arr != nil {
		ctl.LUNSize = arr.LUNSize()
	}

	// The run directory is private, but smbd's user must reach the mount.
	run, err := runStateDir("nas-", 0o711)
	if err != nil {
		return errors.Join(err, stopLUN())
	}
	defer run.RemoveAll()
	runDir := run.Path()
	ctlListener, err := fusefs.ListenControl(filepath.Join(runDir, "ctl.sock"))
	if err != nil {
		return errors.Join(err, stopLUN())
	}
	defer ctlListener.Close()
	go ctl.Serve(ctlListener)

	var srv *smb.Samba
	stopAll := stopLUN
	var unmounted <-chan struct{}
	var smbExited <-chan struct{}
	if *smbAddr != "" {
		shareDir, err := run.Mkdir("share", 0o755)
		if err != nil {
			return errors.Join(fmt.Errorf("state directory: %w", err), stopLUN())
		}
		shareDir.Close()
		mnt := shareDir.Path()
		if err := f.Mount(mnt); err != nil {
			return errors.Join(err, stopLUN())
		}
		done := make(chan struct{})
		go func() { f.Wait(); close(done) }()
		unmounted = done
		srv, err = smb.StartSamba(smb.SambaConfig{Dir: filepath.Join(runDir, "samba"), Addr: *smbAddr, Public: *smbPublic, Share: *share, Path: mnt, User: *userName, Password: password})
		if err != nil {
			return errors.Join(nasError(err), stopLUN(), f.Unmount())
		}
		smbExited = srv.Exited()
		comp := serve.StartSMBCompensator(srv, password, f, clock, log)
		stopAll = func() error {
			comp.Stop()
			return errors.Join(stopLUN(), srv.Stop(), f.Unmount())
		}
		rt := comp.RoundTrip()
		info.Mountpoint, info.SMB, info.URL = mnt, srv, srv.URL("")
		capacity, free := f.Usage()
		fmt.Fprintf(stderr, "nasemu nas: %s (%s usable, %s free), files in %s\n", s.Name, models.Bytes(capacity).Human(), models.Bytes(free).Human(), f.Backing())
		tr, tw := comp.Transfer()
		to, tc := comp.FileOps()
		us := func(d time.Duration) time.Duration { return d.Round(time.Microsecond) }
		fmt.Fprintf(stderr, "nasemu nas: SMB share //%s/%s for user %s (target %s), answers %v early (FUSE %v, SMB %v); reads and writes %v and %v per MiB, opens %v and closes %v earlier still\n",
			srv.Addr(), srv.Share(), *userName, srv.URL(""), wallTime(f.Compensation(), *scale)+rt, wallTime(f.Compensation(), *scale), rt, us(tr), us(tw), us(to), us(tc))
		if fusefs.SplitsSMBWrites() {
			fmt.Fprintf(stderr, "nasemu nas: warning: this kernel splits an SMB client's 1 MiB requests in two on their way to the share, and each half is charged as a request (fs.fuse.max_pages_limit is below 257): raise it with 'sysctl fs.fuse.max_pages_limit=1024'\n")
		}
		if !fusefs.SplicesReads(fusefs.SMBMaxRead) {
			fmt.Fprintf(stderr, "nasemu nas: warning: this host's pipes are too small to answer an SMB client's 1 MiB reads by splice, so each is copied twice (fs.pipe-max-size is below %d): raise it with 'sysctl fs.pipe-max-size=%d'\n", fusefs.PipeSizeFor(fusefs.SMBMaxRead), fusefs.PipeSizeFor(fusefs.SMBMaxRead))
		}
		if *metricsAddr != "" {
			smbUp := func() error {
				select {
				case <-srv.Exited():
					return errors.New("smbd has exited")
				default:
					return nil
				}
			}
			addr, stopMetrics, err := serveMetrics(*metricsAddr, metrics, healthHandler(f, smbUp))
			if err != nil {
				return errors.Join(err, stopAll())
			}
			defer stopMetrics()
			info.Metrics = addr
			fmt.Fprintf(stderr, "nasemu nas: metrics at http://%s/metrics (health at /healthz)\n", addr)
		}
	}
	info.RunDir = runDir
	fmt.Fprintf(stderr, "nasemu nas: control socket %s\n", filepath.Join(runDir, "ctl.sock"))
	if lun != nil {
		fmt.Fprintf(stderr, "nasemu nas: iSCSI LUN 0 of %s at %s: %s at the end of the array of %s (from %s), bytes in %s\n",
			*iqn, lun.Addr(), models.Bytes(arr.LUNSize()).Human(), s.Name, models.Bytes(arr.LUNBase()).Human(), *lunFile)
	}
	if *readyFile != "" {
		if err := writeReadyFile(*readyFile, info.readyLines()); err != nil {
			return errors.Join(err, stopAll())
		}
		defer os.Remove(*readyFile)
	}
	if ready != nil {
		ready(info)
	}
	var lunFailed <-chan error
	if lun != nil {
		lunFailed = lun.Failed()
	}
	select {
	case <-ctx.Done():
		fmt.Fprintln(stderr, "nasemu nas: stopping")
		return stopAll()
	case <-unmounted:
		return errors.Join(errors.New("the share was unmounted from outside"), stopAll())
	case <-smbExited:
		return errors.Join(errors.New("smbd exited"), stopAll())
	case err := <-lunFailed:
		return errors.Join(fmt.Errorf("iSCSI target: %w", err), stopAll())
	}
}

// mayWrite reports whether user u may create files in dir by its owner,
// group and mode: smbd serves the share as u, and the kernel checks u's
// access to the mount as it would to dir (default_permissions).
func mayWrite(u *user.User, dir string) bool {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return false
	}
	switch {
	case u.Uid == "0" || strconv.FormatUint(uint64(st.Uid), 10) == u.Uid:
		return u.Uid == "0" || st.Mode&0o300 == 0o300
	case st.Mode&0o003 == 0o003:
		return true
	}
	groups, _ := u.GroupIds()
	return st.Mode&0o030 == 0o030 && slices.Contains(groups, strconv.FormatUint(uint64(st.Gid), 10))
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

// wallTime converts a duration of model time to wall time.
func wallTime(d time.Duration, scale float64) time.Duration {
	return time.Duration(float64(d) * scale)
}
