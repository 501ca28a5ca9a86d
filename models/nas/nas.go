package nas

import (
	"fmt"
	"math/bits"
	"time"

	"github.com/nasemu/nasemu/models/timeline"

	"github.com/nasemu/nasemu/models"
)

// Controller is a NAS controller: CPU, page cache and filesystem in front
// of the storage below it (an array or a cache tier).
type Controller struct {
	cfg     Config
	storage models.Device
	cap     int64

	cpu     cpu
	threads []timeline.Timeline // local clients' threads (issue)

	// stripes is the array below when Linux md runs it as RAID 5 or 6
	// (Config.RAIDStack); md is its stripe thread, mdPage that thread's
	// time per member page on these cores, mdSeen the array's
	// StripeBytesHandled already charged.
	stripes StripeHandler
	md      timeline.Timeline
	mdPage  time.Duration
	mdSeen  int64
	// stripe is the data of one full stripe of striped storage
	// (Striper), 0 otherwise: writeback ends its I/Os on its boundaries.
	stripe int64
	pc     *pageCache
	ps     int64 // page size

	dirtyLimit, dirtyBackground int64 // pages
	th                          throttle
	lanes                       []time.Duration
	dirtySince                  time.Duration // when dirty pages went from none to some
	streams                     [8]stream
	tick                        uint64

	metaBase, metaPages int64 // metadata area, in pages
	journalBase         int64 // bytes
	journalSize         int64
	journalHead         int64
	journalPending      int64
	journalOpen         time.Duration

	last time.Duration // latest completion seen, for utilisation

	// written has a bit per granule (1<<gShift bytes) of the storage that
	// data has been written to (SparseFiles); nil without SparseFiles.
	written []uint64
	gShift  uint

	hits, misses, writebackBytes, metadataOps, journalBytes int64
	// storageWaits counts requests besides misses that waited for the
	// storage: write-through, throttled writers, flushes (models.Gate).
	storageWaits int64
}

// stream is a sequential read stream, for read-ahead.
type stream struct {
	next int64
	used uint64
}

var (
	_ models.Device   = (*Controller)(nil)
	_ models.Observer = (*Controller)(nil)
	_ models.Parent   = (*Controller)(nil)
)

// Striper is implemented by storage laid out in stripes (package raid's
// Array, a cache tier in front of one): StripeBytes is the data one full
// stripe holds, 0 when it is not striped.
type Striper interface {
	StripeBytes() int64
}

// StripeHandler is implemented by storage whose parity stripes go through
// a stripe cache (package raid's Array): StripeBytesHandled is the member
// bytes so far read and written for requests that did (writes and trims of
// RAID 5 and 6 segments).
type StripeHandler interface {
	StripeBytesHandled() int64
}

