package smb

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nasemu/nasemu/rundir"
)

// ErrNoSamba is returned by StartSamba when smbd or smbpasswd is not
// installed (Debian packages samba and smbclient).
var ErrNoSamba = errors.New("smbd not installed (Debian package samba)")

// SambaConfig describes a private smbd serving one share on loopback. Its
// zero value is not usable: Dir and Path are required; everything else
// has a default.
type SambaConfig struct {
	// Dir is the private state directory: smb.conf, passdb, locks, pid,
	// cache and logs go under it. StartSamba creates it, mode 0700: it
	// must not exist yet, and its parent must be a directory of the
	// caller's that no one else can write.
	Dir string
	// Addr is HOST:PORT to listen on; the host must be a loopback address
	// unless Public is set (default 127.0.0.1 and a free port).
	Addr string
	// Public lets Addr be an address other hosts reach: an interface's
	// address, or an unspecified host (0.0.0.0, ::) for every interface,
	// as a service in a container needs. The share is then guarded by
	// the account's password alone; leave it off for tests and local
	// use.
	Public bool
	// Share is the share's name (default "share").
	Share string
	// Path is the directory shared. smbd's user must be able to write it
	// (on a FUSE mount: mounted with allow_other).
	Path string
	// User is the account that may connect (default "root"): it must
	// exist as a Unix user; its Samba password is kept in Dir only.
	User string
	// Password is User's Samba password (required).
	Password string
	// ForceUser makes smbd access files as this Unix user whoever logs in
	// (default: none, files are accessed as User).
	ForceUser string
	// CaseInsensitive keeps smbd's default case-insensitive name lookup.
	// The default is case sensitive: smbd's case-insensitive lookup reads
	// the whole directory on every create, which slows file creation on a
	// FUSE share and would be charged to the emulated NAS
	// (docs/notes/nas-smb-charging.md).
	CaseInsensitive bool
	// SyncIO turns smbd's asynchronous I/O off (aio read/write size 0):
	// each connection then serves one request at a time, so a client's
	// queue depth does not reach the share. Leave it off unless a client
	// requires signing: go-smb2 v1.1.0 rejects the unsigned interim
	// STATUS_PENDING replies smbd sends for asynchronous requests when
	// signing is required ("signing required"); smbd here does not
	// require signing, so go-smb2 accepts them.
	SyncIO bool
	// NoXattrs tells smbd that Path keeps no extended attributes: DOS
	// attributes, EAs and NT ACLs are then not kept in them (store dos
	// attributes, ea support and nt acl support off). StartSamba sets it
	// when Path turns out to have none; where it has them, smbd keeps
	// them as a stock smbd on a plain directory does.
	NoXattrs bool
	// StartTimeout bounds the wait for smbd to listen (default 15 s).
	StartTimeout time.Duration
}

// Validate checks the configuration.
func (c SambaConfig) Validate() error {
	switch {
	case c.Dir == "":
		return errors.New("samba: no state directory")
	case c.Path == "":
		return errors.New("samba: no share path")
	case c.Password == "":
		return errors.New("samba: no password for the share's user")
	case strings.ContainsAny(c.Share+c.User+c.ForceUser+c.Path+c.Dir, "\n\r[]"):
		return errors.New("samba: names and paths must not contain newlines or brackets")
	}
	if c.Addr != "" {
		host, port, err := net.SplitHostPort(c.Addr)
		if err != nil {
			return fmt.Errorf("samba: listen address %q: %w", c.Addr, err)
		}
		ip := net.ParseIP(host)
		switch {
		case ip == nil:
			return fmt.Errorf("samba: listen address %q: the host must be an IP address", c.Addr)
		case !ip.IsLoopback() && !c.Public:
			return fmt.Errorf("samba: listen address %q is not a loopback address: serving the share to other hosts must be asked for explicitly", c.Addr)
		}
		if p, err := strconv.Atoi(port); err != nil || p <= 0 || p > 65535 {
			return fmt.Errorf("samba: listen address %q: bad port", c.Addr)
		}
	}
	return nil
}

