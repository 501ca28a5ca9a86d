package serve

import (
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/nasemu/nasemu/smb"
)

// SMBCompensator keeps a share's SMB compensation up to date: it measures
// the host's SMB round trip without FUSE's part when started and every
// smbProbeEvery after, since the host's load (and with it the round trip)
// changes while a benchmark runs, and sets a CompClock to answer that much
// early. Each measurement is the trimmed mean of smbProbeReads 4 KiB reads
// that reach smbd but not the model (smb.Prober: a hole of a probe file,
// read again from the host's page cache, so FUSE is not on their path
// either), through go-smb2 on this host, the client of nasemu bench's
// smb:// target; it is capped at MaxSMBCompensation.
//
// A constant offset does not change what a pipelined job at queue depth
// moves (the model's reservations space the answers), only the latency of
// each request. What stays uncompensated is the per-byte host time of
// large requests, which the model's write-behind and read-ahead mostly
// hide, and the throughput of the host itself.
type SMBCompensator struct {
	p     *smb.Prober
	clock *CompClock
	stop  chan struct{}
	done  chan struct{}
	last  atomic.Int64 // the latest measurement, wall nanoseconds
}

const (
	smbProbeReads, smbProbeTrim = 50, 5
	smbProbeGap                 = 300 * time.Microsecond
	smbProbeEvery               = 2 * time.Second
	// MaxSMBCompensation caps the compensation: a host too loaded to
	// measure must not make the share answer far too early.
	MaxSMBCompensation = 400 * time.Microsecond
)

// StartSMBCompensator connects to the share srv serves (with password),
// measures once and sets clock, and goes on measuring until Stop. When the
// share cannot be probed, it logs a warning and compensates nothing.
func StartSMBCompensator(srv *smb.Samba, password string, clock *CompClock, log *slog.Logger) *SMBCompensator {
	c := &SMBCompensator{clock: clock, stop: make(chan struct{}), done: make(chan struct{})}
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

// measure measures the round trip once and sets the clock.
func (c *SMBCompensator) measure() error {
	lat, err := c.p.RoundTrips(smbProbeReads, smbProbeGap)
	if err != nil {
		return err
	}
	c.set(trimmedMean(lat, smbProbeTrim))
	return nil
}

// set records a measurement (capped) and sets the clock.
func (c *SMBCompensator) set(rt time.Duration) {
	rt = min(rt, MaxSMBCompensation)
	c.last.Store(int64(rt))
	c.clock.SetEarly(rt)
}

// trimmedMean is the mean of lat without its trim smallest and trim
// largest values (lat is sorted in place).
func trimmedMean(lat []time.Duration, trim int) time.Duration {
	slices.Sort(lat)
	kept := lat[trim : len(lat)-trim]
	var sum time.Duration
	for _, d := range kept {
		sum += d
	}
	return sum / time.Duration(len(kept))
}

// RoundTrip returns the latest measurement (wall time).
func (c *SMBCompensator) RoundTrip() time.Duration { return time.Duration(c.last.Load()) }

// Stop ends the measurements and closes the prober (before smbd stops).
func (c *SMBCompensator) Stop() error {
	if c.p == nil {
		return nil
	}
	close(c.stop)
	<-c.done
	return c.p.Close()
}
