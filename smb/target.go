package smb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path"
	"sync"
	"sync/atomic"
	"time"

	smb2 "github.com/hirochachacha/go-smb2"

	"github.com/nasemu/nasemu/bench"
	"github.com/nasemu/nasemu/models"
)

// NT status codes that mean bad input rather than a failure.
const (
	statusLogonFailure     = 0xC000006D
	statusAccountRestrict  = 0xC000006E
	statusPasswordExpired  = 0xC0000071
	statusAccountDisabled  = 0xC0000072
	statusBadNetworkName   = 0xC00000CC
	statusAccessDenied     = 0xC0000022
	statusWrongPassword    = 0xC000006A
	statusNoSuchUser       = 0xC0000064
	statusAccountLockedOut = 0xC0000234
)

// Factory returns the factory of smb:// targets, with passwords from
// DefaultPassword.
func Factory() bench.Factory { return FactoryWith(DefaultPassword) }

// FactoryWith returns the factory of smb:// targets asking src for a
// password the address does not carry.
func FactoryWith(src PasswordSource) bench.Factory {
	return bench.Factory{Scheme: "smb", Usage: Usage, Open: func(addr, _ string, _ bench.OpenOptions) (bench.Target, error) {
		c, err := ParseURL(addr)
		if err != nil {
			return nil, err
		}
		if err := resolvePassword(&c, src); err != nil {
			return nil, err
		}
		return Open(c)
	}}
}

// Target is an SMB share as a bench target, in wall-clock time, through
// go-smb2 (dialects 2.0.2 to 3.1.1, NTLM authentication).
//
// Concurrency: go-smb2's ReadAt and WriteAt are synchronous per call but
// safe to call from several goroutines on one session; each call borrows
// credits (one per 64 KiB) from the session's balance and requests are
// pipelined on the connection, so iodepth slots of a job keep iodepth
// requests outstanding as long as the server grants the credits (the
// balance is raised to 512, Samba grants up to 8192). Job instances
// (numjobs) and files held open at the same time get sessions of their
// own, each on its own TCP connection, up to Config.MaxSessions: that is
// what spreads them over smbd's per-connection processes, as several
// clients (or SMB multichannel) would.
//
// Direct I/O: go-smb2 keeps no client cache, so with direct=1 every read
// and write reaches the server when the job issues it; the server's own
// cache is the server's business, as it is for a Windows client. A file
// opened buffered is cached as the Windows client caches it (cachedFile).
type Target struct {
	cfg   Config
	clock *bench.WallClock

	mu       sync.Mutex
	sessions []*session
	dirs     map[string]bool // directories known to exist
	closed   bool

	fillOnce sync.Once
	fill     []byte // layout data
}

var (
	_ bench.Target    = (*Target)(nil)
	_ bench.Describer = (*Target)(nil)
)

// session is one authenticated SMB session with the share mounted.
type session struct {
	conn  *watchConn
	sess  *smb2.Session
	share *smb2.Share
	open  int // files open through it (guarded by Target.mu)
	// dead is set once the connection is lost or timed out: closing
	// the files still open on it then is moot (the server dropped them)
	// and would only repeat the error.
	dead atomic.Bool
}

// Open connects to the share described by c (Password set) and checks
// the directory. A wrong password, an unknown share or a missing
// directory is an error wrapping bench.ErrTarget; a server that cannot be
// reached or does not answer within the dial timeout is a plain error.
func Open(c Config) (*Target, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	t := &Target{cfg: c.withDefaults(), clock: bench.NewWallClock(), dirs: map[string]bool{"": true}}
	s, err := t.dial()
	if err != nil {
		return nil, err
	}
	t.sessions = append(t.sessions, s)
	if t.cfg.Dir != "" {
		fi, err := t.stat(s, t.cfg.Dir)
		switch {
		case err != nil:
			t.Close()
			return nil, t.classify("directory "+t.cfg.Dir, err)
		case !fi.IsDir():
			t.Close()
			return nil, fmt.Errorf("%w: %s: %s is not a directory", bench.ErrTarget, t.Name(), t.cfg.Dir)
		}
	}
	return t, nil
}

