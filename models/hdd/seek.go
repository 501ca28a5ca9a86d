package hdd

import (
	"math"
)

// seekCurve is the time to move the heads a fraction d of the stroke. Short
// seeks are dominated by the actuator accelerating and decelerating
// (time ∝ √d); long ones coast at top speed (time linear in d). So
//
//	t(d) = t2t + b·√d                       for d ≤ d0
//	t(d) = t(d0) + b/(2√d0) · (d − d0)      for d > d0
//
// with value and slope continuous at d0. b and d0 are fitted so that t(1)
// is the full-stroke time and the mean of t over the distances between two
// uniformly random LBAs (the way "average seek" is measured) is the
// datasheet's average. Seeks shorter than one cylinder cost nothing: the
// head is already over the track.
type seekCurve struct {
	t2t, b, d0, atD0, slope float64 // ns
	minD                    float64 // distance of one cylinder
}

// time returns the seek time (ns) over a distance d in [0, 1].
func (s *seekCurve) time(d float64) float64 {
	if d < s.minD {
		return 0
	}
	if d <= s.d0 {
		return s.t2t + float64(s.b*math.Sqrt(d))
	}
	return s.atD0 + float64(s.slope*(d-s.d0))
}

// curveFor returns the curve through t2t and full with the split at d0.
func curveFor(t2t, full, d0, minD float64) seekCurve {
	b := float64((full-t2t)*2*math.Sqrt(d0)) / (1 + d0)
	s := seekCurve{t2t: t2t, b: b, d0: d0, minD: minD}
	s.atD0 = t2t + float64(b*math.Sqrt(d0))
	s.slope = b / (2 * math.Sqrt(d0))
	return s
}

// fitSeek finds the curve of c on geometry g, or an error naming avg_seek
// when no curve of this family has the datasheet's average.
func fitSeek(c Config, g *geometry) (seekCurve, error) {
	t2t, avg, full := float64(c.TrackToTrack), float64(c.AvgSeek), float64(c.FullStroke)
	minD := 1 / g.cylinders
	dist := newDistanceLaw(g)
	mean := func(d0 float64) float64 {
		s := curveFor(t2t, full, d0, 0)
		return dist.mean(s.time)
	}
	// The mean grows with d0, from the all-linear curve (d0 → 0) to the
	// all-square-root one (d0 = 1).
	lo, hi := 1e-9, 1.0
	mLo, mHi := mean(lo), mean(hi)
	if avg < mLo || avg > mHi {
		return seekCurve{}, configErr("avg_seek", "%.2f ms: with track_to_track %.2f ms and full_stroke %.2f ms the average seek can only be %.2f–%.2f ms",
			avg/1e6, t2t/1e6, full/1e6, mLo/1e6, mHi/1e6)
	}
	for range 60 {
		m := float64((lo + hi) / 2)
		if mean(m) < avg {
			lo = m
		} else {
			hi = m
		}
	}
	return curveFor(t2t, full, float64((lo+hi)/2), minD), nil
}

// distanceLaw is the distribution of the radial distance between two
// uniformly random LBAs. Outer zones hold more bytes per unit of radius,
// so positions are not uniform along the stroke. The stroke is cut into
// bins; within a pair of bins the distance follows the difference of two
// uniform variables, integrated by a midpoint rule.
type distanceLaw struct {
	h      float64   // bin width
	weight []float64 // weight[m]: probability that the two LBAs lie m bins apart
}

const (
	lawBinsPerZone = 32
	lawMinBins     = 512
	lawQuad        = 8 // quadrature points per bin pair
)

func newDistanceLaw(g *geometry) distanceLaw {
	nz := len(g.zones)
	per := max(lawBinsPerZone, (lawMinBins+nz-1)/nz)
	n := nz * per
	p := make([]float64, n) // probability mass of each bin
	for i, z := range g.zones {
		f := float64(z.end-z.start) / float64(g.capacity)
		for j := range per {
			p[i*per+j] = f / float64(per)
		}
	}
	w := make([]float64, n)
	for m := range n {
		var s float64
		for j := 0; j+m < n; j++ {
			s += p[j] * p[j+m]
		}
		if m > 0 {
			s *= 2
		}
		w[m] = s
	}
	return distanceLaw{h: 1 / float64(n), weight: w}
}

// mean returns E[f(distance)].
func (l distanceLaw) mean(f func(float64) float64) float64 {
	var total float64
	for m, w := range l.weight {
		if w == 0 {
			continue
		}
		var e float64
		if m == 0 {
			// d = h·s with density 2(1 − s) on [0, 1].
			for k := range lawQuad {
				s := (float64(k) + 0.5) / lawQuad
				e += float64(2 * (1 - s) / lawQuad * f(l.h*s))
			}
		} else {
			// d = h·(m + u), u triangular on [−1, 1].
			for k := range 2 * lawQuad {
				u := (float64(k)+0.5)/lawQuad - 1
				e += float64((1 - math.Abs(u)) / lawQuad * f(l.h*(float64(m)+u)))
			}
		}
		total += float64(w * e)
	}
	return total
}
