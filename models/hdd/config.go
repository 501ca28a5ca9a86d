package hdd

import (
	"fmt"
	"math"
	"time"

	"github.com/nasemu/nasemu/models"
)

// Config describes a hard disk drive with the figures of its datasheet. The
// zero value of every optional field means "the default for the class",
// documented on the field; Capacity, RPM, OuterMBps and AvgSeek are
// required.
type Config struct {
	// Capacity is the user capacity in bytes ("1TB", "8GiB").
	Capacity models.Bytes `yaml:"capacity"`
	// RPM is the spindle speed. "5400-class" drives (WD IntelliPower) spin
	// at 5400 rpm.
	RPM float64 `yaml:"rpm"`
	// OuterMBps is the sustained media rate at the outer zone (LBA 0), in
	// 10^6 bytes per second: the datasheet's "sustained transfer rate, up
	// to". Track and head switches are folded into it.
	OuterMBps float64 `yaml:"outer_mbps"`
	// InnerMBps is the sustained rate at the inner zone; 0 means half of
	// OuterMBps, which is what 3.5" drives with an inner/outer radius ratio
	// near 0.5 measure.
	InnerMBps float64 `yaml:"inner_mbps"`
	// Zones is the number of recording zones (0 means 16). Each zone has
	// the same radial width and a constant rate; rates fall linearly from
	// OuterMBps in the first zone to InnerMBps in the last.
	Zones int `yaml:"zones"`
	// Heads is the number of recording surfaces (0 means 2). It only sets
	// the number of cylinders, and so which nearby requests need no seek.
	Heads int `yaml:"heads"`
	// Cylinders is the number of tracks per surface; 0 means derived from
	// the capacity, the heads and the mean track size. ScaleTo sets it so
	// that a scaled-down drive keeps its platters' track count.
	Cylinders int64 `yaml:"cylinders"`

	// TrackToTrack is the single-cylinder seek time (0 means 1 ms).
	TrackToTrack time.Duration `yaml:"track_to_track"`
	// AvgSeek is the datasheet's average read seek: the mean seek time
	// between two uniformly random LBAs.
	AvgSeek time.Duration `yaml:"avg_seek"`
	// FullStroke is the seek time across the whole stroke (0 means 2.2 ×
	// AvgSeek, typical of 3.5" drives).
	FullStroke time.Duration `yaml:"full_stroke"`
	// Overhead is the controller's time to decode a command and set up
	// the transfer (0 means 200 µs). With NCQ it overlaps earlier commands'
	// mechanical work.
	Overhead time.Duration `yaml:"overhead"`

	// CacheSize is the DRAM buffer (0 means 64 MiB).
	CacheSize models.Bytes `yaml:"cache_size"`
	// CacheSegments is the number of read segments the buffer is divided
	// into (0 means 16); each holds one sequential range and its
	// read-ahead.
	CacheSegments int `yaml:"cache_segments"`
	// ReadAhead is how far the drive prefetches past a read while the head
	// has nothing else to do (0 means one segment, CacheSize/CacheSegments).
	ReadAhead models.Bytes `yaml:"read_ahead"`
	// WriteCacheDisabled turns the volatile write-back cache off (as
	// shipped it is on): writes then complete when they are on the media.
	WriteCacheDisabled bool `yaml:"write_cache_disabled"`
	// WriteCacheEntries is how many separate dirty ranges the write cache
	// holds (0 means 64). Destaging picks the cheapest one to reach, so it
	// bounds the reordering of cached random writes.
	WriteCacheEntries int `yaml:"write_cache_entries"`
	// QueueDepth is the NCQ depth (0 means 32; 1 turns reordering off).
	QueueDepth int `yaml:"queue_depth"`
	// Interface is the host link: "sata-6g" (default, ≈ 550 MB/s payload),
	// "sata-3g" (≈ 275 MB/s) or "sata-1.5g" (≈ 137 MB/s). A drive on a
	// slower port than it supports takes the port's speed.
	Interface string `yaml:"interface"`
}