// dial opens a new session: TCP connect, negotiate, NTLM session setup,
// tree connect, all within the dial timeout.
func (t *Target) dial() (*session, error) {
	c := t.cfg
	d := net.Dialer{Timeout: c.DialTimeout}
	raw, err := d.Dial("tcp", c.Host)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return nil, fmt.Errorf("smb: cannot connect to %s: no answer within %v", c.Host, c.DialTimeout)
		}
		return nil, fmt.Errorf("smb: cannot connect to %s: %w", c.Host, unwrapOp(err))
	}
	conn := &watchConn{Conn: raw, timeout: c.IOTimeout}
	// Negotiation and authentication under the dial timeout: a port that
	// accepts but never answers (not an SMB server, or a hung one) ends
	// here instead of hanging.
	raw.SetDeadline(time.Now().Add(c.DialTimeout))
	ctx, cancel := context.WithTimeout(context.Background(), c.DialTimeout)
	defer cancel()
	dialer := &smb2.Dialer{
		MaxCreditBalance: 512,
		Initiator:        &smb2.NTLMInitiator{User: c.User, Password: c.Password, Domain: c.Domain},
	}
	sess, err := dialer.DialContext(ctx, conn)
	if err != nil {
		raw.Close()
		return nil, t.classify("session setup", err)
	}
	share, err := sess.Mount(c.Share)
	if err != nil {
		sess.Logoff()
		raw.Close()
		return nil, t.classify("share "+c.Share, err)
	}
	raw.SetDeadline(time.Time{})
	return &session{conn: conn, sess: sess, share: share}, nil
}

// classify turns a go-smb2 error into a message naming what failed,
// wrapping bench.ErrTarget where the address or the credentials are
// wrong. Messages never contain the password.
func (t *Target) classify(what string, err error) error {
	var re *smb2.ResponseError
	if errors.As(err, &re) {
		switch re.Code {
		case statusLogonFailure, statusWrongPassword, statusNoSuchUser:
			return fmt.Errorf("%w: %s: authentication failed for user %q: wrong user name or password", bench.ErrTarget, t.Name(), t.cfg.User)
		case statusAccountRestrict, statusPasswordExpired, statusAccountDisabled, statusAccountLockedOut:
			return fmt.Errorf("%w: %s: the server refuses user %q: %v", bench.ErrTarget, t.Name(), t.cfg.User, err)
		case statusBadNetworkName:
			return fmt.Errorf("%w: %s: the server has no share %q", bench.ErrTarget, t.Name(), t.cfg.Share)
		case statusAccessDenied:
			return fmt.Errorf("%w: %s: %s: access denied", bench.ErrTarget, t.Name(), what)
		}
	}
	switch {
	case errors.Is(err, os.ErrPermission):
		return fmt.Errorf("%w: %s: %s: access denied", bench.ErrTarget, t.Name(), what)
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%w: %s: %s does not exist", bench.ErrTarget, t.Name(), what)
	case isTimeout(err):
		return fmt.Errorf("smb: %s: %s: no reply within the timeout (a hung server, or not an SMB server)", t.Name(), what)
	}
	var te *smb2.TransportError
	if errors.As(err, &te) {
		return fmt.Errorf("smb: %s: %s: connection lost: %v", t.Name(), what, unwrapOp(te.Err))
	}
	return fmt.Errorf("smb: %s: %s: %w", t.Name(), what, err)
}

// isTimeout reports a deadline or context timeout anywhere in err,
// including inside go-smb2's TransportError (which does not unwrap).
func isTimeout(err error) bool {
	var te *smb2.TransportError
	if errors.As(err, &te) {
		err = te.Err
	}
	var ne interface{ Timeout() bool }
	return errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// unwrapOp drops net.OpError's repetition of the addresses.
func unwrapOp(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err
	}
	return err
}

// Name implements bench.Target: the address without the password.
func (t *Target) Name() string { return t.cfg.Redacted() }

// Description implements bench.Describer.
func (t *Target) Description() string {
	return fmt.Sprintf("SMB share %s on %s as %s (go-smb2, up to %d sessions)", t.cfg.Share, t.cfg.Host, t.cfg.User, t.cfg.MaxSessions)
}

// Mode implements bench.Target.
func (t *Target) Mode() bench.Mode { return bench.Real }

// Clock implements bench.Target.
func (t *Target) Clock() bench.Clock { return t.clock }

// Sessions returns the number of sessions opened so far.
func (t *Target) Sessions() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.sessions)
}

// Close implements bench.Target: it logs off every session.
func (t *Target) Close() error {
	t.mu.Lock()
	ss := t.sessions
	t.sessions, t.closed = nil, true
	t.mu.Unlock()
	for _, s := range ss {
		s.conn.begin()
		s.share.Umount()
		s.sess.Logoff()
		s.conn.end()
		s.conn.Close()
	}
	return nil
}

// path returns the share-relative path of a job file.
func (t *Target) path(name string) string {
	if t.cfg.Dir == "" {
		return path.Clean(name)
	}
	return path.Join(t.cfg.Dir, name)
}

