package cache

import (
	"fmt"
	"math/bits"
	"slices"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/timeline"
)

// Tier is an SSD cache tier in front of a backing device (an array).
type Tier struct {
	cfg     Config
	drives  []models.Device
	backing models.Device
	rw      bool

	block, sector int64 // bytes
	perBlock      int   // sectors per block
	t             *blockTable

	streams []stream
	tick    uint64

	// Flusher (read-write mode).
	lanes       []time.Duration // per flush lane: busy until
	laneMark    []int32         // per flush lane: the slot it cleaned last, not yet marked clean on flash, or -1
	pending     []sweepEntry    // blocks dirtied since the last snapshot
	sweep       []sweepEntry    // the current pass, in address order
	sweepPos    int
	dirtyBytes  int64
	dirtyBlocks int64 // blocks with at least one dirty sector
	dirtyLimit  int64 // blocks that may be dirty
	mirrorRR    int
	// backingUnflushed: writes went to the backing device itself (around
	// or past the cache) since its last flush.
	backingUnflushed bool

	// CPU work (cpu.go); nil cpu: none charged.
	cpu                CPU
	worker             timeline.Core // the target's worker thread (cpu.go)
	ioCost, lookupCost time.Duration
	mdBase, mdArea     int64 // offset and size of the metadata area on each cache drive (read-write mode)
	md                 map[int64]mdWrite
	mdWrites           int64
	mdBatched          int64 // updates that rode along another's write

	hits, misses                       int64
	backingWaits                       int64 // foreground requests besides misses that waited for the backing device (models.Gate)
	flushedBytes, bypassedBytes, fills int64
}

// sweepEntry is a dirty block queued for flushing.
type sweepEntry struct {
	block int64
	slot  int32
}

var (
	_ models.Device   = (*Tier)(nil)
	_ models.Observer = (*Tier)(nil)
	_ models.Parent   = (*Tier)(nil)
)

// New returns a cache tier over backing that caches on cacheDrives. In
// read-write mode with two or more drives every write goes to all of them
// (a mirror); in read-only mode blocks are striped over them.
func New(cfg Config, cacheDrives []models.Device, backing models.Device) (*Tier, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(cacheDrives) == 0 || backing == nil {
		return nil, fmt.Errorf("%w: cache: want at least one cache drive and a backing device", models.ErrConfig)
	}
	rw := cfg.Mode == ReadWrite
	var room int64 // bytes of cache the drives offer
	for i, d := range cacheDrives {
		if d == nil {
			return nil, fmt.Errorf("%w: cache: drive %d is nil", models.ErrConfig, i)
		}
		c := d.Capacity()
		switch {
		case !rw:
			room += c - c%int64(cfg.Block)
		case i == 0 || c < room:
			room = c
		}
	}
	if cfg.Capacity != 0 {
		if int64(cfg.Capacity) > room {
			return nil, fmt.Errorf("%w: cache.capacity %v exceeds the %d bytes the cache drives hold", models.ErrConfig, cfg.Capacity, room)
		}
		room = int64(cfg.Capacity)
	}
	blocks := room / int64(cfg.Block)
	if rw {
		// The metadata area follows the data on every mirror (cpu.go).
		blocks = (room - mdBytes(blocks)) / int64(cfg.Block)
	}
	if blocks < 1 || blocks > 1<<31-1 {
		return nil, fmt.Errorf("%w: cache: %d blocks of %v", models.ErrConfig, blocks, cfg.Block)
	}
	tr := &Tier{
		cfg:        cfg,
		drives:     cacheDrives,
		backing:    backing,
		rw:         rw,
		block:      int64(cfg.Block),
		sector:     sectorSize(int64(cfg.Block)),
		t:          newBlockTable(int32(blocks)),
		streams:    make([]stream, cfg.Streams),
		lanes:      make([]time.Duration, cfg.FlushDepth),
		laneMark:   slices.Repeat([]int32{-1}, cfg.FlushDepth),
		dirtyLimit: max(1, int64(cfg.DirtyLimit*float64(blocks))),
		mdBase:     blocks * int64(cfg.Block),
		mdArea:     mdBytes(blocks),
		md:         map[int64]mdWrite{},
	}
	tr.perBlock = int(tr.block / tr.sector)
	return tr, nil
}

// StripeBytes returns the backing array's (raid.Array.StripeBytes), 0
// when the backing device is not striped: the page cache above reads
// ahead as the array's own read-ahead says.
func (tr *Tier) StripeBytes() int64 {
	if s, ok := tr.backing.(interface{ StripeBytes() int64 }); ok {
		return s.StripeBytes()
	}
	return 0
}

// Capacity implements models.Device: the backing device's capacity.
func (tr *Tier) Capacity() int64 { return tr.backing.Capacity() }

// Children implements models.Parent: the cache drives, then the backing.
func (tr *Tier) Children() []models.Device {
	return append(append([]models.Device(nil), tr.drives...), tr.backing)
}

// Counters implements models.Observer.
func (tr *Tier) Counters() []models.Counter {
	return []models.Counter{
		{Name: "cache_hits", Value: float64(tr.hits)},
		{Name: "cache_misses", Value: float64(tr.misses)},
		{Name: "cache_dirty_bytes", Value: float64(tr.dirtyBytes)},
		{Name: "cache_flushed_bytes", Value: float64(tr.flushedBytes)},
		{Name: "cache_bypassed_bytes", Value: float64(tr.bypassedBytes)},
		{Name: "cache_fill_bytes", Value: float64(tr.fills)},
		{Name: "cache_used_bytes", Value: float64(int64(tr.t.len()) * tr.block)},
		{Name: "cache_metadata_writes", Value: float64(tr.mdWrites)},
		{Name: "cache_metadata_batched", Value: float64(tr.mdBatched)},
	}
}