func (c SambaConfig) withDefaults() SambaConfig {
	if c.Share == "" {
		c.Share = "share"
	}
	if c.User == "" {
		c.User = "root"
	}
	if c.StartTimeout == 0 {
		c.StartTimeout = 15 * time.Second
	}
	return c
}

// Samba is a running smbd started by StartSamba.
type Samba struct {
	cfg     SambaConfig
	addr    string
	cmd     *exec.Cmd
	exited  chan struct{} // closed when smbd has exited
	waitErr error
	once    sync.Once
	stopErr error
}

// SambaConf returns the smb.conf of cfg listening on addr: a standalone
// server on loopback only, no guest access, SMB2_02 to SMB3_11, every
// piece of state under cfg.Dir.
//
// Signing is offered but not required ("server signing = auto"), so that
// go-smb2 accepts smbd's unsigned interim replies to asynchronous
// requests and a client's queue depth reaches the share (see
// SambaConfig.SyncIO). Strict sync is on: a client's flush reaches the
// share as an fsync, which an emulated share charges as a flush.
func SambaConf(cfg SambaConfig, addr string) string {
	cfg = cfg.withDefaults()
	host, port, _ := net.SplitHostPort(addr)
	d := func(sub string) string { return filepath.Join(cfg.Dir, sub) }
	var b strings.Builder
	w := func(k, v string) { fmt.Fprintf(&b, "\t%s = %s\n", k, v) }
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		b.WriteString("# Generated by nasemu: a private smbd on every interface. Do not edit.\n[global]\n")
	} else {
		b.WriteString("# Generated by nasemu: a private smbd on one address. Do not edit.\n[global]\n")
	}
	w("server role", "standalone server")
	w("workgroup", "WORKGROUP")
	w("netbios name", "NASEMU")
	w("server string", "nasemu")
	if ip := net.ParseIP(host); ip == nil || !ip.IsUnspecified() {
		w("interfaces", host)
		w("bind interfaces only", "yes")
	}
	w("smb ports", port)
	w("disable netbios", "yes")
	w("server min protocol", "SMB2_02")
	w("server max protocol", "SMB3_11")
	w("client min protocol", "SMB2_02")
	w("map to guest", "Never")
	w("restrict anonymous", "2")
	w("passdb backend", "tdbsam:"+d("private/passdb.tdb"))
	w("private dir", d("private"))
	w("pid directory", d("run"))
	w("lock directory", d("lock"))
	w("state directory", d("state"))
	w("cache directory", d("cache"))
	w("ncalrpc dir", d("ncalrpc"))
	w("usershare path", d("usershares"))
	w("usershare max shares", "0")
	w("log file", d("log/smbd.log"))
	w("max log size", "10000")
	w("log level", "1")
	w("load printers", "no")
	w("printing", "bsd")
	w("printcap name", "/dev/null")
	w("disable spoolss", "yes")
	if cfg.SyncIO {
		w("aio read size", "0")
		w("aio write size", "0")
		w("strict sync", "no")
	} else {
		w("strict sync", "yes")
	}
	w("server signing", "auto")
	w("kernel oplocks", "no")
	w("posix locking", "no")
	w("unix extensions", "no")
	fmt.Fprintf(&b, "[%s]\n", cfg.Share)
	w("path", cfg.Path)
	w("read only", "no")
	w("guest ok", "no")
	w("browseable", "yes")
	w("valid users", cfg.User)
	if cfg.ForceUser != "" {
		w("force user", cfg.ForceUser)
	}
	if !cfg.CaseInsensitive {
		w("case sensitive", "yes")
		w("preserve case", "yes")
		w("short preserve case", "yes")
	}
	// Every file system call smbd makes on the share costs time on an
	// emulated share (a lookup or getattr is charged as a stat), so smbd
	// is kept from making calls a client did not ask for: no archive bit
	// mapped onto the mode (a chmod per written file), no change
	// notification. DOS attributes, EAs and NT ACLs stay on where the
	// share keeps extended attributes, as on a stock smbd: clients and
	// test suites (smbtorture) rely on them, and the share does not
	// charge xattr calls; without xattrs smbd could not keep them anyway.
	if cfg.NoXattrs {
		w("store dos attributes", "no")
		w("ea support", "no")
		w("nt acl support", "no")
	}
	w("map archive", "no")
	w("map hidden", "no")
	w("map system", "no")
	w("map readonly", "no")
	w("change notify", "no")
	w("kernel change notify", "no")
	w("create mask", "0644")
	w("directory mask", "0755")
	return b.String()
}

