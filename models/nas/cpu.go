package nas

import (
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/timeline"
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
// when there is one. Timelines fill idle gaps, so work reserved for a
// future time (a read's decryption when its data arrives) does not block
// work that arrives before it: without that, one core with reads in flight
// to four spindles would serialise them. The cores are timeline.Cores,
// whose calendars keep enough intervals for the post-I/O work of every
// request in flight: a Timeline's 32 held a core to some 32 requests at
// once, half the rate a deep queue in front of a slow device allows
// (TestCoreHoldsDeepQueues). The crypto engine holds the decryption of
// every read in flight the same way, so its calendar is a Core's too.
type cpu struct {
	cores      []timeline.Core
	busy       time.Duration // core time charged, all cores
	engine     timeline.Core
	engineBusy time.Duration
}

// run reserves cost on the core that can start it whole first and returns
// when it completes. Among cores that can start at the same time it takes
// the one the work fits most snugly (least idle time left in front of it),
// so that short tasks do not scatter idle gaps over every core; among
// equals the lowest numbered (timeline.Snuggest).
//
// On that core the work fills every idle stretch from at until it is done
// (ReserveSplit), yielding to work booked before it: a kernel runs
// whatever is runnable, and a thread is preempted by the interrupt and the
// thread a completion wakes. Booked whole, a piece that did not fit the gap
// before work reserved for a later time (the previous request's work when
// its I/O completes) waited behind it while the core idled: one core
// served requests that need C of it, more of it before their I/O than the
// device takes, one at a time, at 1/(C + device) instead of 1/C, whatever
// the queue depth (TestCoreIsWorkConserving). Split, the work ends no
// later than whole on the same core.
func (c *cpu) run(at, cost time.Duration) time.Duration {
	c.busy += cost
	return c.cores[timeline.Snuggest(c.cores, at, cost)].ReserveSplit(at, cost)
}

// onEngine runs d of the crypto engine's work from t and returns when it
// is done. The engine works through the extents queued to it (each a
// request of its own to the engine's driver) and is never idle while one
// waits, so the work fills every idle stretch from t (ReserveSplit), as a
// core's does. Booked whole, work that did not fit the gap before a
// read's decryption booked for when its data arrives waited behind it
// while the engine idled: 16 KiB reads at QD64, in front of storage that
// completes them out of order, ran 10 % below the engine's rate
// (TestEngineHoldsDeepQueues).
func (c *cpu) onEngine(t, d time.Duration) time.Duration {
	c.engineBusy += d
	return c.engine.ReserveSplit(t, d)
}

// maxThreads bounds the local client threads a controller keeps apart;
// threads beyond it share timelines (Request.Thread modulo maxThreads).
const maxThreads = 1024

// issue runs cost, the CPU work a request's issuer does to submit it, from
// at and returns when it is done. A client on the NAS itself (Local) makes
// a system call that runs the OS's submit path — VFS or the I/O manager,
// the filesystem, the block layer or storport, software RAID, the driver —
// in its own thread, and a thread is in one call at a time, however many
// asynchronous I/Os it keeps in flight: so the work is reserved on the
// request's thread (Request.Thread) as well as on a core, and one thread
// cannot issue faster than one request per cost, whatever its queue depth.
// (A Windows thread that issues 4 KiB reads through I/O completion ports
// rarely gets a second read in flight before the first completes on a
// fast NVMe drive: the ReadFile call takes longer than the device;
// diskspd issue 118 on GitHub, "CPU limited" in its maintainer's words.)
// A remote client's request is the server's, whose threads are the
// protocol's (package proto): its work goes to the core that frees first.
func (c *Controller) issue(at time.Duration, r models.Request, cost time.Duration) time.Duration {
	if !c.cfg.Local || cost <= 0 {
		return c.cpu.run(at, cost)
	}
	i := r.Thread % maxThreads
	if i < 0 {
		i = -i
	}
	for len(c.threads) <= i {
		c.threads = append(c.threads, timeline.Timeline{})
	}
	start, end := c.threads[i].Reserve(at, cost)
	return max(end, c.cpu.run(start, cost))
}

// issuePath is dataPath for the work a request's issuer does (issue): the
// fixed cost and the per-byte work what on n bytes in its thread, then the
// crypto engine's part.
func (c *Controller) issuePath(at time.Duration, r models.Request, fixed time.Duration, n int64, what int) time.Duration {
	cost, engine := c.dataCost(n, what)
	t := c.issue(at, r, fixed+cost)
	if engine > 0 {
		t = c.cpu.onEngine(t, engine)
	}
	return t
}

// per returns the time n bytes take at rate bytes/s; a zero rate is free.
func per(n int64, rate models.Bytes) time.Duration {
	if rate <= 0 || n <= 0 {
		return 0
	}
	return time.Duration(float64(n) / float64(rate) * 1e9)
}

// RelativeCost is the CPU's cost relative to a ~3 GHz x86 core
// (CPU.RelativeCost): layers above whose costs are calibrated on x86 (the
// SMB server in models/proto) scale them by it.
func (c *Controller) RelativeCost() float64 { return c.cfg.CPU.RelativeCost() }

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
	cost, engine := c.dataCost(n, what)
	t := c.cpu.run(at, fixed+cost)
	if engine > 0 {
		t = c.cpu.onEngine(t, engine)
	}
	return t
}

