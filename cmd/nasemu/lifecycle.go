package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/nasemu/nasemu/fusefs"
)

// untilSignal runs a server with a context that ends at SIGINT or
// SIGTERM, so that it stops and cleans up (unmounts, logs out) instead of
// dying with its mount or sessions left behind.
func untilSignal(serve func(context.Context) error) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return serve(ctx)
}

// checkDir checks that the directory a flag names is there, and says
// precisely what is wrong when it is not.
func checkDir(flag, path string) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return usagef("%s %s: does not exist (create it first: mkdir -p %s)", flag, path, path)
	case err != nil:
		return usagef("%s %s: %v", flag, path, err)
	case !st.IsDir():
		return usagef("%s %s: not a directory", flag, path)
	}
	return nil
}

// checkEmpty refuses a mountpoint with files in it: the mount would hide
// them, and a non-empty mountpoint is usually a wrong path (the backing
// directory, a home directory) rather than a place prepared for a mount.
func checkEmpty(mountpoint string) error {
	d, err := os.Open(mountpoint)
	if err != nil {
		return usageError{err}
	}
	defer d.Close()
	names, _ := d.Readdirnames(3)
	if len(names) == 0 {
		return nil
	}
	return usagef("%s is not empty (%s...): the mount would hide its files; give an empty directory, or --nonempty to mount over them", mountpoint, strings.Join(names, ", "))
}

// clearStale removes a share that a killed emulator left at mountpoint
// (fusefs.ClearStale) and says so.
func clearStale(mountpoint, cmd string, stderr io.Writer) error {
	e, err := fusefs.ClearStale(mountpoint)
	if err != nil {
		return usageError{err}
	}
	if e != nil {
		fmt.Fprintf(stderr, "nasemu %s: %s held the share %s of an emulator that has ended (transport endpoint not connected): unmounted it\n", cmd, mountpoint, e.Source)
	}
	return nil
}

// stateDirPID returns the process of a state directory (mount-PID-RANDOM,
// nas-PID-RANDOM: see runStateDir).
func stateDirPID(dir string) (int, bool) {
	parts := strings.Split(filepath.Base(dir), "-")
	if len(parts) < 2 {
		return 0, false
	}
	pid, err := strconv.Atoi(parts[1])
	return pid, err == nil && pid > 0
}

// processGone reports whether process pid has ended: it does not exist,
// or it has exited and waits for its parent to collect its status (a
// zombie). A process of another user counts as running.
func processGone(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	// PID (COMM) STATE ...: COMM may hold spaces and parentheses.
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// sweepStateDirs removes the state directories of emulators that have
// ended without cleaning up (kill -9, a crash), with their stale control
// sockets, after detaching a share an ended 'nasemu nas' left mounted in
// one; it says what it removed. A directory that still has something
// mounted in it is left alone.
func sweepStateDirs(cmd string, stderr io.Writer) {
	dirs, _ := filepath.Glob(filepath.Join(stateBase(), "*-*"))
	for _, dir := range dirs {
		pid, ok := stateDirPID(dir)
		if st, err := os.Lstat(dir); !ok || err != nil || !st.IsDir() || !processGone(pid) {
			continue
		}
		share := filepath.Join(dir, "share")
		if e, err := fusefs.ClearStale(share); err != nil {
			fmt.Fprintf(stderr, "nasemu %s: leaving %s of ended process %d: %v\n", cmd, dir, pid, err)
			continue
		} else if e != nil {
			fmt.Fprintf(stderr, "nasemu %s: unmounted the stale share %s of ended process %d\n", cmd, share, pid)
		}
		if fusefs.Mounted(share) {
			continue
		}
		if err := os.RemoveAll(dir); err == nil {
			fmt.Fprintf(stderr, "nasemu %s: removed the state directory %s of ended process %d\n", cmd, dir, pid)
		}
	}
}

// writeReadyFile tells scripts that the share is up: it writes lines of
// KEY=VALUE (pid, mountpoint, control socket, metrics URL) to a temporary
// file beside path and renames it into place, so that a reader never sees
// half of it. The file is removed when the emulator stops.
func writeReadyFile(path string, kv [][2]string) error {
	var b strings.Builder
	for _, p := range kv {
		if p[1] != "" {
			fmt.Fprintf(&b, "%s=%s\n", p[0], p[1])
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("--ready-file: %w", err)
	}
	_, err = tmp.WriteString(b.String())
	if err = errors.Join(err, tmp.Close()); err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("--ready-file: %w", err)
	}
	return nil
}

// healthHandler answers /healthz: 200 while the share is mounted and its
// filesystem answers, with the state of its arrays (a degraded array is
// healthy emulation of an unhealthy NAS); 503 before and after.
//
// servers, when not nil, reports what else must be up (for 'nasemu nas':
// smbd and the iSCSI target): an error makes the share down.
func healthHandler(f *fusefs.FS, servers func() error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		st := f.Status()
		down := func(format string, a ...any) {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "down: "+format+"\n", a...)
		}
		var serversErr error
		if servers != nil {
			serversErr = servers()
		}
		switch _, err := os.Stat(st.Mountpoint); {
		case st.Mountpoint == "":
			down("not mounted yet")
		case !fusefs.Mounted(st.Mountpoint):
			down("%s is not mounted", st.Mountpoint)
		case err != nil:
			down("%v", err)
		case serversErr != nil:
			down("%v", serversErr)
		default:
			fmt.Fprintf(w, "ok: mounted at %s", st.Mountpoint)
			level := map[string]string{}
			for _, d := range st.Devices {
				level[d.Path] = d.Array
			}
			for _, a := range st.Arrays {
				fmt.Fprintf(w, ", %s array (device %s) %s", level[a.Path], a.Path, a.State)
			}
			fmt.Fprintln(w)
		}
	})
}

// readyLines are what 'nasemu nas --ready-file' writes: the bench targets
// of the share and the LUN, and the control socket.
func (i nasInfo) readyLines() [][2]string {
	kv := [][2]string{{"pid", strconv.Itoa(os.Getpid())}, {"smb", i.URL}}
	if i.ISCSI != "" {
		kv = append(kv, [2]string{"iscsi", "iscsi://" + i.ISCSI + "/" + i.IQN + "/0"})
	}
	if i.RunDir != "" {
		kv = append(kv, [2]string{"socket", filepath.Join(i.RunDir, "ctl.sock")})
	}
	if i.Metrics != "" {
		kv = append(kv, [2]string{"metrics", i.Metrics})
	}
	return kv
}

// serveMetrics serves m at http://addr/metrics and health at /healthz
// until stop is called; it returns the address it listens on.
func serveMetrics(addr string, m *fusefs.Metrics, health http.Handler) (string, func(), error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, usagef("--metrics %s: %v", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
	mux.Handle("/healthz", health)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	return l.Addr().String(), func() { srv.Close() }, nil
}