// StartSamba writes the configuration, sets the user's password in the
// private passdb and starts smbd in the foreground in a process group of
// its own (never --no-process-group: smbd would then kill its caller's
// whole group on SIGTERM). It returns once smbd accepts connections.
// Stop it with Stop.
func StartSamba(cfg SambaConfig) (*Samba, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	smbd, err := exec.LookPath("smbd")
	if err != nil {
		smbd, err = lookSbin("smbd")
	}
	if err != nil {
		return nil, ErrNoSamba
	}
	smbpasswd, err := exec.LookPath("smbpasswd")
	if err != nil {
		return nil, ErrNoSamba
	}
	addr := cfg.Addr
	if addr == "" {
		if addr, err = freeLoopbackPort(); err != nil {
			return nil, err
		}
	} else {
		// A port already taken would answer the readiness probe below
		// for smbd, which fails to bind.
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("samba: cannot listen on %s: %w", addr, unwrapOp(err))
		}
		l.Close()
	}
	cfg.NoXattrs = cfg.NoXattrs || !hasXattrs(cfg.Path)
	logf, err := makeStateDir(cfg, addr)
	if err != nil {
		return nil, fmt.Errorf("samba: %w", err)
	}
	defer logf.Close()
	conf := filepath.Join(cfg.Dir, "smb.conf")
	// The password goes on stdin, never on a command line.
	pw := exec.Command(smbpasswd, "-c", conf, "-a", "-s", cfg.User)
	pw.Stdin = strings.NewReader(cfg.Password + "\n" + cfg.Password + "\n")
	if out, err := pw.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("samba: smbpasswd -a %s: %v: %s", cfg.User, err, strings.TrimSpace(string(out)))
	}
	cmd := exec.Command(smbd, "--foreground", "--configfile="+conf, "--debuglevel=1")
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Dir = cfg.Dir
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("samba: starting smbd: %w", err)
	}
	s := &Samba{cfg: cfg, addr: addr, cmd: cmd, exited: make(chan struct{})}
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	deadline := time.Now().Add(cfg.StartTimeout)
	for {
		c, err := net.DialTimeout("tcp", s.DialAddr(), 200*time.Millisecond)
		if err == nil {
			c.Close()
			return s, nil
		}
		select {
		case <-s.exited:
			return nil, fmt.Errorf("samba: smbd exited at start (%v): %s", s.waitErr, s.logTail())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("samba: smbd does not listen on %s after %v: %s", addr, cfg.StartTimeout, s.logTail())
		}
	}
}

// makeStateDir creates cfg.Dir afresh (it must not exist: a directory
// someone else prepared is never reused), mode 0700, in a parent that is
// the caller's alone, with smbd's state subdirectories and smb.conf, and
// returns smbd's output file, created there. Every file and directory is
// made relative to its verified parent's descriptor and never through a
// symlink (see rundir): smbd, running as root, then writes only in
// directories no one else can change.
func makeStateDir(cfg SambaConfig, addr string) (*os.File, error) {
	parent, err := rundir.Open(filepath.Dir(cfg.Dir))
	if err != nil {
		return nil, err
	}
	defer parent.Close()
	dir, err := parent.Mkdir(filepath.Base(cfg.Dir), 0o700)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	var logDir *rundir.Dir
	for _, sub := range []string{"private", "run", "lock", "state", "cache", "ncalrpc", "usershares", "log"} {
		d, err := dir.Mkdir(sub, 0o700)
		if err != nil {
			return nil, err
		}
		if sub == "log" {
			logDir = d
			defer d.Close()
		} else {
			d.Close()
		}
	}
	if err := dir.WriteFile("smb.conf", []byte(SambaConf(cfg, addr)), 0o600); err != nil {
		return nil, err
	}
	return logDir.Create("smbd.out", 0o600)
}

