package cache

import (
	"cmp"
	"fmt"

	"github.com/nasemu/nasemu/models"
)

// Cache modes.
const (
	ReadOnly  = "read-only"
	ReadWrite = "read-write"
)

// Defaults of Config.
const (
	DefaultBlock            = 64 << 10
	DefaultDirtyLimit       = 0.5
	DefaultSequentialBypass = 1 << 20
	DefaultFlushDepth       = 4
	DefaultStreams          = 8
)

// Config describes an SSD cache tier. The zero value of every field means
// its default.
type Config struct {
	// Mode is ReadOnly (default) or ReadWrite.
	Mode string `yaml:"mode"`
	// Block is the unit of allocation and LRU order: a power of two of at
	// least 4 KiB (default 64 KiB).
	Block models.Bytes `yaml:"block"`
	// Capacity limits the cache size; 0 uses the cache drives whole (the sum
	// of their capacities in read-only mode, the smallest in read-write mode,
	// where they are mirrors).
	Capacity models.Bytes `yaml:"capacity"`
	// DirtyLimit is the fraction of the cache's blocks that may hold data
	// not yet flushed to the array, in (0, 1]; default 0.5. It counts blocks
	// (as flashcache's dirty_thresh_pct does) because only clean blocks can
	// be evicted: a block with one dirty sector is pinned whole.
	DirtyLimit float64 `yaml:"dirty_limit"`
	// SequentialBypass is the run length after which a sequential stream
	// (or a single request of this size) bypasses the cache; default 1 MiB.
	SequentialBypass models.Bytes `yaml:"sequential_bypass"`
	// KeepSequential turns the sequential bypass off: everything is cached.
	// The ds1817 setups with a cache set it, a class-level choice:
	// calibrated: cache.keep_sequential (class: DSM 6's SSD cache policy)
	// from rows s003-*-ssdcache-*; class default false
	// (validate.Calibrations).
	KeepSequential bool `yaml:"keep_sequential"`
	// FlushDepth is how many flush I/Os the background flusher keeps in
	// flight; default 4.
	FlushDepth int `yaml:"flush_depth"`
	// Streams is how many sequential streams the bypass detector follows;
	// default 8.
	Streams int `yaml:"streams"`
}

// WithDefaults returns c with every zero field set to its default.
func (c Config) WithDefaults() Config {
	c.Mode = cmp.Or(c.Mode, ReadOnly)
	c.Block = cmp.Or(c.Block, DefaultBlock)
	c.DirtyLimit = cmp.Or(c.DirtyLimit, DefaultDirtyLimit)
	c.SequentialBypass = cmp.Or(c.SequentialBypass, DefaultSequentialBypass)
	c.FlushDepth = cmp.Or(c.FlushDepth, DefaultFlushDepth)
	c.Streams = cmp.Or(c.Streams, DefaultStreams)
	return c
}

// Validate reports the first impossible value of c (after defaults); the
// error wraps models.ErrConfig and names the field.
func (c Config) Validate() error {
	c = c.WithDefaults()
	bad := func(field string, format string, args ...any) error {
		return fmt.Errorf("%w: cache.%s: %s", models.ErrConfig, field, fmt.Sprintf(format, args...))
	}
	switch {
	case c.Mode != ReadOnly && c.Mode != ReadWrite:
		return bad("mode", "%q is neither %q nor %q", c.Mode, ReadOnly, ReadWrite)
	case c.Block < 4096 || c.Block&(c.Block-1) != 0:
		return bad("block", "%d is not a power of two of at least 4KiB", c.Block)
	case c.Capacity < 0:
		return bad("capacity", "negative")
	case c.Capacity != 0 && c.Capacity < c.Block:
		return bad("capacity", "%v is smaller than one block", c.Capacity)
	case c.DirtyLimit <= 0 || c.DirtyLimit > 1:
		return bad("dirty_limit", "%g is not in (0, 1]", c.DirtyLimit)
	case c.SequentialBypass < 0:
		return bad("sequential_bypass", "negative")
	case c.FlushDepth < 1 || c.FlushDepth > 256:
		return bad("flush_depth", "%d is not in [1, 256]", c.FlushDepth)
	case c.Streams < 1 || c.Streams > 64:
		return bad("streams", "%d is not in [1, 64]", c.Streams)
	}
	return nil
}

// sectorSize is the granularity of validity and dirtiness inside a block:
// 4 KiB, or Block/64 for blocks larger than 256 KiB, so that one uint64
// bitmap covers a block.
func sectorSize(block int64) int64 {
	return max(4096, block/64)
}
