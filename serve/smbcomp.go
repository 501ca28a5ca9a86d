package serve

import (
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/smb"
)

// SMBCompensator keeps a share's SMB compensation up to date: it measures
// the host's round trip through smbd and the mount when started and every
// smbProbeEvery after, since the host's load (and with it the round trip)
// changes while a benchmark runs, and sets a CompClock to answer early by
// what of it FUSE's own compensation does not take off.
//
// The probes are 4 KiB reads of a hole of a probe file (smb.Prober),
// through go-smb2 on this host, the client of nasemu bench's smb://
// target: they charge nothing, and the share answers each a set wait
// after it arrives (fusefs.FS.SetProbeWait), so that each is timed as a
// request whose model time is that wait, at several waits
// (smbProbeWaits). The longer a client waits, the longer the round trip:
// after a long wait every thread on the path, the client's, smbd's and
// the share's, sleeps on a processor that has gone idle, and waking each
// costs more (see emu.EarlyTable). Each wait's figure is the mean of the
// middle half of its samples, less the wait and FUSE's own figure at that
// wait, capped at MaxSMBCompensation.
//
// A constant offset does not change what a pipelined job at queue depth
// moves (the model's reservations space the answers), only the latency of
// each request. What stays uncompensated is the per-byte host time of
// large requests, which the model's write-behind and read-ahead mostly
// hide, and the throughput of the host itself.
type SMBCompensator struct {
	p     *smb.Prober
	fs    ProbeFS
	clock *CompClock
	stop  chan struct{}
	done  chan struct{}
	last  atomic.Pointer[emu.EarlyTable] // the latest measurement, wall times
}

// ProbeFS is the share under smbd, as the compensator uses it
// (fusefs.FS).
type ProbeFS interface {
	// SetProbeWait makes the probe file's reads answer d after they
	// arrive.
	SetProbeWait(d time.Duration)
	// EarlyAt returns how early the share answers by itself a request
	// whose client waits wait.
	EarlyAt(wait time.Duration) time.Duration
}

// smbProbeWaits are the waits at which the round trip is measured, as the
// mount measures its own (fusefs).
var smbProbeWaits = []time.Duration{0, 250 * time.Microsecond, time.Millisecond, 4 * time.Millisecond}

const (
	smbProbeReads = 20 // at each wait
	smbProbeGap   = 300 * time.Microsecond
	smbProbeEvery = 2 * time.Second
	// MaxSMBCompensation caps the compensation: a host too loaded to
	// measure must not make the share answer far too early.
	MaxSMBCompensation = 400 * time.Microsecond
)

// StartSMBCompensator connects to the share srv serves (with password),
// measures once and sets clock, and goes on measuring until Stop. When the
// share cannot be probed, it logs a warning and compensates nothing.
func StartSMBCompensator(srv *smb.Samba, password string, fs ProbeFS, clock *CompClock, log *slog.Logger) *SMBCompensator {
	c := &SMBCompensator{fs: fs, clock: clock, stop: make(chan struct{}), done: make(chan struct{})}
	cfg, err := smb.ParseURL(srv.URL(""))
	if err == nil {
		cfg.Password, cfg.HasPassword = password, true
		c.p, err = smb.NewProber(cfg)
	}
	if err == nil {
		err = c.measure()
	}
	if err != nil {
		log.Warn("cannot measure the host's SMB round trip: not compensated", "err", err)
		if c.p != nil {
			c.p.Close()
			c.p = nil
		}
		close(c.done)
		return c
	}
	t := c.last.Load()
	log.Info("SMB round trip measured", "waits", t.Wait, "early", t.Early)
	go func() {
		defer close(c.done)
		t := time.NewTicker(smbProbeEvery)
		defer t.Stop()
		for {
			select {
			case <-c.stop:
				return
			case <-t.C:
				if err := c.measure(); err != nil {
					log.Warn("measuring the host's SMB round trip", "err", err)
				}
			}
		}
	}()
	return c
}

// measure measures the round trip at each wait once and sets the clock.
func (c *SMBCompensator) measure() error {
	defer c.fs.SetProbeWait(0)
	t := &emu.EarlyTable{}
	for _, w := range smbProbeWaits {
		c.fs.SetProbeWait(w)
		lat, err := c.p.RoundTrips(smbProbeReads, smbProbeGap)
		if err != nil {
			return err
		}
		t.Wait = append(t.Wait, w)
		t.Early = append(t.Early, emu.MiddleMean(lat)-w-c.fs.EarlyAt(w))
	}
	c.set(t)
	return nil
}

// set records a measurement (each figure capped) and sets the clock.
func (c *SMBCompensator) set(t *emu.EarlyTable) {
	for i, e := range t.Early {
		t.Early[i] = max(0, min(e, MaxSMBCompensation))
	}
	c.last.Store(t)
	c.clock.SetEarlyTable(t)
}

// RoundTrip returns the latest measurement (wall time) for a client that
// does not wait: the compensation of the shortest requests.
func (c *SMBCompensator) RoundTrip() time.Duration { return c.last.Load().At(0) }

// Stop ends the measurements and closes the prober (before smbd stops).
func (c *SMBCompensator) Stop() error {
	if c.p == nil {
		return nil
	}
	close(c.stop)
	<-c.done
	return c.p.Close()
}