// lookSbin finds a daemon in the sbin directories that a non-root PATH
// often lacks.
func lookSbin(name string) (string, error) {
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin"} {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// logTail returns the end of smbd's logs for error messages.
func (s *Samba) logTail() string {
	var all []byte
	for _, f := range []string{"log/smbd.out", "log/smbd.log"} {
		b, _ := os.ReadFile(filepath.Join(s.cfg.Dir, f))
		all = append(all, b...)
	}
	all = bytes.TrimSpace(all)
	if len(all) > 1500 {
		all = all[len(all)-1500:]
	}
	return string(all)
}

// Addr returns the HOST:PORT smbd listens on.
func (s *Samba) Addr() string { return s.addr }

// DialAddr returns a HOST:PORT of smbd that this host can connect to:
// Addr, or loopback at its port when smbd listens on every interface.
func (s *Samba) DialAddr() string {
	host, port, err := net.SplitHostPort(s.addr)
	if ip := net.ParseIP(host); err == nil && ip != nil && ip.IsUnspecified() {
		if ip.To4() != nil {
			return net.JoinHostPort("127.0.0.1", port)
		}
		return net.JoinHostPort("::1", port)
	}
	return s.addr
}

// Share returns the share's name.
func (s *Samba) Share() string { return s.cfg.Share }

// User returns the account allowed on the share.
func (s *Samba) User() string { return s.cfg.User }

// ConfigFile returns the path of the generated smb.conf (for smbclient -s).
func (s *Samba) ConfigFile() string { return filepath.Join(s.cfg.Dir, "smb.conf") }

// Pid returns smbd's process id.
func (s *Samba) Pid() int { return s.cmd.Process.Pid }

// Exited is closed when smbd has exited.
func (s *Samba) Exited() <-chan struct{} { return s.exited }

// URL returns the bench target address of the share, without password.
func (s *Samba) URL(dir string) string {
	u := "smb://" + s.cfg.User + "@" + s.DialAddr() + "/" + s.cfg.Share
	if dir != "" {
		u += "/" + strings.TrimPrefix(dir, "/")
	}
	return u
}

// Stop stops smbd: SIGTERM to smbd's process group (smbd, the
// per-connection children it forked and the RPC helpers it spawned; never
// the caller's group), SIGKILL to smbd after 10 s, and finally SIGKILL to
// whatever is left of its group. It is idempotent.
func (s *Samba) Stop() error {
	s.once.Do(func() {
		pid := s.cmd.Process.Pid
		signalGroup(pid, syscall.SIGTERM)
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
			s.stopErr = fmt.Errorf("samba: smbd (pid %d) ignored SIGTERM for 10 s and was killed", pid)
		}
		stopGroup(pid)
		// smbd starts samba-dcerpcd on demand (smbclient -L needs it); it
		// calls setsid too, so its group is another one. Its pid file is in
		// the private pid directory; the command line must name this
		// configuration, so that a stale pid file cannot make us signal a
		// stranger.
		files, _ := filepath.Glob(filepath.Join(s.cfg.Dir, "run", "*.pid"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			p, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err != nil || p <= 1 || p == pid {
				continue
			}
			cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "cmdline"))
			if err == nil && bytes.Contains(cmdline, []byte(s.ConfigFile())) {
				signalGroup(p, syscall.SIGTERM)
				stopGroup(p)
			}
		}
	})
	return s.stopErr
}

// stopGroup waits a moment for the processes of the group that pid led
// (which got SIGTERM) to exit, then kills the rest.
func stopGroup(pid int) {
	for i := 0; i < 200 && groupAlive(pid); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	signalGroup(pid, syscall.SIGKILL)
}

// freeLoopbackPort returns 127.0.0.1:PORT with a port that was free a
// moment ago.
func freeLoopbackPort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("samba: no free port: %w", err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr, nil
}