// New returns a controller over storage. Unless cfg sets ReadAhead, a
// sequential stream reads ahead by Linux's default read_ahead_kb or, on
// a striped array (Striper), twice its stripe, as md sets the array's
// read-ahead, whichever is larger: one stream's read-ahead then keeps
// every data member busy instead of one or two of them.
func New(cfg Config, storage models.Device) (*Controller, error) {
	mdReadAhead := cfg.ReadAhead == 0
	cfg = cfg.WithDefaults()
	var stripe int64
	if s, ok := storage.(Striper); ok {
		stripe = s.StripeBytes()
		if mdReadAhead {
			cfg.ReadAhead = max(cfg.ReadAhead, models.Bytes(2*stripe))
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if storage == nil {
		return nil, fmt.Errorf("%w: nas: no storage", models.ErrConfig)
	}
	c := &Controller{cfg: cfg, storage: storage, cap: storage.Capacity(), ps: int64(cfg.PageSize), stripe: stripe}
	if c.cap < 64*c.ps {
		return nil, fmt.Errorf("%w: nas: storage of %d bytes is too small", models.ErrConfig, c.cap)
	}
	c.cpu.cores = make([]timeline.Core, cfg.CPU.Cores)
	if s, ok := storage.(StripeHandler); ok && cfg.RAIDStack == RAIDStackMD {
		c.stripes = s
		c.mdPage = time.Duration(float64(MDStripePage) * cfg.CPU.RelativeCost())
	}
	pages := cfg.PageCacheBytes() / c.ps
	if cfg.Encrypted && cfg.CryptoDoubleCache {
		pages /= 2 // ciphertext below, plaintext above
	}
	pages = min(pages, 1<<31-1)
	c.pc = newPageCache(int32(pages))
	c.dirtyLimit = max(1, int64(cfg.DirtyRatio*float64(pages)))
	c.dirtyBackground = max(1, int64(cfg.DirtyBackgroundRatio*float64(pages)))
	c.initThrottle()
	c.lanes = make([]time.Duration, cfg.WritebackDepth)

	meta := int64(cfg.MetadataArea)
	if meta == 0 {
		meta = min(1<<30, c.cap/16)
	}
	meta = min(meta, c.cap/2) / c.ps * c.ps
	if meta < 16*c.ps {
		return nil, fmt.Errorf("%w: nas.metadata_area: %d bytes is too small", models.ErrConfig, meta)
	}
	end := c.cap / c.ps * c.ps
	c.journalSize = meta / 8 / c.ps * c.ps
	c.journalBase = end - meta
	c.metaBase = (c.journalBase + c.journalSize) / c.ps
	c.metaPages = (end - c.journalBase - c.journalSize) / c.ps
	if cfg.SparseFiles {
		c.gShift = uint(bits.TrailingZeros64(uint64(c.ps)))
		for c.cap>>c.gShift > maxGranules {
			c.gShift++
		}
		c.written = make([]uint64, (c.cap>>c.gShift)/64+1)
	}
	return c, nil
}

// maxGranules bounds the written bitmap of SparseFiles to 4 MiB.
const maxGranules = 1 << 25

// markWritten records that data was written to [off, off+n).
func (c *Controller) markWritten(off, n int64) {
	if c.written == nil || n <= 0 {
		return
	}
	for g := off >> c.gShift; g <= (off+n-1)>>c.gShift; g++ {
		c.written[g>>6] |= 1 << (g & 63)
	}
}

// unwritten reports whether no data was ever written to [off, off+n) of a
// SparseFiles filesystem: it reads as zeros, without the storage.
func (c *Controller) unwritten(off, n int64) bool {
	if c.written == nil || n <= 0 {
		return false
	}
	for g := off >> c.gShift; g <= (off+n-1)>>c.gShift; g++ {
		if c.written[g>>6]&(1<<(g&63)) != 0 {
			return false
		}
	}
	return true
}

// Uncached returns how many page-cache pages of r a read would have to
// fill: pages not in the page cache (none for direct I/O, which fills none).
// The protocol above uses it where the filling runs in the thread that
// serves the request (an iSCSI target's file-backed LUN, proto.Prober).
func (c *Controller) Uncached(r models.Request) int64 {
	if c.cfg.DirectIO || r.Direct || r.Length <= 0 || r.Offset < 0 || r.End() > c.cap {
		return 0
	}
	var n int64
	for pg := c.pageOf(r.Offset); pg <= c.pageOf(r.End()-1); pg++ {
		if c.pc.lookup(pg) < 0 {
			n++
		}
	}
	return n
}

// Capacity implements models.Device.
func (c *Controller) Capacity() int64 { return c.cap }

// Children implements models.Parent.
func (c *Controller) Children() []models.Device { return []models.Device{c.storage} }

// Counters implements models.Observer.
func (c *Controller) Counters() []models.Counter {
	pct := 0.0
	if c.last > 0 {
		pct = 100 * float64(c.cpu.busy) / (float64(c.last) * float64(len(c.cpu.cores)))
	}
	return []models.Counter{
		{Name: "cpu_busy_ns", Value: float64(c.cpu.busy)},
		{Name: "cpu_busy_pct", Value: pct},
		{Name: "crypto_engine_busy_ns", Value: float64(c.cpu.engineBusy)},
		{Name: "page_cache_hits", Value: float64(c.hits)},
		{Name: "page_cache_misses", Value: float64(c.misses)},
		{Name: "page_cache_bytes", Value: float64(int64(c.pc.len()) * c.ps)},
		{Name: "page_cache_dirty_bytes", Value: float64(c.pc.dirty * c.ps)},
		{Name: "writeback_bytes", Value: float64(c.writebackBytes)},
		{Name: "metadata_ops", Value: float64(c.metadataOps)},
		{Name: "journal_bytes", Value: float64(c.journalBytes)},
	}
}

// pageOf returns the page holding byte off (≥ 0): off / ps as a shift (the
// page size is a power of two, Config.Validate), since it is taken of
// every request.
func (c *Controller) pageOf(off int64) int64 {
	return off >> bits.TrailingZeros64(uint64(c.ps))
}

// Prefetch implements models.Prefetcher: it starts loading the page cache's
// index where a lookup of the request's first page begins (direct I/O
// bypasses the page cache).
func (c *Controller) Prefetch(r models.Request) {
	if (r.Op == models.Read || r.Op == models.Write) && !c.cfg.DirectIO && !r.Direct {
		c.pc.ix.Prefetch(c.pageOf(r.Offset))
	}
}

// Submit implements models.Device.
func (c *Controller) Submit(at time.Duration, r models.Request) (time.Duration, error) {
	if err := models.CheckRange(r, c.cap); err != nil {
		return at, err
	}
	if err := c.background(at); err != nil {
		return at, err
	}
	var done time.Duration
	var err error
	switch r.Op {
	case models.Read:
		if c.cfg.DirectIO || r.Direct {
			done, err = c.directRead(at, r)
		} else {
			done, err = c.read(at, r)
		}
	case models.Write:
		if c.cfg.DirectIO || r.Direct {
			done, err = c.directWrite(at, r)
		} else {
			done, err = c.write(at, r)
		}
	case models.Flush:
		done, err = c.flush(at)
	case models.Trim:
		done, err = c.trim(at, r)
	default:
		done, err = c.fileOp(at, r)
	}
	c.last = max(c.last, done)
	return done, err
}

// directRead reads around the page cache: the data is checksummed,
// decrypted and sent after the storage returns it.
func (c *Controller) directRead(at time.Duration, r models.Request) (time.Duration, error) {
	p := &c.cfg.CPU
	if c.unwritten(r.Offset, r.Length) {
		// A hole: zeros, no storage I/O.
		t := c.cpu.run(at, p.PerRequest+c.netRequest())
		return c.dataPath(t, 0, r.Length, wCopy|wNet), nil
	}
	t := c.issue(at, r, p.PerRequest+c.netRequest()+p.PerIO)
	d, err := c.submit(t, r)
	if err != nil {
		return d, err
	}
	return c.dataPath(d, 0, r.Length, wNet|wSum|wCrypt), nil
}

// directWrite writes around the page cache.
func (c *Controller) directWrite(at time.Duration, r models.Request) (time.Duration, error) {
	p := &c.cfg.CPU
	t := c.issuePath(at, r, p.PerRequest+c.netRequest()+p.PerIO, r.Length, wNet|wSum|wCrypt)
	c.markWritten(r.Offset, r.Length)
	return c.submit(t, r)
}

// sequential reports whether a read continues a recent read stream.
func (c *Controller) sequential(r models.Request) bool {
	c.tick++
	victim, oldest := 0, c.streams[0].used // the least recently used stream
	for i := range c.streams {
		st := &c.streams[i]
		if st.used != 0 && st.next == r.Offset {
			st.next, st.used = r.End(), c.tick
			return true
		}
		if st.used < oldest {
			victim, oldest = i, st.used
		}
	}
	c.streams[victim] = stream{next: r.End(), used: c.tick}
	return false
}

// read serves a read from the page cache, reading the missing pages (and,
// for a sequential stream, read-ahead) from the storage. The work one
// thread does in one go — taking the request and submitting its I/O;
// verifying what was read and copying it out — is booked as one stretch
// of one core.
func (c *Controller) read(at time.Duration, r models.Request) (time.Duration, error) {
	p := &c.cfg.CPU
	fixed := p.PerRequest + c.netRequest()
	if r.Length == 0 {
		return c.cpu.run(at, fixed), nil
	}
	p0, p1 := c.pageOf(r.Offset), c.pageOf(r.End()-1)
	lo, hi := int64(-1), int64(-1)
	ready := at
	for pg := p0; pg <= p1; pg++ {
		s := c.pc.lookup(pg)
		if s < 0 {
			if lo < 0 {
				lo = pg
			}
			hi = pg
			c.misses++
			continue
		}
		c.hits++
		c.pc.flag[s] |= fRef
		ready = max(ready, c.pc.ready[s])
	}
	seq := c.sequential(r)
	if lo < 0 {
		if !seq && ready == at {
			return c.issuePath(at, r, fixed, r.Length, wCopy|wNet), nil
		}
		t := c.issue(at, r, fixed)
		if seq {
			if err := c.readAhead(t, p1); err != nil {
				return t, err
			}
		}
		return c.dataPath(max(ready, t), 0, r.Length, wCopy|wNet), nil
	}
	if seq {
		last := min(p1+int64(c.cfg.ReadAhead)/c.ps, (c.cap-1)/c.ps)
		for hi < last && c.pc.lookup(hi+1) < 0 {
			hi++
		}
	}
	off := lo * c.ps
	n := min((hi+1)*c.ps, c.cap) - off
	var got, done time.Duration
	if c.unwritten(off, n) {
		got = c.dataPath(c.issue(at, r, fixed), 0, n, wCopy) // zero-filled pages
		done = c.dataPath(got, 0, r.Length, wCopy|wNet)
	} else {
		t := c.issue(at, r, fixed+p.PerIO)
		d, err := c.submit(t, models.Request{Op: models.Read, Offset: off, Length: n, Flow: r.Flow})
		if err != nil {
			return d, err
		}
		// Verify and decrypt what was read, then copy out what was asked
		// for (after the crypto engine, when it decrypts).
		check, engine := c.dataCost(n, wSum|wCrypt)
		out, _ := c.dataCost(r.Length, wCopy|wNet)
		if engine == 0 {
			done = c.cpu.run(d, check+out)
			got = done - out
		} else {
			got = c.dataPath(d, 0, n, wSum|wCrypt)
			done = c.dataPath(got, 0, r.Length, wCopy|wNet)
		}
	}
	for pg := lo; pg <= hi; pg++ {
		if c.pc.lookup(pg) >= 0 {
			continue
		}
		if _, err := c.insert(got, pg, got); err != nil {
			return done, err
		}
	}
	return max(done, ready), nil
}

// readAhead keeps a sequential stream's read-ahead window filled: when the
// page ReadAhead past the stream's position is not cached, it reads the
// uncached pages up to it without making the current request wait (the
// asynchronous read-ahead Linux starts at its PG_readahead mark).
func (c *Controller) readAhead(t time.Duration, pos int64) error {
	last := min(pos+int64(c.cfg.ReadAhead)/c.ps, (c.cap-1)/c.ps)
	if last <= pos || c.pc.lookup(last) >= 0 {
		return nil
	}
	lo := pos + 1
	for lo < last && c.pc.lookup(lo) >= 0 {
		lo++
	}
	hi := lo
	for hi < last && c.pc.lookup(hi+1) < 0 {
		hi++
	}
	off := lo * c.ps
	n := min((hi+1)*c.ps, c.cap) - off
	var d time.Duration
	if c.unwritten(off, n) {
		d = c.dataPath(t, 0, n, wCopy) // zero-filled pages
	} else {
		t = c.cpu.run(t, c.cfg.CPU.PerIO)
		var err error
		if d, err = c.submit(t, models.Request{Op: models.Read, Offset: off, Length: n}); err != nil {
			return err
		}
		d = c.dataPath(d, 0, n, wSum|wCrypt)
	}
	for pg := lo; pg <= hi; pg++ {
		if _, err := c.insert(t, pg, d); err != nil {
			return err
		}
	}
	return nil
}

// insert caches page pg with data ready at ready, evicting if needed (a
// dirty victim, possible only when every page is dirty, is written back
// first, from t).
func (c *Controller) insert(t time.Duration, pg int64, ready time.Duration) (int32, error) {
	s := c.pc.slot()
	if _, held := c.pc.page(s); held && c.pc.isDirty(s) {
		if _, err := c.writeback(t, s); err != nil {
			return s, err
		}
	}
	c.pc.assign(s, pg, ready)
	return s, nil
}

// write copies the data into the page cache and returns; the pages are
// written back later. A writer that dirtied new pages is throttled when
// dirty pages pass the freerun point (balance, throttle.go).
func (c *Controller) write(at time.Duration, r models.Request) (time.Duration, error) {
	p := &c.cfg.CPU
	t := c.issuePath(at, r, p.PerRequest+c.netRequest(), r.Length, wCopy|wNet)
	if r.Length == 0 {
		return t, nil
	}
	p0, p1 := c.pageOf(r.Offset), c.pageOf(r.End()-1)
	// A partial page that is not cached must be read before it is merged.
	for _, pg := range [2]int64{p0, p1} {
		whole := r.Offset <= pg*c.ps && r.End() >= min((pg+1)*c.ps, c.cap)
		if whole || c.pc.lookup(pg) >= 0 {
			continue
		}
		c.misses++
		if c.unwritten(pg*c.ps, min(c.ps, c.cap-pg*c.ps)) {
			// A hole: the page starts as zeros.
			if _, err := c.insert(t, pg, t); err != nil {
				return t, err
			}
		} else {
			d, err := c.readPage(t, pg)
			if err != nil {
				return d, err
			}
			t = max(t, d)
		}
		if p0 == p1 {
			break
		}
	}
	c.markWritten(r.Offset, r.Length)
	if sync := c.cfg.Encrypted && c.cfg.CryptoWriteThrough; sync || c.cfg.WriteThrough || r.WriteThrough {
		return c.writeThrough(t, r, p0, p1, sync)
	}
	var grow int64
	for pg := p0; pg <= p1; pg++ {
		if s := c.pc.lookup(pg); s < 0 || !c.pc.isDirty(s) {
			grow++
		}
	}
	for pg := p0; pg <= p1; pg++ {
		s := c.pc.lookup(pg)
		if s < 0 {
			var err error
			if s, err = c.insert(t, pg, t); err != nil {
				return t, err
			}
		}
		c.dirty(s, t)
	}
	if grow == 0 {
		return t, nil
	}
	done := c.balance(t, grow)
	if done > t {
		c.storageWaits++ // throttled: paced at the storage's writeback rate
	}
	return done, nil
}

// writeThrough writes r to the storage at once (encrypted on an encrypted
// share) and, with flush, flushes the storage before the write is
// acknowledged; the pages stay cached, clean.
func (c *Controller) writeThrough(t time.Duration, r models.Request, p0, p1 int64, flush bool) (time.Duration, error) {
	c.storageWaits++
	for pg := p0; pg <= p1; pg++ {
		s := c.pc.lookup(pg)
		if s < 0 {
			var err error
			if s, err = c.insert(t, pg, t); err != nil {
				return t, err
			}
			continue
		}
		if c.pc.isDirty(s) {
			c.pc.clean(s) // this write carries the page's data
		}
		c.pc.ready[s] = max(c.pc.ready[s], t)
	}
	t = c.dataPath(t, c.cfg.CPU.PerIO, r.Length, wSum|wCrypt)
	c.writebackBytes += r.Length
	d, err := c.submit(t, models.Request{Op: models.Write, Offset: r.Offset, Length: r.Length, Flow: r.Flow})
	if err != nil || !flush {
		return d, err
	}
	return c.submit(d, models.Request{Op: models.Flush, Flow: r.Flow})
}

// dirty marks the page in slot s dirty with data from t.
func (c *Controller) dirty(s int32, t time.Duration) {
	if c.pc.dirty == 0 {
		c.dirtySince = t
	}
	c.pc.markDirty(s)
	c.pc.ready[s] = max(c.pc.ready[s], t)
}

// readPage brings page pg into the cache from the storage and returns when
// it is there.
func (c *Controller) readPage(t time.Duration, pg int64) (time.Duration, error) {
	t = c.cpu.run(t, c.cfg.CPU.PerIO)
	n := min(c.ps, c.cap-pg*c.ps)
	d, err := c.submit(t, models.Request{Op: models.Read, Offset: pg * c.ps, Length: n})
	if err != nil {
		return d, err
	}
	d = c.dataPath(d, 0, n, wSum|wCrypt)
	if _, err := c.insert(t, pg, d); err != nil {
		return d, err
	}
	return d, nil
}

// trim drops the range from the page cache (dirty pages included: their
// data is discarded) and passes the trim down.
func (c *Controller) trim(at time.Duration, r models.Request) (time.Duration, error) {
	t := c.cpu.run(at, c.cfg.CPU.PerRequest+c.netRequest())
	if c.written != nil && r.Length > 0 {
		// The filesystem punches a hole: granules wholly inside the range
		// read as zeros again.
		g := int64(1) << c.gShift
		for x := (r.Offset + g - 1) >> c.gShift; (x+1)<<c.gShift <= r.End(); x++ {
			c.written[x>>6] &^= 1 << (x & 63)
		}
	}
	if r.Length > 0 {
		p0, p1 := (r.Offset+c.ps-1)/c.ps, r.End()/c.ps // whole pages only
		if p1-p0 <= int64(c.pc.len()) {
			for pg := p0; pg < p1; pg++ {
				if s := c.pc.lookup(pg); s >= 0 {
					c.pc.drop(s)
				}
			}
		} else {
			for s := range c.pc.len() {
				if pg, held := c.pc.page(s); held && pg >= p0 && pg < p1 {
					c.pc.drop(s)
				}
			}
		}
	}
	return c.submit(t, r)
}

// flush writes back every dirty page and the journal, then flushes the
// storage.
func (c *Controller) flush(at time.Duration) (time.Duration, error) {
	c.storageWaits++
	t := c.cpu.run(at, c.cfg.CPU.PerRequest+c.netRequest())
	j, err := c.commit(t)
	if err != nil {
		return j, err
	}
	w, err := c.writebackUntil(t, 0)
	if err != nil {
		return w, err
	}
	t = max(t, j, w)
	for _, l := range c.lanes {
		t = max(t, l)
	}
	return c.submit(t, models.Request{Op: models.Flush})
}