// first returns the session used for untimed work (layout, removal).
func (t *Target) first() (*session, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed || len(t.sessions) == 0 {
		return nil, fmt.Errorf("smb: %s: target closed", t.Name())
	}
	return t.sessions[0], nil
}

// acquire returns the session for a newly opened file: an idle session
// if there is one, else a new one while under MaxSessions, else the least
// busy. It counts the file against the session.
func (t *Target) acquire() (*session, error) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil, fmt.Errorf("smb: %s: target closed", t.Name())
	}
	var best *session
	for _, s := range t.sessions {
		if best == nil || s.open < best.open {
			best = s
		}
	}
	if best != nil && (best.open == 0 || len(t.sessions) >= t.cfg.MaxSessions) {
		best.open++
		t.mu.Unlock()
		return best, nil
	}
	t.mu.Unlock()
	// Dial outside the lock: other opens go on meanwhile.
	s, err := t.dial()
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		s.conn.Close()
		return nil, fmt.Errorf("smb: %s: target closed", t.Name())
	}
	if len(t.sessions) >= t.cfg.MaxSessions { // others dialled meanwhile
		s.conn.Close()
		best = t.sessions[0]
		for _, o := range t.sessions {
			if o.open < best.open {
				best = o
			}
		}
		best.open++
		return best, nil
	}
	s.open++
	t.sessions = append(t.sessions, s)
	return s, nil
}

func (t *Target) release(s *session) {
	t.mu.Lock()
	s.open--
	t.mu.Unlock()
}

func (t *Target) stat(s *session, p string) (os.FileInfo, error) {
	s.conn.begin()
	defer s.conn.end()
	return s.share.Stat(p)
}

// mkdirs makes sure the parent directories of p exist.
func (t *Target) mkdirs(s *session, p string) error {
	dir := path.Dir(p)
	if dir == "." {
		dir = ""
	}
	t.mu.Lock()
	known := t.dirs[dir]
	t.mu.Unlock()
	if known {
		return nil
	}
	s.conn.begin()
	err := s.share.MkdirAll(dir, 0o755)
	s.conn.end()
	if err != nil {
		return t.classify("mkdir "+dir, err)
	}
	t.mu.Lock()
	t.dirs[dir] = true
	t.mu.Unlock()
	return nil
}

const layoutChunk = 1 << 20

// Layout implements bench.Target: files are created (and with fill
// written in 1 MiB requests) through the first session, untimed.
func (t *Target) Layout(name string, size int64, fill bool) (int64, error) {
	if size == 0 {
		return 0, fmt.Errorf("%w: %s is a directory: the job needs size= or filesize=", bench.ErrJob, t.Name())
	}
	s, err := t.first()
	if err != nil {
		return 0, err
	}
	p := t.path(name)
	have := int64(0)
	if fi, err := t.stat(s, p); err == nil {
		have = fi.Size()
	} else if !errors.Is(err, os.ErrNotExist) {
		return 0, t.classify("stat "+p, err)
	}
	if have >= size {
		return size, nil
	}
	if err := t.mkdirs(s, p); err != nil {
		return 0, err
	}
	s.conn.begin()
	f, err := s.share.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	s.conn.end()
	if err != nil {
		return 0, t.classify("laying out "+p, err)
	}
	defer func() {
		s.conn.begin()
		f.Close()
		s.conn.end()
	}()
	if !fill {
		s.conn.begin()
		err := f.Truncate(size)
		s.conn.end()
		if err != nil {
			return 0, t.classify("laying out "+p, err)
		}
		return size, nil
	}
	buf := t.fillBuffer()
	for off := have; off < size; {
		n := min(int64(len(buf)), size-off)
		s.conn.begin()
		_, err := f.WriteAt(buf[:n], off)
		s.conn.end()
		if err != nil {
			return 0, t.classify("laying out "+p, err)
		}
		off += n
	}
	s.conn.begin()
	err = f.Sync()
	s.conn.end()
	if err != nil {
		return 0, t.classify("laying out "+p, err)
	}
	return size, nil
}

// fillBuffer returns the layout's data: 1 MiB of random bytes, made once
// per target (a copy suite lays out thousands of small files).
func (t *Target) fillBuffer() []byte {
	t.fillOnce.Do(func() {
		t.fill = make([]byte, layoutChunk)
		rng := rand.New(rand.NewPCG(0x5b3, 0x1a7))
		for i := 0; i+8 <= len(t.fill); i += 8 {
			v := rng.Uint64()
			for k := range 8 {
				t.fill[i+k] = byte(v >> (8 * k))
			}
		}
	})
	return t.fill
}

