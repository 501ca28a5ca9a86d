package fusefs

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nasemu/nasemu/emu"
)

// Errors of the control interface.
var (
	// ErrNoFaults: the model has no device that supports the requested fault.
	ErrNoFaults = emu.ErrNoFaults
	// ErrNoReplacement: the filesystem was given no way to build a
	// replacement drive (Options.Replacement).
	ErrNoReplacement = errors.New("this mount cannot build replacement drives")
	// ErrSocketPath: the control socket's path holds something that is
	// not a stale socket (ListenControl).
	ErrSocketPath = errors.New("control socket path taken")
)

// ControlRequest is one line sent to the control socket.
type ControlRequest struct {
	// Cmd is "status", "fail", "replace", "power-loss" or "fault".
	Cmd string `json:"cmd"`
	// Member is the array member of "fail" and "replace" (from 0).
	Member int `json:"member,omitempty"`
	// Fault is the argument of "fault": "list", "clear", or a rule in
	// models/fault's text form to inject (emu.Volume.FaultRequest).
	Fault string `json:"fault,omitempty"`
}

// ControlResponse is the line the control socket answers with.
type ControlResponse struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
	// Status is set for "status" (and after every successful command).
	Status *Status `json:"status,omitempty"`
	// LostBytes is set for "power-loss": the bytes of the unsynced writes
	// undone.
	LostBytes int64 `json:"lost_bytes,omitempty"`
	// LostChanges is set for "power-loss": the namespace changes of the
	// running transaction undone (creates, deletes, renames, truncations).
	LostChanges int `json:"lost_changes,omitempty"`
	// Faults is set for "fault": the rules armed after it.
	Faults []FaultRule `json:"faults,omitempty"`
}

// FaultRule is an injected fault rule (emu.FaultRule), with the front
// whose volume it is armed on.
type FaultRule struct {
	Front string `json:"front"`
	emu.FaultRule
}

// Status is a snapshot of a mounted share.
type Status struct {
	Backing    string  `json:"backing"`
	Mountpoint string  `json:"mountpoint"`
	Capacity   int64   `json:"capacity_bytes"`
	Free       int64   `json:"free_bytes"`
	ModelTime  float64 `json:"model_time_s"`
	InFlight   int64   `json:"in_flight"`
	// LateAnswers counts the requests answered after the model's
	// completion time, LateSeconds (model time) sums how late: the host
	// could not keep up with the model (see emu.Volume.Late).
	LateAnswers int64   `json:"late_answers"`
	LateSeconds float64 `json:"late_s"`
	// PendingChanges are the namespace changes since the last journal
	// commit: what a power loss now would undo.
	PendingChanges int            `json:"pending_changes"`
	Devices        []DeviceStatus `json:"devices"`
	// Arrays are the RAID arrays of the model, top down.
	Arrays []ArrayStatus `json:"arrays,omitempty"`
}

// ArrayStatus is the health of one array of the model.
type ArrayStatus = emu.ArrayStatus

// Status returns a snapshot of the share, its volume and its model.
func (f *FS) Status() Status {
	capacity, free := f.Usage()
	late := f.vol.Late()
	return Status{
		LateAnswers: late.Count, LateSeconds: late.Total.Seconds(),
		Backing: f.backing, Mountpoint: f.mountpoint,
		Capacity: capacity, Free: free,
		ModelTime:      f.vol.Clock().Now().Seconds(),
		InFlight:       f.vol.Stats().InFlight,
		PendingChanges: f.PendingChanges(),
		Devices:        f.Devices(),
		Arrays:         f.Arrays(),
	}
}

// Arrays returns the health of every array of the model (devices that
// implement raid.StatusReporter), bringing their background work up to now.
func (f *FS) Arrays() []ArrayStatus { return f.vol.Arrays() }

// FailMember fails member i of the first array of the model's stack (the
// first device that implements raid.MemberFailer), and saves the arrays'
// health in the backing directory before it returns.
func (f *FS) FailMember(i int) error {
	if err := f.vol.FailMember(i); err != nil {
		return err
	}
	return f.saveArrays() // a remount comes back as degraded (see ArrayStateFile)
}

// ReplaceMember puts a new drive (built by Options.Replacement) in the
// place of failed member i of the first array of the model's stack, which
// starts a rebuild.
func (f *FS) ReplaceMember(i int) error {
	if f.replacement == nil {
		return ErrNoReplacement
	}
	dev, err := f.replacement(i)
	if err != nil {
		return fmt.Errorf("building a replacement for member %d: %w", i, err)
	}
	if err := f.vol.ReplaceMember(i, dev); err != nil {
		return err
	}
	return f.saveArrays()
}

// ListenControl listens for control requests on a Unix socket at path,
// of mode 0600 whatever the umask. It removes a stale socket of a killed
// run at path, but nothing else: a path that holds a file of another kind
// (or a symlink) or a socket something still listens on is refused with
// ErrSocketPath. The socket file is removed when the listener is closed.
func ListenControl(path string) (net.Listener, error) {
	switch st, err := os.Lstat(path); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("control socket: %w", err)
	case st.Mode().Type() != fs.ModeSocket:
		return nil, fmt.Errorf("%w: %s is not a socket (%v): refusing to remove it", ErrSocketPath, path, st.Mode().Type())
	default:
		if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
			c.Close()
			return nil, fmt.Errorf("%w: an emulator already listens at %s", ErrSocketPath, path)
		}
		if err := os.Remove(path); err != nil {
			return nil, fmt.Errorf("control socket: removing a stale one: %w", err)
		}
	}
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	sock := os.NewFile(uintptr(fd), path)
	defer sock.Close() // the listener holds a duplicate
	// bind gives the socket file the socket's own mode less the umask
	// (Linux unix_bind): 0600 set before bind makes the file 0600 at most,
	// whatever the umask, from the moment it exists.
	if err := unix.Fchmod(fd, 0o600); err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrUnix{Name: path}); err != nil {
		return nil, fmt.Errorf("control socket: %w", &fs.PathError{Op: "bind", Path: path, Err: err})
	}
	if err := unix.Listen(fd, 16); err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("control socket: %w", err)
	}
	l, err := net.FileListener(sock)
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("control socket: %w", err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(true)
	return l, nil
}

