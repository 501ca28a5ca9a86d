package bench

import (
	"math"
	"math/bits"
	"math/rand/v2"
)

// blockPicker draws block indexes in [0, n) from a job's distribution.
//
// Zipf and pareto follow fio's generators (lib/zipf.c): zipf is Gray et
// al.'s approximation ("Quickly generating billion-record synthetic
// databases", 1994) with zeta summed over at most zetaCap terms, pareto is
// n·u^(log h / log(1-h)). Like fio, the resulting ranks are scattered over
// the range so that hot blocks are not all at the start; here by a
// multiplicative bijection mod n, so no two ranks share a block.
type blockPicker struct {
	kind DistKind
	n    uint64
	// zipf
	alpha, zetan, eta, theta float64
	// pareto
	pow float64
	// scatter: rank r maps to (r*mult + off) mod n
	mult, off uint64
}

const (
	zetaCap     = 1 << 20
	scatterMult = (1 << 61) - 1 // a Mersenne prime: coprime with every n < 2^61
)

func newBlockPicker(d Distribution, n uint64, rng *rand.Rand) *blockPicker {
	p := &blockPicker{kind: d.Kind, n: max(n, 1)}
	switch d.Kind {
	case Zipf:
		p.theta = d.Param
		items := min(p.n, zetaCap)
		for i := uint64(1); i <= items; i++ {
			p.zetan += math.Pow(float64(i), -p.theta)
		}
		if items < p.n { // the tail of the series, by its integral
			if p.theta != 1 {
				p.zetan += (math.Pow(float64(p.n), 1-p.theta) - math.Pow(float64(items), 1-p.theta)) / (1 - p.theta)
			}
		}
		zeta2 := 1 + math.Pow(2, -p.theta)
		p.alpha = 1 / (1 - p.theta)
		p.eta = (1 - math.Pow(2/float64(p.n), 1-p.theta)) / (1 - zeta2/p.zetan)
	case Pareto:
		p.pow = math.Log(d.Param) / math.Log(1-d.Param)
	}
	if d.Kind != Uniform {
		p.mult = scatterMult % p.n
		if p.mult == 0 {
			p.mult = 1
		}
		p.off = rng.Uint64N(p.n)
	}
	return p
}

// pick returns a block index.
func (p *blockPicker) pick(rng *rand.Rand) uint64 {
	var r uint64
	switch p.kind {
	case Uniform:
		return rng.Uint64N(p.n)
	case Zipf:
		u := rng.Float64()
		uz := u * p.zetan
		switch {
		case uz < 1:
			r = 0
		case uz < 1+math.Pow(0.5, p.theta):
			r = 1
		default:
			r = uint64(float64(p.n) * math.Pow(p.eta*u-p.eta+1, p.alpha))
		}
	case Pareto:
		r = uint64(float64(p.n) * math.Pow(rng.Float64(), p.pow))
	}
	return p.scatter(min(r, p.n-1))
}

// scatter maps rank r to a block: (r·mult + off) mod n, a bijection since
// mult and n are coprime.
func (p *blockPicker) scatter(r uint64) uint64 {
	hi, lo := bits.Mul64(r, p.mult)
	_, rem := bits.Div64(hi%p.n, lo, p.n)
	return (rem + p.off) % p.n
}

// sizePicker draws I/O sizes from a bssplit table.
type sizePicker struct {
	sizes []int64
	cum   []int // cumulative percentages
}

func newSizePicker(split []BSSplit) *sizePicker {
	if len(split) == 0 {
		return nil
	}
	p := &sizePicker{}
	total := 0
	for _, s := range split {
		total += s.Pct
		p.sizes = append(p.sizes, s.Size)
		p.cum = append(p.cum, total)
	}
	return p
}

func (p *sizePicker) pick(rng *rand.Rand) int64 {
	x := rng.IntN(100)
	for i, c := range p.cum {
		if x < c {
			return p.sizes[i]
		}
	}
	return p.sizes[len(p.sizes)-1]
}

// mix derives a seed from several numbers (splitmix64 steps), so that each
// job instance gets its own independent stream.
func mix(vals ...uint64) uint64 {
	h := uint64(mixStart)
	for _, v := range vals {
		h = mixStep(h, v)
	}
	return h
}

const mixStart = 0x9E3779B97F4A7C15

// mixStep is one step of mix: mix(a, b) is mixStep(mixStep(mixStart, a), b).
func mixStep(h, v uint64) uint64 {
	h ^= v
	h += 0x9E3779B97F4A7C15
	z := h
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return z ^ (z >> 31)
}
