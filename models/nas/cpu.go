package nas

import (
	"time"

	"github.com/nasemu/nasemu/models"
)

// Computer is implemented by devices that own CPU cores on which the
// layers above them charge their own work: an SMB server's per-request
// processing, SMB signing and encryption. Compute runs fixed + bytes /
// bytesPerSecond of work on the core that frees first, starting no earlier
// than at, and returns when it is done. bytesPerSecond is one core's rate;
// 0 charges only fixed.
type Computer interface {
	Compute(at, fixed time.Duration, bytes int64, bytesPerSecond float64) (done time.Duration)
}

var _ Computer = (*Controller)(nil)

// cpu is the controller's cores, each a timeline, and the crypto engine
// when there is one.
type cpu struct {
	cores      []timeline
	busy       time.Duration // core time charged, all cores
	engine     timeline
	engineBusy time.Duration
}

// gaps is how many idle intervals a timeline remembers.
const gaps = 4

// timeline is one resource that does one thing at a time. Besides the end
// of its last reservation it remembers a few idle intervals before it, so
// that work reserved for a future time (a read's decryption when its data
// arrives) does not block work that fits before it: without that, one core
// with reads in flight to four spindles would serialise them.
type timeline struct {
	end time.Duration
	gap [gaps]struct{ from, to time.Duration }
}

// start returns the earliest time from at at which cost fits, the gap it
// fits in (-1: after end), and the idle time the placement leaves in front
// of it, which callers choosing among timelines minimise on ties.
func (tl *timeline) start(at, cost time.Duration) (s time.Duration, where int, waste time.Duration) {
	s, where = max(at, tl.end), -1
	waste = s - tl.end
	for i := range tl.gap {
		g := &tl.gap[i]
		gs := max(at, g.from)
		if gs+cost <= g.to && gs < s {
			s, where, waste = gs, i, gs-g.from
		}
	}
	return s, where, waste
}

// reserve books cost at the earliest time from at and returns its end.
func (tl *timeline) reserve(at, cost time.Duration) time.Duration {
	s, w, _ := tl.start(at, cost)
	return tl.take(s, cost, w)
}

// take reserves [s, s+cost) found by start.
func (tl *timeline) take(s, cost time.Duration, where int) time.Duration {
	e := s + cost
	if where >= 0 {
		g := &tl.gap[where]
		before := struct{ from, to time.Duration }{g.from, s}
		g.from = e
		if before.to > before.from {
			tl.remember(before.from, before.to)
		}
		return e
	}
	if s > tl.end {
		tl.remember(tl.end, s)
	}
	tl.end = e
	return e
}

// remember records an idle interval in an empty slot, or in place of the
// one that ends first: time moves forward, so it is the least useful.
func (tl *timeline) remember(from, to time.Duration) {
	w := 0
	for i := range tl.gap {
		g := tl.gap[i]
		if g.to <= g.from {
			w = i
			break
		}
		if g.to < tl.gap[w].to {
			w = i
		}
	}
	tl.gap[w].from, tl.gap[w].to = from, to
}

// run reserves cost on the core that can start it first and returns when
// it completes. Among cores that can start at the same time it takes the
// one the work fits most snugly (least idle time left in front of it), so
// that short tasks do not scatter idle gaps over every core.
func (c *cpu) run(at, cost time.Duration) time.Duration {
	best, bestStart, bestWhere, bestWaste := -1, time.Duration(0), -1, time.Duration(0)
	for i := range c.cores {
		s, w, waste := c.cores[i].start(at, cost)
		if best < 0 || s < bestStart || (s == bestStart && waste < bestWaste) {
			best, bestStart, bestWhere, bestWaste = i, s, w, waste
		}
	}
	c.busy += cost
	return c.cores[best].take(bestStart, cost, bestWhere)
}

// onEngine reserves the crypto engine for d from t.
func (c *cpu) onEngine(t, d time.Duration) time.Duration {
	c.engineBusy += d
	return c.engine.reserve(t, d)
}

// per returns the time n bytes take at rate bytes/s; a zero rate is free.
func per(n int64, rate models.Bytes) time.Duration {
	if rate <= 0 || n <= 0 {
		return 0
	}
	return time.Duration(float64(n) / float64(rate) * 1e9)
}

// Compute implements Computer.
func (c *Controller) Compute(at, fixed time.Duration, bytes int64, bytesPerSecond float64) time.Duration {
	cost := fixed
	if bytesPerSecond > 0 && bytes > 0 {
		cost += time.Duration(float64(bytes) / bytesPerSecond * 1e9)
	}
	return c.cpu.run(at, cost)
}

// Work on the data path, as flags for dataPath.
const (
	wCopy  = 1 << iota // page cache <-> buffers
	wNet               // through the network stack
	wSum               // data checksum
	wCrypt             // encrypt or decrypt (when the share is encrypted)
)

// dataPath charges fixed plus the per-byte work what on n bytes: the core
// part on one core, then the crypto engine's part when AES is offloaded to
// an engine. It returns when all of it is done.
func (c *Controller) dataPath(at, fixed time.Duration, n int64, what int) time.Duration {
	p := &c.cfg.CPU
	cost := fixed
	if what&wCopy != 0 {
		cost += per(n, p.CopyRate)
	}
	if what&wNet != 0 && !c.cfg.Local {
		cost += per(n, p.NetRate)
	}
	if what&wSum != 0 {
		cost += per(n, p.ChecksumRate)
	}
	var engine time.Duration
	if what&wCrypt != 0 && c.cfg.Encrypted && n > 0 {
		extents := (n + int64(c.cfg.CryptoExtent) - 1) / int64(c.cfg.CryptoExtent)
		cost += time.Duration(extents) * p.CryptoPerOp
		switch {
		case !p.HasCryptoOffload:
			cost += per(n, p.AESRate)
		case p.CryptoEngine:
			engine = per(n, p.OffloadAESRate)
		default:
			cost += per(n, p.OffloadAESRate)
		}
	}
	t := c.cpu.run(at, cost)
	if engine > 0 {
		t = c.cpu.onEngine(t, engine)
	}
	return t
}

// netRequest is the network stack's per-request cost, or 0 for local
// clients.
func (c *Controller) netRequest() time.Duration {
	if c.cfg.Local {
		return 0
	}
	return c.cfg.CPU.NetPerRequest
}
