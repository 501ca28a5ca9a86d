package hdd

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/nasemu/nasemu/models"
)

// Drive is the performance model of one hard disk drive. It is not safe
// for concurrent use.
type Drive struct {
	cfg  Config
	g    *geometry
	seek seekCurve

	ovh        float64 // command overhead, ns
	linkNsPerB float64 // host link, ns per byte
	writeBack  bool
	wcBytes    int64 // write cache capacity
	raBytes    int64 // read-ahead per segment
	segBytes   int64 // capacity of one read segment

	// Timelines (ns of simulated time, float so that rotational arithmetic
	// stays exact across back-to-back transfers).
	headFree     float64 // end of the head's last committed work
	headX        float64 // radial position of the head at headFree
	linkFree     float64 // end of the host link's last transfer
	lastWriteEnd float64 // when the last acknowledged write reached the media

	segs    []segment
	ranges  []byteRange // [start, limit) of each segment, empty if invalid; scanned on every read
	segNext int
	ra      int // index of the segment being read ahead into, or −1

	dirty      []extent
	dirtyBytes int64
	// The latest cached writes' arrivals (see noteArrival), and the
	// newest arrival the ring has forgotten.
	arr       [arrivalRing]arrival
	arrNext   int
	arrLen    int
	arrForgot float64

	queue    [maxQueueDepth]pending
	qLen     int
	hist     [maxQueueDepth]pending // positions of the latest media commands
	histNext int
	histLen  int
	// The queue as the command being submitted found it (see queueAt).
	qAll, qMedia int
	// When the media command that the arriving one replaces completed
	// (less than a command overhead before it arrived), or −Inf.
	qReissuedAfter float64
	recent         recentWindows
	// Latest completion of any command, and of any media command, given
	// out so far.
	recentMaxDone, lastMediaDone float64

	counters

	// traceHead, when set (by tests), is told of every span of head work:
	// a media command's slot or a destage step with the bytes it
	// transferred, or a read-ahead with the range it could fill.
	traceHead func(start, end float64, a, b int64, kind headWork)
}

// headWork is what the head did in a span reported to traceHead.
type headWork int8

const (
	workRead headWork = iota
	workWrite
	workDestage
	workReadAhead
)

var (
	_ models.Device   = (*Drive)(nil)
	_ models.Observer = (*Drive)(nil)
)

// New returns a drive model. The seed sets the spindle's angle at time 0,
// so that drives of an array are not in lockstep; nothing else is random.
func New(cfg Config, seed uint64) (*Drive, error) {
	c, g, s, err := cfg.build(0)
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 0x68646420737069)) // "hdd spi"
	g.phase = rng.Float64() * g.rev
	d := &Drive{
		cfg:        c,
		g:          g,
		seek:       s,
		ovh:        float64(c.Overhead),
		linkNsPerB: 1e9 / (interfaceMBps[c.Interface] * 1e6),
		writeBack:  !c.WriteCacheDisabled && c.CacheSize > 0,
		wcBytes:    int64(c.CacheSize),
		raBytes:    int64(c.ReadAhead),
		ra:         -1,
		// No media command has completed: none can count as reissued.
		lastMediaDone: math.Inf(-1),
		arrForgot:     math.Inf(-1),
		dirty:         make([]extent, 0, c.WriteCacheEntries),
	}
	if c.CacheSize > 0 {
		d.segs = make([]segment, c.CacheSegments)
		d.ranges = make([]byteRange, c.CacheSegments)
		d.segBytes = max(int64(c.CacheSize)/int64(c.CacheSegments), d.raBytes)
	}
	return d, nil
}

// Capacity implements models.Device.
func (d *Drive) Capacity() int64 { return d.g.capacity }

// Config returns the drive's configuration with defaults filled in.
func (d *Drive) Config() Config { return d.cfg }

// Submit implements models.Device. Reads and writes pay the command
// overhead, then are served from the buffer or by the mechanism (seek,
// rotational wait, media transfer at the zone's rate) and cross the host
// link. Flush waits until every acknowledged write is on the media. Trim
// costs nothing (conventional drives ignore it), nor do file operations.
func (d *Drive) Submit(at time.Duration, r models.Request) (time.Duration, error) {
	if err := models.CheckRange(r, d.g.capacity); err != nil {
		return at, err
	}
	t := float64(at)
	d.qAll, d.qMedia, d.qReissuedAfter = d.queueAt(t)
	var done float64
	media := false
	switch r.Op {
	case models.Read:
		done, media = d.read(t, r.Offset, r.End())
	case models.Write:
		done, media = d.write(t, r.Offset, r.End())
	case models.Flush:
		done = d.flush(t)
	default:
		return at, nil
	}
	d.queueDepthMax = max(d.queueDepthMax, int64(min(d.qAll, maxQueueDepth)))
	// Remember the completion as the caller sees it, so that a command
	// issued at that instant does not count it as still queued.
	done = math.Round(done)
	d.remember(t, done, media)
	return time.Duration(done), nil
}

// read serves [a, b) arriving at t and reports whether it used the media.
func (d *Drive) read(t float64, a, b int64) (float64, bool) {
	d.reads++
	d.bytesRead += b - a
	cmd := t + d.ovh
	if a == b {
		return cmd, false
	}
	d.destageIdle(t)
	if ready, ok := d.cached(a, b, cmd); ok {
		d.readHits++
		return d.toHost(cmd, ready, b-a), false
	}
	end, c := d.mediaOp(cmd, a, b, false)
	d.startReadAhead(c, end)
	return d.toHost(cmd, end, b-a), true
}

// toHost moves n bytes that are all in the buffer by ready over the link,
// which may start as soon as the command is decoded: the transfer streams
// behind the media.
func (d *Drive) toHost(cmd, ready float64, n int64) float64 {
	start := max(cmd, d.linkFree)
	xfer := float64(float64(n) * d.linkNsPerB) // rounded: no FMA, the same sums on every CPU
	done := max(ready, start+xfer)
	d.linkFree = done
	d.linkNs += xfer
	return done
}

// write serves [a, b) arriving at t and reports whether it waited for the
// media.
func (d *Drive) write(t float64, a, b int64) (float64, bool) {
	d.writes++
	d.bytesWritten += b - a
	cmd := t + d.ovh
	if a == b {
		return cmd, false
	}
	d.invalidate(a, b)
	cacheable := d.writeBack && b-a <= d.wcBytes
	if cacheable {
		// The head may keep destaging while this command is decoded: the
		// buffer takes the data without it.
		d.destageIdle(cmd)
	} else {
		d.destageIdle(t)
	}
	start := max(cmd, d.linkFree)
	xfer := float64(float64(b-a) * d.linkNsPerB) // rounded: no FMA
	in := start + xfer                           // data is in the buffer
	d.linkFree = in
	d.linkNs += xfer
	if cacheable {
		d.writeAbsorbed++
		return max(in, d.absorb(a, b, cmd, in)), false
	}
	end, _ := d.mediaOp(cmd, a, b, true)
	done := max(in, end)
	d.lastWriteEnd = max(d.lastWriteEnd, done)
	return done, true
}

// flush destages every dirty byte and waits for the media.
func (d *Drive) flush(t float64) float64 {
	d.flushes++
	cmd := t + d.ovh
	d.destageIdle(cmd)
	for len(d.dirty) > 0 {
		d.destageNow(cmd)
	}
	return max(cmd, d.lastWriteEnd)
}