// peerAllowed reports whether the process at the other end of c may
// control the emulator: root or the user this process runs as (the
// mount's owner), by the credentials the kernel recorded when it
// connected (SO_PEERCRED). The socket's mode keeps others out already;
// this holds when a socket was given a wider mode or its directory was
// shared.
func peerAllowed(c net.Conn) (uid uint32, ok bool) {
	uc, isUnix := c.(*net.UnixConn)
	if !isUnix {
		return 0, false
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0, false
	}
	var cred *unix.Ucred
	if err := raw.Control(func(fd uintptr) {
		cred, err = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	}); err != nil || cred == nil {
		return 0, false
	}
	return cred.Uid, cred.Uid == 0 || int(cred.Uid) == os.Geteuid()
}

// ServeControl answers control requests (JSON lines) on l until l is
// closed; each connection may send several requests. Only root and the
// user the emulator runs as are answered (peerAllowed); others get an
// error and the connection is closed.
func (f *FS) ServeControl(l net.Listener) error {
	return ServeRequests(l, f.log, func(req ControlRequest) any { return f.Control(req) })
}

// ServeRequests answers control requests on l as ServeControl does, with
// handle's answers (JSON objects with at least ControlResponse's fields),
// for emulators that control more than a share.
func ServeRequests(l net.Listener, log *slog.Logger, handle func(ControlRequest) any) error {
	for {
		c, err := l.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		go serveConn(c, log, handle)
	}
}

func serveConn(c net.Conn, log *slog.Logger, handle func(ControlRequest) any) {
	defer c.Close()
	sc := bufio.NewScanner(c)
	enc := json.NewEncoder(c)
	if uid, ok := peerAllowed(c); !ok {
		// The request is read (not carried out) so that the client, which
		// writes before it reads, gets the answer.
		log.Warn("control request refused", "uid", uid)
		c.SetDeadline(time.Now().Add(5 * time.Second))
		sc.Scan()
		enc.Encode(ControlResponse{Error: fmt.Sprintf("permission denied: uid %d may not control this emulator (only root and uid %d)", uid, os.Geteuid())})
		return
	}
	for sc.Scan() {
		var req ControlRequest
		var resp any
		if err := json.Unmarshal(sc.Bytes(), &req); err != nil {
			resp = ControlResponse{Error: fmt.Sprintf("bad request: %v", err)}
		} else {
			resp = handle(req)
		}
		if err := enc.Encode(resp); err != nil {
			return
		}
	}
}

// Control carries out one control request.
func (f *FS) Control(req ControlRequest) ControlResponse {
	var resp ControlResponse
	var err error
	switch req.Cmd {
	case "status":
	case "fail":
		if err = f.FailMember(req.Member); err == nil {
			f.log.Warn("drive failed by control request", "member", req.Member)
		}
	case "replace":
		if err = f.ReplaceMember(req.Member); err == nil {
			f.log.Warn("drive replaced by control request: rebuilding", "member", req.Member)
		}
	case "power-loss":
		resp.LostBytes, resp.LostChanges = f.powerLoss()
	case "fault":
		var rules []emu.FaultRule
		if rules, err = f.vol.FaultRequest(req.Fault); err == nil {
			resp.Faults = LabelFaults("share", rules)
			logFault(f.log, req.Fault)
		}
	default:
		err = fmt.Errorf("unknown command %q (known: status, fail, replace, power-loss, fault)", req.Cmd)
	}
	if err != nil {
		resp.Error = err.Error()
		return resp
	}
	st := f.Status()
	resp.OK, resp.Status = true, &st
	return resp
}

// Call sends one request to the control socket at path and returns the
// answer. A response with OK false is returned with a nil error: the
// request reached the emulator, which refused it.
func Call(path string, req ControlRequest) (ControlResponse, error) {
	var resp ControlResponse
	err := CallInto(path, req, &resp)
	return resp, err
}

// CallInto is Call for an emulator whose answers carry more than a
// ControlResponse: the answer is decoded into resp.
func CallInto(path string, req ControlRequest, resp any) error {
	c, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		return fmt.Errorf("control socket: %w", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if err := json.NewEncoder(c).Encode(req); err != nil {
		return fmt.Errorf("control socket: %w", err)
	}
	if err := json.NewDecoder(c).Decode(resp); err != nil {
		return fmt.Errorf("control socket: %w", err)
	}
	return nil
}

// LabelFaults labels the rules armed on a front's volume.
func LabelFaults(front string, rules []emu.FaultRule) []FaultRule {
	out := make([]FaultRule, len(rules))
	for i, r := range rules {
		out[i] = FaultRule{Front: front, FaultRule: r}
	}
	return out
}

// logFault logs a fault request that changed the injected rules.
func logFault(log *slog.Logger, arg string) {
	switch arg = strings.TrimSpace(arg); arg {
	case "", "list":
	case "clear":
		log.Warn("injected faults cleared by control request")
	default:
		log.Warn("fault injected by control request", "rule", arg)
	}
}