// Open implements bench.Target. With Create the file is created or
// truncated as a file manager's copy does (parent directories are made
// first, untimed but once per directory).
func (t *Target) Open(at time.Duration, name string, size int64, flags bench.OpenFlags) (bench.File, time.Duration, error) {
	s, err := t.acquire()
	if err != nil {
		return nil, t.clock.Now(), err
	}
	p := t.path(name)
	mode := os.O_RDONLY
	if flags.Write {
		mode = os.O_RDWR
	}
	if flags.Create {
		mode = os.O_RDWR | os.O_CREATE | os.O_TRUNC
		if err := t.mkdirs(s, p); err != nil {
			t.release(s)
			return nil, t.clock.Now(), err
		}
	}
	s.conn.begin()
	f, err := s.share.OpenFile(p, mode, 0o644)
	s.conn.end()
	if err != nil {
		t.release(s)
		return nil, t.clock.Now(), t.classify("open "+p, err)
	}
	bf := &file{t: t, s: s, f: f, path: p}
	if flags.Direct {
		return bf, t.clock.Now(), nil
	}
	// Buffered: cached as the Windows client caches it; a file it creates
	// gets its size first, as Explorer's copy engine sets the end of file
	// to the source's size before it writes (proto's Create).
	if flags.Create && size > 0 {
		s.conn.begin()
		err := f.Truncate(size)
		s.conn.end()
		if err != nil {
			bf.Close(0)
			return nil, t.clock.Now(), t.classify("set the size of "+p, err)
		}
	}
	return newCachedFile(bf, size), t.clock.Now(), nil
}

// Remove implements bench.Target.
func (t *Target) Remove(at time.Duration, name string) (time.Duration, error) {
	s, err := t.first()
	if err != nil {
		return t.clock.Now(), err
	}
	p := t.path(name)
	s.conn.begin()
	err = s.share.Remove(p)
	s.conn.end()
	if err != nil {
		return t.clock.Now(), t.classify("remove "+p, err)
	}
	return t.clock.Now(), nil
}

// file is a file open on one session; its methods are safe for
// concurrent use (iodepth slots).
type file struct {
	t    *Target
	s    *session
	f    *smb2.File
	path string
}

// Do implements bench.File.
func (f *file) Do(_ time.Duration, op models.Op, off, n int64, buf []byte) (time.Duration, error) {
	c := f.s.conn
	c.begin()
	var err error
	switch op {
	case models.Read:
		var k int
		k, err = f.f.ReadAt(buf, off)
		if err == nil && int64(k) < n || err == io.EOF {
			err = fmt.Errorf("end of file at %d", off+int64(k))
		}
	case models.Write:
		_, err = f.f.WriteAt(buf, off)
	case models.Flush:
		err = f.f.Sync()
	default:
		err = fmt.Errorf("%w: %v on an SMB file", models.ErrInvalid, op)
	}
	c.end()
	if err != nil {
		f.s.check(err)
		return f.t.clock.Now(), f.t.classify(fmt.Sprintf("%v %s [%d, +%d)", op, f.path, off, n), err)
	}
	return f.t.clock.Now(), nil
}

// Close implements bench.File.
func (f *file) Close(time.Duration) (time.Duration, error) {
	c := f.s.conn
	defer f.t.release(f.s)
	if f.s.dead.Load() {
		return f.t.clock.Now(), nil
	}
	c.begin()
	err := f.f.Close()
	c.end()
	if err != nil {
		f.s.check(err)
		return f.t.clock.Now(), f.t.classify("close "+f.path, err)
	}
	return f.t.clock.Now(), nil
}

// check marks the session dead when err says its connection is gone.
func (s *session) check(err error) {
	var te *smb2.TransportError
	if errors.As(err, &te) || isTimeout(err) {
		s.dead.Store(true)
	}
}

// watchConn is a session's TCP connection with a watchdog: while requests
// are outstanding the connection has a deadline IOTimeout ahead, pushed
// back by every request that starts or completes. A server that stops
// answering thus breaks the connection after IOTimeout, and go-smb2 fails
// every outstanding request, instead of hanging forever; an idle session
// has no deadline.
type watchConn struct {
	net.Conn
	timeout time.Duration
	mu      sync.Mutex
	busy    int
}

func (c *watchConn) begin() {
	c.mu.Lock()
	c.busy++
	c.Conn.SetDeadline(time.Now().Add(c.timeout))
	c.mu.Unlock()
}

func (c *watchConn) end() {
	c.mu.Lock()
	c.busy--
	if c.busy == 0 {
		c.Conn.SetDeadline(time.Time{})
	} else {
		c.Conn.SetDeadline(time.Now().Add(c.timeout))
	}
	c.mu.Unlock()
}
