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
// each request.
//
// Large requests also take the host time per byte, to move their bytes
// between the client and the share: a write's before the share sees it,
// a read's after the share answers. The model's link moves the same bytes
// within the request's own time, so the host's time is taken off too
// (fusefs.FS.SetTransferEarly): the compensator times reads and writes of
// smb.ProbeTransfer bytes with 4 KiB reads between them (Prober.Transfers,
// answered at once), and the share answers each read or write earlier by
// the difference per MiB, capped at MaxTransferEarly. A client whose
// requests wait for one another (a copy's first write of each file, a
// single reader) otherwise pays it in series with the model's time. What
// stays uncompensated is the throughput of the host itself.
//
// Likewise smbd serves an SMB CREATE or CLOSE with a dozen calls into the
// share (lookups, attributes, extended attributes, a truncate) where the
// model charges one file operation. The compensator times the create and
// the close of a new probe file (Prober.FileOps, charged nothing), and the
// share answers opens and creates, and closes, earlier by what each takes
// beyond a read's round trip (fusefs.FS.SetFileOpEarly), capped at
// MaxFileOpEarly.
type SMBCompensator struct {
	p     *smb.Prober
	fs    ProbeFS
	clock *CompClock
	stop  chan struct{}
	done  chan struct{}
	last  atomic.Pointer[emu.EarlyTable] // the latest measurement, wall times
	// read and write are the latest transfer compensation per MiB (wall
	// nanoseconds).
	read, write atomic.Int64
	// open and close are the latest file operation compensation (wall
	// nanoseconds).
	open, close atomic.Int64
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
	// SetTransferEarly makes reads and writes answer earlier by read and
	// write per MiB they move.
	SetTransferEarly(read, write time.Duration)
	// SetFileOpEarly makes opens and creates answer earlier by open and
	// closes by close.
	SetFileOpEarly(open, close time.Duration)
	// ProbeName is the probe file's name in the share's root.
	ProbeName() string
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
	// smbProbeTransfers is how many rounds of Prober.Transfers each
	// measurement takes.
	smbProbeTransfers = 4
	// MaxTransferEarly caps the transfer compensation per MiB: 20 ms is a
	// host path of 50 MB/s, slower than any link worth emulating.
	MaxTransferEarly = 20 * time.Millisecond
	// smbProbeFileOps is how many rounds of Prober.FileOps each
	// measurement takes.
	smbProbeFileOps = 4
	// MaxFileOpEarly caps the file operation compensation.
	MaxFileOpEarly = 5 * time.Millisecond
)

// StartSMBCompensator connects to the share srv serves (with password),
// measures once and sets clock, and goes on measuring until Stop. When the
// share cannot be probed, it logs a warning and compensates nothing.
func StartSMBCompensator(srv *smb.Samba, password string, fs ProbeFS, clock *CompClock, log *slog.Logger) *SMBCompensator {
	c := &SMBCompensator{fs: fs, clock: clock, stop: make(chan struct{}), done: make(chan struct{})}
	cfg, err := smb.ParseURL(srv.URL(""))
	if err == nil {
		cfg.Password, cfg.HasPassword = password, true
		c.p, err = smb.NewProber(cfg, fs.ProbeName())
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
	r, w := c.Transfer()
	o, cl := c.FileOps()
	log.Info("SMB round trip measured", "waits", t.Wait, "early", t.Early, "read_per_MiB", r, "write_per_MiB", w, "open", o, "close", cl)
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
	c.fs.SetProbeWait(0)
	small, reads, writes, err := c.p.Transfers(smbProbeTransfers, smbProbeGap)
	if err != nil {
		return err
	}
	c.read.Store(int64(transferPerMiB(small, reads)))
	c.write.Store(int64(transferPerMiB(small, writes)))
	c.fs.SetTransferEarly(c.Transfer())
	small, creates, closes, err := c.p.FileOps(smbProbeFileOps, smbProbeGap)
	if err != nil {
		return err
	}
	c.open.Store(int64(fileOpEarly(small, creates)))
	c.close.Store(int64(fileOpEarly(small, closes)))
	c.fs.SetFileOpEarly(c.FileOps())
	c.set(t)
	return nil
}

// transferPerMiB returns the host's time per MiB moved, from the round
// trips of 4 KiB reads (small) and of smb.ProbeTransfer bytes (big),
// capped at MaxTransferEarly and never below zero.
func transferPerMiB(small, big []time.Duration) time.Duration {
	d := float64(emu.MiddleMean(big)-emu.MiddleMean(small)) * (1 << 20) / (smb.ProbeTransfer - 4096)
	return max(0, min(time.Duration(d), MaxTransferEarly))
}

// fileOpEarly returns the host's time for a file operation beyond a
// read's round trip, from the round trips of 4 KiB reads (small) and of
// the operation (ops), capped at MaxFileOpEarly and never below zero.
func fileOpEarly(small, ops []time.Duration) time.Duration {
	return max(0, min(emu.MiddleMean(ops)-emu.MiddleMean(small), MaxFileOpEarly))
}

// FileOps returns the latest file operation compensation (wall time) of
// opens and creates and of closes.
func (c *SMBCompensator) FileOps() (open, close time.Duration) {
	return time.Duration(c.open.Load()), time.Duration(c.close.Load())
}

// Transfer returns the latest transfer compensation per MiB (wall time)
// of reads and of writes.
func (c *SMBCompensator) Transfer() (read, write time.Duration) {
	return time.Duration(c.read.Load()), time.Duration(c.write.Load())
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
