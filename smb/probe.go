package smb

import (
	"fmt"
	"os"
	"strconv"
	"time"

	smb2 "github.com/hirochachacha/go-smb2"
)

// ProbeName is the prefix of the name (in the share's root, followed by
// the process id) of the file a Prober reads; Close removes it.
const ProbeName = ".nasemu-probe-"

// Prober times requests that reach an SMB server but, on an emulated share
// (nasemu nas), charge nothing: 4 KiB reads of a file that is one hole (no
// blocks, so the share charges no data read), opened read-only and read at
// the same offset; the share answers them after a wait it is told
// (fusefs.FS.SetProbeWait). It holds one session and the open file until
// Close. Creating, opening, closing and removing the file are file
// operations the share charges (four in a Prober's life).
type Prober struct {
	t    *Target
	s    *session
	f    *smb2.File
	name string
	buf  []byte
}

// NewProber connects to the share and opens the probe file.
func NewProber(c Config) (*Prober, error) {
	t, err := Open(c)
	if err != nil {
		return nil, err
	}
	p := &Prober{t: t, name: t.path(ProbeName + strconv.Itoa(os.Getpid())), buf: make([]byte, 4096)}
	if p.s, err = t.first(); err != nil {
		t.Close()
		return nil, err
	}
	f, err := p.s.share.Create(p.name)
	if err == nil {
		err = f.Truncate(64 << 10)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		p.f, err = p.s.share.Open(p.name)
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
		time.Sleep(gap)
		p.s.conn.begin()
		start := time.Now()
		k, err := p.f.ReadAt(p.buf, 0)
		lat[i] = time.Since(start)
		p.s.conn.end()
		if err != nil || k != len(p.buf) {
			return nil, fmt.Errorf("smb: probe read: %d bytes: %w", k, err)
		}
	}
	return lat, nil
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
