package hdd

import "math"

// geometry maps a byte offset (LBA 0 at the outer edge) to where it lies
// on the platter: its radial position x along the stroke (0 outer edge, 1
// inner edge) and its media time T, the time a continuous transfer from
// byte 0 would take to reach it. T is monotone and piecewise linear (one
// slope per zone), so the transfer time of any range is T(end) − T(start)
// even across zones, and the angle of a byte is T mod one revolution: the
// head passes over byte b at the times t with (t + phase) mod rev =
// T(b) mod rev. Sequential transfers therefore continue without a gap
// across track and zone boundaries, as skewed tracks do on a real drive.
type geometry struct {
	capacity  int64
	rev       float64 // ns per revolution
	phase     float64 // spindle angle at t = 0, as ns of rotation
	cylinders float64 // tracks per surface; |Δx|·cylinders < 1 needs no seek
	zones     []zone

	// zoneOf's shortcut: the zone holding byte k<<bucketShift is
	// bucketZone[k], for every k up to capacity>>bucketShift.
	bucketZone  []uint8
	bucketShift uint
}

// zoneBuckets bounds the buckets of geometry.bucketZone: fine enough that
// a bucket rarely holds a zone boundary (16 zones span 16 to 32 buckets
// each), small enough to stay in the CPU cache.
const zoneBuckets = 512

// zone is a band of equal radial width recorded at a constant rate.
type zone struct {
	start, end int64   // byte range
	nsPerByte  float64 // media time per byte
	t0         float64 // T(start)
	x0         float64 // x(start)
	xPerByte   float64
	xPerNs     float64 // xPerByte / nsPerByte, to place the head from a time
	trackBytes int64   // bytes passing under the head in one revolution
}

// newGeometry lays out the zones of c (with defaults applied). Equal
// radial width means equal track counts, so a zone's share of the capacity
// is proportional to its rate.
func newGeometry(c Config, phase float64) *geometry {
	g := &geometry{
		capacity: int64(c.Capacity),
		rev:      60e9 / c.RPM,
		phase:    phase,
		zones:    make([]zone, c.Zones),
	}
	rates := make([]float64, c.Zones) // bytes per ns
	var sum float64
	for i := range rates {
		f := 0.0
		if c.Zones > 1 {
			f = float64(i) / float64(c.Zones-1)
		}
		rates[i] = (c.OuterMBps - (c.OuterMBps-c.InnerMBps)*f) * 1e6 / 1e9
		sum += rates[i]
	}
	var start int64
	var t float64
	for i := range g.zones {
		end := g.capacity
		if i < len(g.zones)-1 {
			end = start + int64(float64(g.capacity)*rates[i]/sum)
		}
		z := &g.zones[i]
		z.start, z.end = start, end
		z.nsPerByte = 1 / rates[i]
		z.t0 = t
		z.x0 = float64(i) / float64(c.Zones)
		if n := end - start; n > 0 {
			z.xPerByte = 1 / float64(c.Zones) / float64(n)
		}
		z.xPerNs = z.xPerByte / z.nsPerByte
		z.trackBytes = max(int64(rates[i]*g.rev), 512)
		t += float64(end-start) * z.nsPerByte
		start = end
	}
	g.cylinders = c.cylinders()
	for g.capacity>>g.bucketShift >= zoneBuckets {
		g.bucketShift++
	}
	g.bucketZone = make([]uint8, g.capacity>>g.bucketShift+1)
	for k := range g.bucketZone {
		g.bucketZone[k] = uint8(g.searchZone(int64(k) << g.bucketShift))
	}
	return g
}

// zoneOf returns the index of the zone holding byte b ≥ 0 (the last zone
// for b ≥ capacity). It runs several times per command, so instead of a
// binary search over the zones — whose branches go either way at random
// for random offsets — it starts from the zone of the start of b's bucket
// and steps over any zone boundaries between that and b: the same answer
// as searchZone, at the cost of a shift and a load.
func (g *geometry) zoneOf(b int64) int {
	k := min(max(int(b>>g.bucketShift), 0), len(g.bucketZone)-1)
	i := int(g.bucketZone[k])
	for i+1 < len(g.zones) && g.zones[i+1].start <= b {
		i++
	}
	return i
}

// searchZone is zoneOf by binary search: the last zone starting at or
// before b.
func (g *geometry) searchZone(b int64) int {
	zs := g.zones
	lo, hi := 0, len(zs)-1
	for lo < hi {
		m := (lo + hi + 1) / 2
		if zs[m].start <= b {
			lo = m
		} else {
			hi = m - 1
		}
	}
	return lo
}

// locate returns the media time T(b) and radial position x(b) of byte b.
func (g *geometry) locate(b int64) (t, x float64) {
	z := &g.zones[g.zoneOf(b)]
	d := float64(b - z.start)
	return z.t0 + d*z.nsPerByte, z.x0 + d*z.xPerByte
}

// locateRange returns the media times and radial positions of a and b
// (a ≤ b), with one zone lookup when both lie in the same zone.
func (g *geometry) locateRange(a, b int64) (ta, xa, tb, xb float64) {
	i := g.zoneOf(a)
	z := &g.zones[i]
	d := float64(a - z.start)
	ta, xa = z.t0+float64(d*z.nsPerByte), z.x0+float64(d*z.xPerByte)
	if b >= z.end && i < len(g.zones)-1 {
		tb, xb = g.locate(b)
		return
	}
	d = float64(b - z.start)
	return ta, xa, z.t0 + float64(d*z.nsPerByte), z.x0 + float64(d*z.xPerByte)
}

// xAtTime returns the radial position of the byte whose media time is t
// (the inverse of locate, for a read-ahead stopped part way). hint is a
// zone index to try first: a read-ahead rarely leaves the zone it began in.
func (g *geometry) xAtTime(t float64, hint int) float64 {
	zs := g.zones
	lo := hint
	if !(zs[lo].t0 <= t && (lo == len(zs)-1 || t < zs[lo+1].t0)) {
		hi := len(zs) - 1
		lo = 0
		for lo < hi {
			m := (lo + hi + 1) / 2
			if zs[m].t0 <= t {
				lo = m
			} else {
				hi = m - 1
			}
		}
	}
	z := &zs[lo]
	return min(z.x0+(t-z.t0)*z.xPerNs, 1)
}

// rotWait returns how long the head, over the right track at time at, waits
// for the byte of media time tb to come round.
func (g *geometry) rotWait(at, tb float64) float64 {
	w := tb - (at + g.phase)
	w -= g.rev * math.Floor(w/g.rev)
	if w > g.rev-rotSlack {
		// The byte passed under the head a few ns ago: float rounding on a
		// back-to-back transfer, not a missed revolution.
		w = 0
	}
	return w
}

// rotSlack absorbs float rounding in rotational arithmetic (ns).
const rotSlack = 100

// trackBytesAt returns the bytes in one revolution at byte b.
func (g *geometry) trackBytesAt(b int64) int64 { return g.zones[g.zoneOf(b)].trackBytes }
