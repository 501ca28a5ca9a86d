package bench

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// sprandom is fio's SPRandom preconditioning (sprandom=1, after SanDisk's
// method): one pass over a drive's physical capacity whose offsets leave
// the drive's regions with the share of invalid blocks a drive in random
// write steady state has, so that a drive reaches steady state after
// writing its capacity about once instead of several times.
//
// The steady state comes from Desnoyers' model ("Analytic Models of SSD
// Write Performance", ACM TOS 8(2), 2012): under greedy garbage
// collection i·f(i) is constant, where f(i) is the share of the drive in
// blocks with i valid pages; the block collected has validity
// 1 − 1/WA, with WA ≈ 0.5/OP + 0.7 for over-provisioning OP. fio's
// sprandom.c resamples that curve into equal-sized regions; this is the
// same computation and the same offset sequence: the offsets of the file
// in an LFSR's order (each block once), and after each region the blocks
// of the previous region drawn (with its invalid share as probability) for
// rewriting, which invalidates them, before the new region's fresh blocks.
type sprandom struct {
	invalid   []int  // per region: invalid share in 1/sprPrecision
	perRegion uint64 // writes of a region
	cur       int    // region being written
	phase     int
	count     [2]uint64 // rewrites staged for the next region, by phase
	remaining uint64    // writes left in the current region
	staged    []uint64  // blocks to rewrite in the next region
	queue     []uint64  // blocks to rewrite in this region
	deferred  bool      // spr_cs set: rewrites wait one more region
	rng       *rand.Rand
}

// sprPrecision is fio's PCT_PRECISION: shares are drawn in 1/10000.
const sprPrecision = 10000

// sprPhysical is the bytes SPRandom writes for a logical size: the
// logical size plus over-provisioning, a multiple of bs (fio's
// sprandom_physical_size).
func sprPhysical(op float64, logical, bs int64) int64 {
	size := logical + int64(math.Ceil(float64(logical)*op))
	return size - size%bs
}

// sprValidity returns each region's expected valid share, the least valid
// region first (fio's compute_validity_dist).
func sprValidity(regions int, op float64) []float64 {
	waf := 0.5/op + 0.7
	gc := 1 - 1/waf
	valid := linspace(1, gc, regions)
	// Each validity level's relative share of the drive is gc/validity
	// (i·f(i) constant); cumulated, that places the levels on the drive.
	xs := make([]float64, regions)
	acc := 0.0
	for i, v := range valid {
		acc += 1 / v
		xs[i] = acc
	}
	// Resample at equally spaced places: equal-sized regions.
	out := make([]float64, regions)
	for i, x := range linspace(xs[0], xs[regions-1], regions) {
		out[regions-1-i] = interp(x, xs, valid)
	}
	return out
}

func linspace(a, b float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		if n == 1 {
			out[i] = a
			break
		}
		out[i] = a + float64(i)*(b-a)/float64(n-1)
	}
	return out
}

// interp interpolates y(x) linearly between the points (xs[i], ys[i]),
// xs increasing; outside them it is the nearest end's y.
func interp(x float64, xs, ys []float64) float64 {
	if x <= xs[0] {
		return ys[0]
	}
	for i := 0; i+1 < len(xs); i++ {
		if x <= xs[i+1] {
			if xs[i+1]-xs[i] < 1e-9 {
				return ys[i]
			}
			return ys[i] + (ys[i+1]-ys[i])*(x-xs[i])/(xs[i+1]-xs[i])
		}
	}
	return ys[len(ys)-1]
}

// newSPRandom sets up SPRandom over logical bytes written in blocks of bs.
func newSPRandom(j *Job, logical, bs int64, rng *rand.Rand) (*sprandom, error) {
	phys := sprPhysical(j.SPROP, logical, bs)
	regionSize := phys / int64(j.SPRRegions)
	if regionSize < bs {
		return nil, fmt.Errorf("sprandom: %d regions of %d bytes leave less than a block (%d bytes) per region; give fewer spr_num_regions", j.SPRRegions, phys, bs)
	}
	if j.SPRCache > regionSize {
		return nil, fmt.Errorf("sprandom: spr_cs %d is larger than a region (%d bytes: %d regions of %d); give fewer spr_num_regions", j.SPRCache, regionSize, j.SPRRegions, phys)
	}
	s := &sprandom{perRegion: uint64(regionSize / bs), deferred: j.SPRCache > 0, rng: rng}
	for _, v := range sprValidity(j.SPRRegions, j.SPROP) {
		s.invalid = append(s.invalid, int(math.Round((1-v)*sprPrecision)))
	}
	s.remaining = s.perRegion
	return s, nil
}

// next returns the next block to write; fresh gives the next block of the
// LFSR sequence (false when it has given every block). It returns false
// when the pass is over.
func (s *sprandom) next(fresh func() (uint64, bool)) (uint64, bool) {
	if b, ok := s.pop(!s.deferred); ok {
		return b, true
	}
	if s.remaining == 0 {
		if b, ok := s.pop(s.deferred); ok {
			return b, true
		}
		if s.cur >= len(s.invalid) {
			return 0, false
		}
		s.count[s.phase] = 0
		s.cur++
		s.phase ^= 1
		s.remaining = s.perRegion - min(s.count[s.phase], s.perRegion)
		s.queue = append(s.queue, s.staged...)
		s.staged = s.staged[:0]
	}
	b, ok := fresh()
	if !ok {
		if b, ok := s.pop(s.deferred); ok {
			return b, true
		}
		return 0, false
	}
	if s.remaining > 0 {
		s.remaining--
	}
	s.stage(b)
	return b, true
}

// pop takes the next rewrite of this region when allowed, staging it
// again with the region's probability.
func (s *sprandom) pop(allowed bool) (uint64, bool) {
	if !allowed || len(s.queue) == 0 {
		return 0, false
	}
	b := s.queue[0]
	s.queue = s.queue[1:]
	s.stage(b)
	return b, true
}

// stage marks block b for a rewrite in the next region with the current
// region's invalid share as probability.
func (s *sprandom) stage(b uint64) {
	if s.rng.IntN(sprPrecision+1) <= s.invalid[min(s.cur, len(s.invalid)-1)] {
		s.staged = append(s.staged, b)
		s.count[s.phase^1]++
	}
}
