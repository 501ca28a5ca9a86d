package ssd

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/nasemu/nasemu/models"
)

// Stimulus is a closed-loop synthetic workload: QueueDepth requests of
// BlockSize bytes are kept outstanding (a new one is issued the moment one
// completes), sequential or uniformly random (aligned to BlockSize) within
// [Offset, Offset+Span). Span 0 means up to the end of the device. Total
// queue depth is what matters, so "QD32 x 8 threads" is QueueDepth 256.
type Stimulus struct {
	Op         models.Op
	BlockSize  int64
	Random     bool
	QueueDepth int
	Offset     int64
	Span       int64
	Seed       uint64 // seeds the random offsets
}

// Load runs a Stimulus against a device in virtual time, remembering its
// position (sequential cursor, random stream) between calls to Run.
type Load struct {
	s      Stimulus
	rng    *rand.Rand
	cursor int64
	heap   []time.Duration // completion time of each queue slot (min-heap)
}

// NewLoad returns a Load for s.
func NewLoad(s Stimulus) *Load {
	return &Load{s: s, rng: rand.New(rand.NewPCG(s.Seed, 0x55d)), heap: make([]time.Duration, 0, max(s.QueueDepth, 1))}
}

// Run issues n requests, the first at `at`, and returns when the last
// completes. The queue starts empty at `at`.
func (l *Load) Run(dev models.Device, at time.Duration, n int64) (time.Duration, error) {
	s := l.s
	if s.BlockSize <= 0 || s.QueueDepth <= 0 {
		return at, fmt.Errorf("%w: stimulus needs a positive block size and queue depth", models.ErrInvalid)
	}
	span := s.Span
	if span == 0 {
		span = dev.Capacity() - s.Offset
	}
	blocks := span / s.BlockSize
	if blocks <= 0 {
		return at, fmt.Errorf("%w: stimulus span %d smaller than its block size", models.ErrInvalid, span)
	}
	l.heap = l.heap[:0]
	for range min(int64(s.QueueDepth), n) {
		l.heap = append(l.heap, at)
	}
	end := at
	for i := int64(0); i < n; i++ {
		t := l.heap[0]
		var off int64
		if s.Random {
			off = l.rng.Int64N(blocks)
		} else {
			off = l.cursor
			l.cursor = (l.cursor + 1) % blocks
		}
		done, err := dev.Submit(t, models.Request{Op: s.Op, Offset: s.Offset + off*s.BlockSize, Length: s.BlockSize})
		if err != nil {
			return end, err
		}
		end = max(end, done)
		l.heap[0] = done
		siftDown(l.heap)
	}
	return end, nil
}

func siftDown(h []time.Duration) {
	i := 0
	for {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && h[c+1] < h[c] {
			c++
		}
		if h[i] <= h[c] {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}

// SteadyState reports whether the last five rounds of a measurement series
// (IOPS or MB/s per round) are in steady state as SNIA's Solid State
// Storage Performance Test Specification defines it: within the 5-round
// measurement window, the data excursion (max - min) is at most 20 % of the
// window's mean, and the excursion of the least-squares line over the
// window (|slope| x 4 rounds) is at most 10 % of the mean.
func SteadyState(series []float64) bool {
	const window = 5
	if len(series) < window {
		return false
	}
	y := series[len(series)-window:]
	mean, lo, hi := 0.0, y[0], y[0]
	for _, v := range y {
		mean += v
		lo, hi = min(lo, v), max(hi, v)
	}
	mean /= window
	if mean <= 0 || hi-lo > 0.2*mean {
		return false
	}
	// x = 0..4, mean x = 2, sum (x-2)^2 = 10.
	slope := 0.0
	for i, v := range y {
		slope += float64(float64(i-2) * (v - mean))
	}
	slope /= 10
	return abs(slope)*(window-1) <= 0.1*mean
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// PreconditionResult is what Precondition measured.
type PreconditionResult struct {
	End    time.Duration // virtual time when the last round completed
	Rounds []float64     // IOPS of each test-stimulus round
	Steady bool          // the last five rounds met SteadyState
}

// Precondition brings d to the steady state of a test stimulus, in virtual
// time from `at`, following SNIA PTS-E:
//
//  1. Purge: every block is erased and the mapping forgotten (a sanitize
//     block erase), so the test starts from a known state.
//  2. Workload-independent preconditioning: the whole user capacity is
//     written twice sequentially with 128 KiB writes at queue depth 32.
//  3. Workload-dependent preconditioning: the test stimulus runs in rounds
//     of roundIOs requests until the per-round IOPS meet SteadyState, or
//     for maxRounds rounds.
//
// Enterprise datasheets quote random-write IOPS measured this way; the
// result's last rounds are that figure.
func Precondition(d *Drive, at time.Duration, stim Stimulus, roundIOs int64, maxRounds int) (PreconditionResult, error) {
	res := PreconditionResult{}
	t := d.Purge(at)
	fill := NewLoad(Stimulus{Op: models.Write, BlockSize: 128 << 10, QueueDepth: 32})
	t, err := fill.Run(d, t, 2*d.Capacity()/(128<<10))
	if err != nil {
		return res, err
	}
	load := NewLoad(stim)
	for range maxRounds {
		end, err := load.Run(d, t, roundIOs)
		if err != nil {
			return res, err
		}
		res.Rounds = append(res.Rounds, float64(roundIOs)/(end-t).Seconds())
		t = end
		if SteadyState(res.Rounds) {
			res.Steady = true
			break
		}
	}
	res.End = t
	return res, nil
}

// Purge erases every block and forgets every mapping, as a sanitize block
// erase does; it returns when the last die has finished erasing. Erase
// counts and the host and NAND byte counters are lifetime figures and stay.
func (d *Drive) Purge(at time.Duration) time.Duration {
	end := max(at, d.quiescent)
	for di := range d.dies {
		dd := &d.dies[di]
		n := 0
		for b := range d.geo.blocksPerDie {
			blk := di*d.geo.blocksPerDie + b
			if d.state[blk] != blkFree || d.wp[blk] > 0 {
				d.erases[blk]++
				n++
			}
		}
		s, e := dd.busy.Reserve(at, time.Duration(n)*d.cfg.Erase)
		dd.ops.add(dieOp{start: s, end: e, erase: true})
		end = max(end, e)
	}
	d.reset()
	d.quiescent = end
	return end
}
