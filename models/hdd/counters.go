package hdd

import (
	"time"

	"github.com/nasemu/nasemu/models"
)

// counters are the drive's running totals.
type counters struct {
	reads, writes, flushes  int64
	bytesRead, bytesWritten int64
	mediaBytesRead          int64
	mediaBytesWritten       int64
	seeks                   int64
	seekNs, rotNs           float64
	headNs, linkNs          float64 // busy time of the head (media commands, destaging) and of the host link
	readHits                int64
	writeAbsorbed           int64
	destages                int64
	queueDepthMax           int64
}

// noteSeek counts one positioning: a seek (if the head moved) and the
// rotational wait after it.
func (c *counters) noteSeek(seek, rot float64) {
	if seek > 0 {
		c.seeks++
		c.seekNs += seek
	}
	c.rotNs += rot
}

// Counters implements models.Observer.
func (d *Drive) Counters() []models.Counter {
	return []models.Counter{
		{Name: "reads", Value: float64(d.reads)},
		{Name: "writes", Value: float64(d.writes)},
		{Name: "flushes", Value: float64(d.flushes)},
		{Name: "host_bytes_read", Value: float64(d.bytesRead)},
		{Name: "host_bytes_written", Value: float64(d.bytesWritten)},
		{Name: "media_bytes_read", Value: float64(d.mediaBytesRead)},
		{Name: "media_bytes_written", Value: float64(d.mediaBytesWritten)},
		{Name: "seeks", Value: float64(d.seeks)},
		{Name: "seek_time_ms_total", Value: d.seekNs / 1e6},
		{Name: "rotation_wait_ms_total", Value: d.rotNs / 1e6},
		{Name: "cache_read_hits", Value: float64(d.readHits)},
		{Name: "cache_write_absorbed", Value: float64(d.writeAbsorbed)},
		{Name: "destage_ops", Value: float64(d.destages)},
		{Name: "write_cache_dirty_bytes", Value: float64(d.dirtyBytes)},
		{Name: "queue_depth_max", Value: float64(d.queueDepthMax)},
	}
}

// Resources implements models.Accountant: the head (media commands and
// destaging; read-ahead runs only while the head would idle, so it is not
// counted) and the host interface. Work runs on each in order, so what is
// booked after at is what lies past its free time.
func (d *Drive) Resources(at time.Duration) []models.Resource {
	return []models.Resource{
		{Name: "head", Class: models.ClassDrive, Units: 1, Busy: time.Duration(d.headNs - max(0, d.headFree-float64(at)))},
		{Name: "interface", Class: models.ClassDrive, Units: 1, Busy: time.Duration(d.linkNs - max(0, d.linkFree-float64(at)))},
	}
}

var _ models.Accountant = (*Drive)(nil)