// Defaults of the optional fields; see Config.
const (
	defaultZones         = 16
	defaultHeads         = 2
	defaultTrackToTrack  = time.Millisecond
	defaultFullStrokeX   = 2.2
	defaultOverhead      = 200 * time.Microsecond
	defaultCacheSize     = 64 << 20
	defaultCacheSegments = 16
	defaultWriteEntries  = 64
	defaultQueueDepth    = 32
	defaultInterface     = "sata-6g"
	maxQueueDepth        = 32 // NCQ's limit
	maxZones             = 256
	maxSegments          = 256
	maxWriteEntries      = 1024
)

// interfaceMBps is the payload rate of each SATA generation: the line rate
// after 8b/10b coding (150/300/600 MB/s) less frame and protocol overhead.
var interfaceMBps = map[string]float64{
	"sata-1.5g": 137.5,
	"sata-3g":   275,
	"sata-6g":   550,
}

// withDefaults returns c with every zero optional field set.
func (c Config) withDefaults() Config {
	if c.InnerMBps == 0 {
		c.InnerMBps = c.OuterMBps / 2
	}
	if c.Zones == 0 {
		c.Zones = defaultZones
	}
	if c.Heads == 0 {
		c.Heads = defaultHeads
	}
	if c.TrackToTrack == 0 {
		c.TrackToTrack = defaultTrackToTrack
	}
	if c.FullStroke == 0 {
		c.FullStroke = time.Duration(defaultFullStrokeX * float64(c.AvgSeek))
	}
	if c.Overhead == 0 {
		c.Overhead = defaultOverhead
	}
	if c.CacheSize == 0 {
		c.CacheSize = defaultCacheSize
	}
	if c.CacheSegments == 0 {
		c.CacheSegments = defaultCacheSegments
	}
	if c.ReadAhead == 0 {
		c.ReadAhead = c.CacheSize / models.Bytes(max(c.CacheSegments, 1))
	}
	if c.WriteCacheEntries == 0 {
		c.WriteCacheEntries = defaultWriteEntries
	}
	if c.QueueDepth == 0 {
		c.QueueDepth = defaultQueueDepth
	}
	if c.Interface == "" {
		c.Interface = defaultInterface
	}
	return c
}

func configErr(field, format string, args ...any) error {
	return fmt.Errorf("%w: hdd %s: %s", models.ErrConfig, field, fmt.Sprintf(format, args...))
}

// Validate reports the first impossible value, naming its field. It also
// checks that a seek curve through the track-to-track, average and
// full-stroke times exists.
func (c Config) Validate() error {
	_, _, _, err := c.build(0)
	return err
}

// validated checks c field by field and returns it with defaults applied.
func (c Config) validated() (Config, error) {
	c = c.withDefaults()
	switch {
	case c.Capacity <= 0:
		return c, configErr("capacity", "%d: want a positive size", c.Capacity)
	case !(c.RPM >= 1000 && c.RPM <= 30000):
		return c, configErr("rpm", "%g: want 1000–30000", c.RPM)
	case !(c.OuterMBps > 0 && c.OuterMBps < 1e5):
		return c, configErr("outer_mbps", "%g: want a positive rate", c.OuterMBps)
	case !(c.InnerMBps > 0 && c.InnerMBps <= c.OuterMBps):
		return c, configErr("inner_mbps", "%g: want a positive rate no higher than outer_mbps %g", c.InnerMBps, c.OuterMBps)
	case c.Zones < 1 || c.Zones > maxZones:
		return c, configErr("zones", "%d: want 1–%d", c.Zones, maxZones)
	case c.Heads < 1 || c.Heads > 64:
		return c, configErr("heads", "%d: want 1–64", c.Heads)
	case c.Cylinders < 0:
		return c, configErr("cylinders", "%d: want a positive count, or 0 to derive it", c.Cylinders)
	case c.AvgSeek <= 0:
		return c, configErr("avg_seek", "%v: want a positive time", c.AvgSeek)
	case c.TrackToTrack < 0 || c.TrackToTrack >= c.AvgSeek:
		return c, configErr("track_to_track", "%v: want a time below avg_seek %v", c.TrackToTrack, c.AvgSeek)
	case c.FullStroke <= c.AvgSeek:
		return c, configErr("full_stroke", "%v: want a time above avg_seek %v", c.FullStroke, c.AvgSeek)
	case c.Overhead < 0:
		return c, configErr("overhead", "%v: want a non-negative time", c.Overhead)
	case c.CacheSize < 0:
		return c, configErr("cache_size", "%d: want a non-negative size", c.CacheSize)
	case c.CacheSegments < 1 || c.CacheSegments > maxSegments:
		return c, configErr("cache_segments", "%d: want 1–%d", c.CacheSegments, maxSegments)
	case c.ReadAhead < 0:
		return c, configErr("read_ahead", "%d: want a non-negative size", c.ReadAhead)
	case c.WriteCacheEntries < 1 || c.WriteCacheEntries > maxWriteEntries:
		return c, configErr("write_cache_entries", "%d: want 1–%d", c.WriteCacheEntries, maxWriteEntries)
	case c.QueueDepth < 1 || c.QueueDepth > maxQueueDepth:
		return c, configErr("queue_depth", "%d: want 1–%d", c.QueueDepth, maxQueueDepth)
	}
	if _, ok := interfaceMBps[c.Interface]; !ok {
		return c, configErr("interface", "%q: want sata-1.5g, sata-3g or sata-6g", c.Interface)
	}
	return c, nil
}