// dataCost returns the core time and the crypto engine's time of the
// per-byte work what on n bytes.
func (c *Controller) dataCost(n int64, what int) (cost, engine time.Duration) {
	p := &c.cfg.CPU
	if what&wCopy != 0 {
		cost += per(n, p.CopyRate)
	}
	if what&wNet != 0 && !c.cfg.Local {
		cost += per(n, p.NetRate)
	}
	if what&wSum != 0 {
		cost += per(n, p.ChecksumRate)
	}
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
	return cost, engine
}

// netRequest is the network stack's per-request cost, or 0 for local
// clients.
func (c *Controller) netRequest() time.Duration {
	if c.cfg.Local {
		return 0
	}
	return c.cfg.CPU.NetPerRequest
}

// Resources implements models.Accountant: the cores (with the work the
// layers above charge through Compute) and the crypto engine, if any.
func (c *Controller) Resources(at time.Duration) []models.Resource {
	var cores time.Duration
	for i := range c.cpu.cores {
		cores += c.cpu.cores[i].BookedBy(at)
	}
	out := []models.Resource{{Name: "NAS cores", Class: models.ClassCPU, Units: len(c.cpu.cores), Busy: cores}}
	if c.cpu.engineBusy > 0 {
		out = append(out, models.Resource{Name: "NAS crypto engine", Class: models.ClassCPU, Units: 1, Busy: c.cpu.engine.BookedBy(at)})
	}
	if c.stripes != nil {
		// Always listed under md, busy or not, so that every snapshot of
		// the resources has the same entries.
		out = append(out, models.Resource{Name: "md stripe thread", Class: models.ClassCPU, Units: 1, Busy: c.md.BookedBy(at)})
	}
	return out
}

var _ models.Accountant = (*Controller)(nil)

// Waits implements models.Gate: the requests that waited for the storage
// (page cache misses, write-through, throttled writers, flushes).
func (c *Controller) Waits() int64 { return c.misses + c.storageWaits }

// Gated implements models.Gate: the storage is behind the page cache.
func (c *Controller) Gated(int) bool { return true }

var _ models.Gate = (*Controller)(nil)

// submit sends r to the storage. Below a Linux md parity array it then
// charges the array's stripe thread (MDStripePage) for the member pages r
// moved through the stripe cache, on that one thread and a core, from at:
// r completes no earlier than the thread has handled them.
func (c *Controller) submit(at time.Duration, r models.Request) (time.Duration, error) {
	done, err := c.storage.Submit(at, r)
	if c.stripes == nil {
		return done, err
	}
	n := c.stripes.StripeBytesHandled()
	pages := (n - c.mdSeen) >> 12
	if pages <= 0 {
		return done, err
	}
	c.mdSeen += pages << 12
	cost := time.Duration(pages) * c.mdPage
	start, end := c.md.Reserve(at, cost)
	return max(done, end, c.cpu.run(start, cost)), err
}

// IOCost is the CPU time charged for one I/O issued to the storage
// (CPU.PerIO): layers below the controller that issue I/Os of their own
// (an SSD cache tier's fills, mirror copies, metadata updates) charge it
// for each through Compute.
func (c *Controller) IOCost() time.Duration { return c.cfg.CPU.PerIO }
