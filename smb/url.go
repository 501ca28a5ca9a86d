package smb

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/nasemu/nasemu/bench"
)

// Usage is the address form of SMB targets, for messages.
const Usage = "smb://USER[:PASS]@HOST[:PORT]/SHARE[/DIR]"

// Config is a parsed SMB target address. The zero value of every optional
// field means its default.
type Config struct {
	// Host is HOST:PORT of the server (port 445 unless given).
	Host string
	// User is the account; Domain its NTLM domain ("DOMAIN;user" in the
	// URL), empty for a standalone server.
	User, Domain string
	// Password authenticates User. It is never printed: Redacted and
	// every error leave it out.
	Password string
	// HasPassword says the URL gave a password (possibly empty), so no
	// other source is asked.
	HasPassword bool
	// Share is the share's name; Dir a '/'-separated directory inside it
	// where the job files go ("" for the share's root). Dir must exist.
	Share, Dir string
	// DialTimeout bounds connecting, negotiating and authenticating
	// (default 10 s; URL query timeout=).
	DialTimeout time.Duration
	// IOTimeout is how long a request may wait for its reply before the
	// connection is declared dead (default 60 s; URL query iotimeout=).
	// A hung server thus ends the run with an error instead of a hang.
	IOTimeout time.Duration
	// MaxSessions caps the sessions (TCP connections) a target opens: the
	// files a run holds open at the same time (numjobs instances, several
	// files) each get a session of their own up to this number (default
	// 16; URL query sessions=; 1 puts everything on one session).
	MaxSessions int
}

// Defaults of Config.
const (
	DefaultPort        = 445
	DefaultDialTimeout = 10 * time.Second
	DefaultIOTimeout   = 60 * time.Second
	DefaultMaxSessions = 16
)

// Validate checks the configuration.
func (c Config) Validate() error {
	switch {
	case c.Host == "":
		return fmt.Errorf("%w: SMB address names no host (want %s)", bench.ErrTarget, Usage)
	case c.User == "":
		return fmt.Errorf("%w: SMB address names no user (want %s); go-smb2 does not support anonymous sessions", bench.ErrTarget, Usage)
	case c.Share == "":
		return fmt.Errorf("%w: SMB address names no share (want %s)", bench.ErrTarget, Usage)
	case c.DialTimeout < 0, c.IOTimeout < 0, c.MaxSessions < 0:
		return fmt.Errorf("%w: SMB timeouts and sessions must not be negative", bench.ErrTarget)
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.DialTimeout == 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.IOTimeout == 0 {
		c.IOTimeout = DefaultIOTimeout
	}
	if c.MaxSessions == 0 {
		c.MaxSessions = DefaultMaxSessions
	}
	return c
}

// Redacted returns the address without its password (and without query
// options): the target's name in reports and messages.
func (c Config) Redacted() string {
	user := c.User
	if c.Domain != "" {
		user = c.Domain + ";" + user
	}
	s := "smb://" + userEscaper.Replace(user) + "@" + c.Host + "/" + c.Share
	if c.Dir != "" {
		s += "/" + c.Dir
	}
	return s
}

// userEscaper escapes what would end the user part of an address.
var userEscaper = strings.NewReplacer("%", "%25", "@", "%40", ":", "%3A", "/", "%2F")

// ParseURL parses smb://[DOMAIN;]USER[:PASS]@HOST[:PORT]/SHARE[/DIR] with
// optional query options timeout=DURATION, iotimeout=DURATION and
// sessions=N. Special characters in the password must be percent-encoded.
// Errors wrap bench.ErrTarget and never contain the password.
func ParseURL(addr string) (Config, error) {
	var c Config
	u, err := url.Parse(addr)
	if err != nil {
		// url.Error repeats the whole address, password included: keep
		// only the reason.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return c, fmt.Errorf("%w: malformed SMB address (want %s): %v", bench.ErrTarget, Usage, err)
	}
	if !strings.EqualFold(u.Scheme, "smb") || u.Opaque != "" || u.Host == "" {
		return c, fmt.Errorf("%w: malformed SMB address (want %s)", bench.ErrTarget, Usage)
	}
	if u.User != nil {
		c.User = u.User.Username()
		c.Password, c.HasPassword = u.User.Password()
	}
	if d, usr, ok := strings.Cut(c.User, ";"); ok {
		c.Domain, c.User = d, usr
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = strconv.Itoa(DefaultPort)
	} else if p, err := strconv.Atoi(port); err != nil || p <= 0 || p > 65535 {
		return c, fmt.Errorf("%w: SMB address: bad port %q", bench.ErrTarget, port)
	}
	c.Host = net.JoinHostPort(host, port)
	p := strings.Trim(u.Path, "/")
	c.Share, c.Dir, _ = strings.Cut(p, "/")
	c.Dir = strings.Trim(c.Dir, "/")
	for k, vs := range u.Query() {
		v := vs[len(vs)-1]
		switch k {
		case "timeout", "iotimeout":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return c, fmt.Errorf("%w: SMB address: %s=%q is not a positive duration", bench.ErrTarget, k, v)
			}
			if k == "timeout" {
				c.DialTimeout = d
			} else {
				c.IOTimeout = d
			}
		case "sessions":
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return c, fmt.Errorf("%w: SMB address: sessions=%q is not a positive number", bench.ErrTarget, v)
			}
			c.MaxSessions = n
		default:
			return c, fmt.Errorf("%w: SMB address: unknown option %q (known: timeout, iotimeout, sessions)", bench.ErrTarget, k)
		}
	}
	return c, c.Validate()
}