// Submit implements models.Device.
func (tr *Tier) Submit(at time.Duration, r models.Request) (time.Duration, error) {
	if err := models.CheckRange(r, tr.Capacity()); err != nil {
		return at, err
	}
	if tr.rw {
		if err := tr.background(at); err != nil {
			return at, err
		}
	}
	switch r.Op {
	case models.Read:
		if r.Length == 0 {
			return at, nil
		}
		return tr.read(tr.charge(at, tr.lookupCost), r)
	case models.Write:
		if r.Length == 0 {
			return at, nil
		}
		at = tr.charge(at, tr.lookupCost)
		if !tr.rw {
			tr.invalidate(r.Offset, r.End())
			tr.backingUnflushed = true
			tr.backingWaits++
			return tr.backing.Submit(at, r)
		}
		return tr.write(at, r)
	case models.Trim:
		tr.invalidate(r.Offset, r.End())
		return tr.backing.Submit(at, r)
	case models.Flush:
		return tr.flush(at, r)
	}
	return at, nil // file ops: a block device completes them at once
}

// sectorMask returns the sectors of the block starting at base that the
// byte range [off, end) touches.
func (tr *Tier) sectorMask(base, off, end int64) uint64 {
	lo := max(off, base) - base
	hi := min(end, base+tr.block) - base
	s0 := lo / tr.sector
	s1 := (hi + tr.sector - 1) / tr.sector
	n := s1 - s0
	if n >= 64 {
		return ^uint64(0)
	}
	return (uint64(1)<<n - 1) << s0
}

// where returns the cache drive and offset on it of sector sec of slot s.
// Read-only caches stripe slots over the drives; read-write caches mirror,
// so the location is the same on every drive and drive is 0.
func (tr *Tier) where(s int32, sec int) (drive int, off int64) {
	slot := int64(s)
	if !tr.rw {
		n := int64(len(tr.drives))
		drive, slot = int(slot%n), slot/n
	}
	return drive, slot*tr.block + int64(sec)*tr.sector
}

// runs calls fn for each contiguous run of set bits in m: first sector and
// count.
func runs(m uint64, fn func(first, n int) error) error {
	for m != 0 {
		first := bits.TrailingZeros64(m)
		n := bits.TrailingZeros64(^(m >> first))
		if err := fn(first, n); err != nil {
			return err
		}
		if first+n >= 64 {
			return nil
		}
		m &^= (uint64(1)<<n - 1) << first
	}
	return nil
}

// invalidate drops whatever the cache holds of [off, end): a write that
// went around the cache, or a trim, made it stale.
func (tr *Tier) invalidate(off, end int64) {
	for base := off - off%tr.block; base < end; base += tr.block {
		s := tr.t.lookup(base / tr.block)
		if s < 0 {
			continue
		}
		m := tr.sectorMask(base, off, end)
		// A sector only partly covered is dropped too: keeping it would
		// need a read of the array to merge the new bytes.
		tr.dropDirty(s, m)
		tr.t.valid[s] &^= m
	}
}

// dropDirty clears the dirty sectors m of slot s without flushing them.
func (tr *Tier) dropDirty(s int32, m uint64) {
	d := tr.t.dirty[s] & m
	tr.dirtyBytes -= int64(bits.OnesCount64(d)) * tr.sector
	tr.t.dirty[s] &^= d
	if d != 0 && tr.t.dirty[s] == 0 {
		tr.dirtyBlocks--
	}
}

// flush makes acknowledged writes durable. The SSDs are non-volatile, so
// dirty data may stay in the cache: in read-write mode the cache drives
// flush their own volatile caches. The backing device is flushed only when
// writes went to it directly (write-around, bypassed sequential writes)
// since its last flush; data the flusher copied there is still safe on the
// SSDs. Fill writes of a read-only cache need no durability.
func (tr *Tier) flush(at time.Duration, r models.Request) (time.Duration, error) {
	done := at
	if tr.rw {
		for _, d := range tr.drives {
			e, err := d.Submit(at, r)
			if err != nil {
				return at, err
			}
			done = max(done, e)
		}
	}
	if tr.backingUnflushed {
		tr.backingUnflushed = false
		tr.backingWaits++
		e, err := tr.backing.Submit(at, r)
		if err != nil {
			return at, err
		}
		done = max(done, e)
	}
	return done, nil
}

// ChildName implements models.ChildNamer: the cache drives are "cache
// drive N" of class cache; the backing device is not named.
func (tr *Tier) ChildName(i int) (string, models.Class) {
	if i < len(tr.drives) {
		return fmt.Sprintf("cache drive %d", i+1), models.ClassCache
	}
	return "", ""
}

var _ models.ChildNamer = (*Tier)(nil)

// Waits implements models.Gate: read misses, bypassed requests, writes
// that waited for flushes to make room, writes and flushes that reached
// the backing device.
func (tr *Tier) Waits() int64 { return tr.misses + tr.backingWaits }

// Gated implements models.Gate: the backing device (the last child) is
// behind the cache, the cache drives are not.
func (tr *Tier) Gated(i int) bool { return i == len(tr.drives) }

var _ models.Gate = (*Tier)(nil)
