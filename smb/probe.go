package smb

import (
	"fmt"
	"os"
	"strings"
	"time"

	smb2 "github.com/hirochachacha/go-smb2"
)

// ProbeName is the prefix of the name (in the share's root) of the file a
// Prober reads; Close removes it.
const ProbeName = ".nasemu-probe-"

// Prober times requests that reach an SMB server but, on an emulated share
// (nasemu nas), charge nothing: reads of a file that is one hole (no
// blocks, so the share charges no data read), read at the same offset,
// and writes to it, which the share discards (the file stays a hole); the
// share answers them after a wait it is told (fusefs.FS.SetProbeWait).
// Creating, opening, closing and removing probe files charge nothing
// either. It holds one session and the open file until Close.
type Prober struct {
	t    *Target
	s    *session
	f    *smb2.File
	name string
	buf  []byte
	big  []byte // ProbeTransfer bytes
}

// ProbeTransfer is the size of the reads and writes with which Transfers
// times the host's time per byte.
const ProbeTransfer = 1 << 20

// NewProber connects to the share and opens the probe file, name in the
// share's root (an emulated share's fusefs.ProbeName); its second file,
// for FileOps, is name followed by "-f".
func NewProber(c Config, name string) (*Prober, error) {
	t, err := Open(c)
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(name, ProbeName) || strings.ContainsAny(name, `/\`) {
		t.Close()
		return nil, fmt.Errorf("smb: probe file %q: not a name starting with %s", name, ProbeName)
	}
	p := &Prober{t: t, name: t.path(name), buf: make([]byte, 4096)}
	if p.s, err = t.first(); err != nil {
		t.Close()
		return nil, err
	}
	f, err := p.s.share.Create(p.name)
	if err == nil {
		err = f.Truncate(ProbeTransfer)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		p.f, err = p.s.share.OpenFile(p.name, os.O_RDWR, 0)
	}
	if err == nil {
		_, err = p.f.ReadAt(p.buf, 0)
	}
	if err != nil {
		p.Close()
		return nil, t.classify("probe "+p.name, err)
	}
	return p, nil
}

// RoundTrips times n reads, spaced gap apart, so that each finds the
// server's threads asleep, as a client's next request does after a
// modelled wait. It returns the samples in order.
func (p *Prober) RoundTrips(n int, gap time.Duration) ([]time.Duration, error) {
	lat := make([]time.Duration, n)
	for i := range lat {
		var err error
		if lat[i], err = p.timed(gap, func() error { return p.read(p.buf) }); err != nil {
			return nil, err
		}
	}
	return lat, nil
}

// Transfers times n rounds, spaced gap apart, of a 4 KiB read, a read of
// ProbeTransfer bytes and a write of as many, each answered at once (the
// share's probe wait 0): what the larger ones take longer is the host's
// time to move their bytes between this client and the share. It returns
// the samples of each kind in order.
func (p *Prober) Transfers(n int, gap time.Duration) (small, reads, writes []time.Duration, err error) {
	if p.big == nil {
		p.big = make([]byte, ProbeTransfer)
	}
	small, reads, writes = make([]time.Duration, n), make([]time.Duration, n), make([]time.Duration, n)
	write := func() error {
		if k, err := p.f.WriteAt(p.big, 0); err != nil || k != len(p.big) {
			return fmt.Errorf("smb: probe write: %d bytes: %w", k, err)
		}
		return nil
	}
	for i := range n {
		if small[i], err = p.timed(gap, func() error { return p.read(p.buf) }); err != nil {
			return nil, nil, nil, err
		}
		if reads[i], err = p.timed(gap, func() error { return p.read(p.big) }); err != nil {
			return nil, nil, nil, err
		}
		if writes[i], err = p.timed(gap, write); err != nil {
			return nil, nil, nil, err
		}
	}
	return small, reads, writes, nil
}

// FileOps times n rounds, spaced gap apart, of a 4 KiB read, the create
// of a new probe file (an SMB CREATE that overwrites if it exists, as a
// copy's) and its close; each file is removed, untimed, before the next.
// It returns the samples of each kind in order.
func (p *Prober) FileOps(n int, gap time.Duration) (small, creates, closes []time.Duration, err error) {
	small, creates, closes = make([]time.Duration, n), make([]time.Duration, n), make([]time.Duration, n)
	name := p.name + "-f"
	for i := range n {
		if small[i], err = p.timed(gap, func() error { return p.read(p.buf) }); err != nil {
			return nil, nil, nil, err
		}
		var f *smb2.File
		if creates[i], err = p.timed(gap, func() (err error) {
			f, err = p.s.share.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o644)
			return err
		}); err != nil {
			return nil, nil, nil, fmt.Errorf("smb: probe create: %w", err)
		}
		if closes[i], err = p.timed(gap, f.Close); err != nil {
			return nil, nil, nil, fmt.Errorf("smb: probe close: %w", err)
		}
		if _, err = p.timed(0, func() error { return p.s.share.Remove(name) }); err != nil {
			return nil, nil, nil, fmt.Errorf("smb: probe remove: %w", err)
		}
	}
	return small, creates, closes, nil
}

// timed sleeps gap, so that the request finds the server's threads
// asleep, and times do.
func (p *Prober) timed(gap time.Duration, do func() error) (time.Duration, error) {
	time.Sleep(gap)
	p.s.conn.begin()
	defer p.s.conn.end()
	start := time.Now()
	err := do()
	return time.Since(start), err
}

// read reads len(b) bytes of the probe file at 0.
func (p *Prober) read(b []byte) error {
	if k, err := p.f.ReadAt(b, 0); err != nil || k != len(b) {
		return fmt.Errorf("smb: probe read: %d bytes: %w", k, err)
	}
	return nil
}

// Close closes and removes the probe file and logs off.
func (p *Prober) Close() error {
	if p.f != nil {
		p.f.Close()
	}
	err := p.s.share.Remove(p.name)
	p.t.Close()
	return err
}
