package bench

import (
	"time"

	"github.com/nasemu/nasemu/models"
)

// DiskUtil is one device's entry of fio's disk_util: what the device
// under the target did over the run, in /proc/diskstats' terms. Ticks are
// milliseconds: read_ticks and write_ticks the time requests of each
// direction spent in the device (summed over requests), in_queue that of
// all requests, util the share of the run the device had a request in
// flight (fio's io_ticks over the run's length), in per cent.
type DiskUtil struct {
	Name         string  `json:"name"`
	ReadIOs      int64   `json:"read_ios"`
	WriteIOs     int64   `json:"write_ios"`
	ReadSectors  int64   `json:"read_sectors"`
	WriteSectors int64   `json:"write_sectors"`
	ReadMerges   int64   `json:"read_merges"`
	WriteMerges  int64   `json:"write_merges"`
	ReadTicks    int64   `json:"read_ticks"`
	WriteTicks   int64   `json:"write_ticks"`
	InQueue      int64   `json:"in_queue"`
	Util         float64 `json:"util"`
	// AggrUtil is, as fio's for a device over several (md, dm), the
	// busiest of the devices below: on a sim: target with more than one
	// drive, the highest utilisation of a drive's resources in the
	// model's busy-time accounting over the run.
	AggrUtil *float64 `json:"aggr_util,omitempty"`
}

// diskCounters are a device's cumulative statistics at one moment.
type diskCounters struct {
	name                 string
	ios, sectors, merges [2]int64
	ticks                [2]int64 // ms
	ioTicks, inQueue     int64    // ms
	at                   time.Duration
}

// diskStater is a target that can read the statistics of the device it
// lies on (a block device's /sys/block stat; a model's own), false where
// there is none (tmpfs, a network share).
type diskStater interface {
	diskStats() ([]diskCounters, bool)
}

// diskUtil returns the entries of the statistics between before and after.
func diskUtil(before, after []diskCounters) []DiskUtil {
	var out []DiskUtil
	for i, a := range after {
		if i >= len(before) || before[i].name != a.name {
			return nil
		}
		b := before[i]
		d := DiskUtil{Name: a.name,
			ReadIOs: a.ios[0] - b.ios[0], WriteIOs: a.ios[1] - b.ios[1],
			ReadSectors: a.sectors[0] - b.sectors[0], WriteSectors: a.sectors[1] - b.sectors[1],
			ReadMerges: a.merges[0] - b.merges[0], WriteMerges: a.merges[1] - b.merges[1],
			ReadTicks: a.ticks[0] - b.ticks[0], WriteTicks: a.ticks[1] - b.ticks[1],
			InQueue: a.inQueue - b.inQueue}
		if ms := (a.at - b.at).Milliseconds(); ms > 0 {
			d.Util = min(100, 100*float64(a.ioTicks-b.ioTicks)/float64(ms))
		}
		out = append(out, d)
	}
	return out
}

// simDisk counts what a Sim's device was asked, as a block device's
// statistics count it: the requests the host would see of the device the
// setup is (its protocol's, for a NAS).
type simDisk struct {
	ios, sectors    [2]int64
	ticks           [2]time.Duration
	inQueue         time.Duration
	ioTicks         time.Duration // time with a request in flight
	busyUntil, last time.Duration
}

// add counts a request of direction d (0 read, 1 write) of n bytes issued
// at at and done at done. The union of the requests' intervals is the
// device's busy time; the virtual clock issues in time order.
func (s *simDisk) add(d int, n int64, at, done time.Duration) {
	s.ios[d]++
	s.sectors[d] += (n + 511) / 512
	s.ticks[d] += done - at
	s.inQueue += done - at
	at = max(at, s.busyUntil)
	if done > at {
		s.ioTicks += done - at
		s.busyUntil = done
	}
}

// diskStats implements diskStater: the setup's device, and the busiest
// drive below it in the model's accounting when there are several.
func (s *Sim) diskStats() ([]diskCounters, bool) {
	if v, ok := s.dev.(validDataSetter); ok && !v.SetsValidData() {
		return nil, false // a file share (SMB): no block device, as in fio
	}
	now := s.clock.Now()
	d := &s.disk
	c := diskCounters{name: s.name, ios: d.ios, sectors: d.sectors, at: now,
		ticks:   [2]int64{d.ticks[0].Milliseconds(), d.ticks[1].Milliseconds()},
		inQueue: d.inQueue.Milliseconds(), ioTicks: d.ioTicks.Milliseconds()}
	return []diskCounters{c}, true
}

// aggrUtil returns the highest utilisation (per cent) of a drive's
// resource between two account snapshots over window, when the accounts
// name more than one drive; false otherwise.
func aggrUtil(before, after []models.Account, window time.Duration) (float64, bool) {
	if window <= 0 {
		return 0, false
	}
	was := map[string]time.Duration{} // resources may appear as they are first used
	for _, b := range before {
		was[b.Label()] += b.Busy
	}
	drives := map[string]bool{}
	var best float64
	for _, a := range after {
		if a.Class != models.ClassDrive || a.Units <= 0 {
			continue
		}
		drives[a.Where] = true
		busy := (a.Busy - was[a.Label()]).Seconds() / (float64(a.Units) * window.Seconds())
		best = max(best, min(1, busy))
	}
	return 100 * best, len(drives) > 1
}