// build validates c and lays out its geometry and seek curve.
func (c Config) build(phase float64) (Config, *geometry, seekCurve, error) {
	c, err := c.validated()
	if err != nil {
		return c, nil, seekCurve{}, err
	}
	g := newGeometry(c, phase)
	s, err := fitSeek(c, g)
	return c, g, s, err
}

// ScaleTo returns the configuration of a smaller drive for fast tests: the
// same spindle, the same zone rates from the outer to the inner edge and
// the same seek curve over the whole stroke; in effect the same platters
// with a wider track pitch. The full LBA range of the scaled drive still
// spans the full stroke, so sequential rates, random access times and NCQ
// gains are those of the full drive. The cache keeps its size.
func (c Config) ScaleTo(capacity int64) (Config, error) {
	if capacity <= 0 {
		return c, configErr("capacity", "scale to %d: want a positive size", capacity)
	}
	if c.Capacity > 0 && capacity > int64(c.Capacity) {
		return c, configErr("capacity", "scale to %d: larger than the drive's %d", capacity, int64(c.Capacity))
	}
	if c.Cylinders == 0 && c.RPM > 0 && c.OuterMBps > 0 {
		c.Cylinders = int64(math.Round(c.withDefaults().cylinders()))
	}
	c.Capacity = models.Bytes(capacity)
	return c, nil
}

// cylinders returns the tracks per surface: the capacity over the heads
// and the mean track size (tracks are spread evenly over the stroke, so
// the mean track holds the mean of the outer and inner rates for one
// revolution). c has its defaults applied.
func (c Config) cylinders() float64 {
	if c.Cylinders > 0 {
		return float64(c.Cylinders)
	}
	track := (c.OuterMBps + c.InnerMBps) / 2 * 1e6 * 60 / c.RPM
	return max(1, float64(c.Capacity)/(float64(c.Heads)*track))
}

// Summary returns one line of key figures for drive listings.
func (c Config) Summary() string {
	d := c.withDefaults()
	wc := "write cache on"
	if d.WriteCacheDisabled {
		wc = "write cache off"
	}
	return fmt.Sprintf("%s HDD, %g rpm, %g→%g MB/s, seek %.1f ms, %s, %s cache, %s, NCQ %d",
		decimalSize(int64(d.Capacity)), d.RPM, d.OuterMBps, d.InnerMBps,
		float64(d.AvgSeek)/float64(time.Millisecond), sataName(d.Interface),
		d.CacheSize, wc, d.QueueDepth)
}

func sataName(iface string) string {
	switch iface {
	case "sata-1.5g":
		return "SATA 1.5Gb/s"
	case "sata-3g":
		return "SATA 3Gb/s"
	case "sata-6g":
		return "SATA 6Gb/s"
	}
	return iface
}

// decimalSize formats a capacity the way datasheets do (1 TB = 10^12 B).
func decimalSize(n int64) string {
	for _, u := range []struct {
		s string
		m float64
	}{{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}} {
		if float64(n) >= u.m {
			return fmt.Sprintf("%.3g%s", float64(n)/u.m, u.s)
		}
	}
	return fmt.Sprintf("%d B", n)
}
