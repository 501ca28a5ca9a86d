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
	// DiskAggr, present on a device over several (an md array in fio;
	// on a sim: target, a setup whose array has more than one member),
	// is fio's aggregate of the devices below.
	*DiskAggr
}

// DiskAggr is fio's aggr_* figures of a device over several: the
// members' requests, sectors, merges, ticks and in_queue averaged over the
// members (their sum divided by their number, as fio's
// aggregate_slaves_stats and json_array_add_disk_util do), and the highest
// utilisation of a member. On a sim: target the figures are the array's
// member counters: the requests it sent its members, and the time each
// spent in its member from issue to completion as the model served it
// (its wait in the member's queue and its service), summed per direction
// into ticks and over all requests (flushes and trims too) into in_queue,
// the time integral of the members' requests in flight, as
// /proc/diskstats counts them; util is the model's busy-time accounting
// of the drives' resources. The model merges nothing below the array.
type DiskAggr struct {
	ReadIOs      int64   `json:"aggr_read_ios"`
	WriteIOs     int64   `json:"aggr_write_ios"`
	ReadSectors  int64   `json:"aggr_read_sectors"`
	WriteSectors int64   `json:"aggr_write_sectors"`
	ReadMerges   int64   `json:"aggr_read_merges"`
	WriteMerges  int64   `json:"aggr_write_merge"` // fio's spelling
	ReadTicks    int64   `json:"aggr_read_ticks"`  // ms
	WriteTicks   int64   `json:"aggr_write_ticks"` // ms
	InQueue      int64   `json:"aggr_in_queue"`    // ms
	Util         float64 `json:"aggr_util"`
}

// memberCounters are what an array sent its members, summed over the
// members, at one moment.
type memberCounters struct {
	members      int
	ios, sectors [2]int64
	ticks        [2]time.Duration
	inQueue      time.Duration
}

// memberStats sums the member counters of the arrays of the stack under
// dev (devices that report member_reads and have children).
func memberStats(dev models.Device) memberCounters {
	var m memberCounters
	models.Walk(dev, func(d models.Device, _ int) {
		o, ok := d.(models.Observer)
		p, isParent := d.(models.Parent)
		if !ok || !isParent {
			return
		}
		found := false
		for _, c := range o.Counters() {
			switch c.Name {
			case "member_reads":
				m.ios[0] += int64(c.Value)
				found = true
			case "member_writes":
				m.ios[1] += int64(c.Value)
			case "member_bytes_read":
				m.sectors[0] += int64(c.Value) / 512
			case "member_bytes_written":
				m.sectors[1] += int64(c.Value) / 512
			case "member_read_ns":
				m.ticks[0] += time.Duration(c.Value)
			case "member_write_ns":
				m.ticks[1] += time.Duration(c.Value)
			case "member_queue_ns":
				m.inQueue += time.Duration(c.Value)
			}
		}
		if found {
			m.members += len(p.Children())
		}
	})
	return m
}

// diskAggr returns the aggregate of the members between two snapshots,
// with util the busiest member's (aggrUtil); nil where there is no array
// of more than one member.
func diskAggr(before, after memberCounters, util float64) *DiskAggr {
	n := int64(after.members)
	if n < 2 || before.members != after.members {
		return nil
	}
	ms := func(a, b time.Duration) int64 { return (a - b).Milliseconds() / n }
	return &DiskAggr{
		ReadIOs: (after.ios[0] - before.ios[0]) / n, WriteIOs: (after.ios[1] - before.ios[1]) / n,
		ReadSectors: (after.sectors[0] - before.sectors[0]) / n, WriteSectors: (after.sectors[1] - before.sectors[1]) / n,
		ReadTicks: ms(after.ticks[0], before.ticks[0]), WriteTicks: ms(after.ticks[1], before.ticks[1]),
		InQueue: ms(after.inQueue, before.inQueue),
		Util:    util,
	}
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
// resource between two account snapshots over window.
func aggrUtil(before, after []models.Account, window time.Duration) float64 {
	if window <= 0 {
		return 0
	}
	was := map[string]time.Duration{} // resources may appear as they are first used
	for _, b := range before {
		was[b.Label()] += b.Busy
	}
	var best float64
	for _, a := range after {
		if a.Class != models.ClassDrive || a.Units <= 0 {
			continue
		}
		busy := (a.Busy - was[a.Label()]).Seconds() / (float64(a.Units) * window.Seconds())
		best = max(best, min(1, busy))
	}
	return 100 * best
}
