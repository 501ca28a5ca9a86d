package sweep

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/nasemu/nasemu/bench"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/catalog"
	"github.com/nasemu/nasemu/models/setup"
)

// Header begins a shard file: which sweep, which share of it.
type Header struct {
	Sweep  string   `json:"sweep"`  // the spec's name
	Digest string   `json:"digest"` // Spec.Digest
	Points int      `json:"points"` // of the whole sweep
	Keys   []string `json:"keys"`   // the axes' keys
	Shard  int      `json:"shard"`
	Shards int      `json:"shards"`
	// Steady is the steady-state criterion the jobs ran with
	// (bench.Steady's String); "" when they ran their whole runtime.
	Steady string `json:"steady,omitempty"`
}

// Record is one point's result.
type Record struct {
	Index    int      `json:"index"`
	Values   []string `json:"values"` // one per axis
	Workload string   `json:"workload"`
	// Error is why the point has no results: the setup's own message for
	// a combination no real system allows, or the run's.
	Error string `json:"error,omitempty"`
	// Facts of the setup (when it is one).
	UsableBytes int64 `json:"usable_bytes,omitempty"`
	Tolerates   int   `json:"drives_tolerated"`
	// PriceUSD is the street price of system and drives (Price); 0 when
	// a part's is unknown.
	PriceUSD       float64 `json:"price_usd,omitempty"`
	PageCacheBytes int64   `json:"page_cache_bytes,omitempty"`
	Results        []Job   `json:"results,omitempty"`
}

// Job is one job's figures at a point.
type Job struct {
	Name    string        `json:"name"`
	RW      string        `json:"rw"`
	BS      int64         `json:"bs"`
	IODepth int           `json:"iodepth"`
	NumJobs int           `json:"numjobs"`
	IOPS    float64       `json:"iops"`
	MBps    float64       `json:"mbps"`
	Lat     bench.Latency `json:"lat_us"`
	// Working is the bytes the job reads or writes over (its files'
	// total); 0 when it spans the whole target.
	Working int64 `json:"working_set_bytes,omitempty"`
	// Bottleneck is the modelled resource that limited the job, as the
	// bench runner names it from the models' busy-time accounting.
	Bottleneck *bench.Bottleneck `json:"bottleneck,omitempty"`
	// Steady is when the job met the sweep's steady-state criterion and
	// ended (Spec.Steady); nil when it ran its whole runtime.
	Steady *bench.SteadyAt `json:"steady,omitempty"`
}

// USDPerTB returns the price per usable terabyte (10^12 bytes), 0 when
// either is unknown.
func (r Record) USDPerTB() float64 {
	if r.PriceUSD <= 0 || r.UsableBytes <= 0 {
		return 0
	}
	return r.PriceUSD / (float64(r.UsableBytes) / 1e12)
}

// InPageCache reports whether job j's working set fits in the point's NAS
// page cache: its figures are then the NAS's RAM, link and protocol, and
// points that differ only in storage cannot differ on it.
func (r Record) InPageCache(j Job) bool {
	return r.PageCacheBytes > 0 && j.Working > 0 && j.Working <= r.PageCacheBytes
}

// Price returns the street price in US dollars of a setup's hardware — its
// catalog system and every drive of the array and the cache tier — and
// false when a part has no catalog price (an inline system or drive, one
// the catalog does not price). A setup without a NAS prices its drives
// only: the host they hang off is not part of it.
func Price(s *setup.Setup) (float64, bool) {
	var usd float64
	if s.NAS != nil {
		if s.NAS.Inline || s.NAS.Ref == "" {
			return 0, false
		}
		sys, err := catalog.LookupSystem(s.NAS.Ref)
		if err != nil || sys.PriceUSD <= 0 {
			return 0, false
		}
		usd += sys.PriceUSD
	}
	groups := s.Drives
	if s.Cache != nil {
		groups = append(append([]setup.DriveGroup(nil), groups...), s.Cache.Drives...)
	}
	for _, g := range groups {
		if g.Inline || g.Drive.Price.USD <= 0 {
			return 0, false
		}
		usd += g.Drive.Price.USD * float64(g.Count)
	}
	return usd, true
}

// Options say how to run a sweep's points.
type Options struct {
	// Workers run points at once (each point is one goroutine's
	// simulation); 0 means GOMAXPROCS.
	Workers int
	// Skip says which points to leave out (already in the output);
	// nil runs all of them.
	Skip func(index int) bool
	// Done is called with each record as its point finishes, one call at
	// a time, in the order points finish.
	Done func(Record) error
}

// Run runs the points given by index and returns their records in index
// order. Records do not depend on Workers or on the order points finish.
func (sp *Spec) Run(ctx context.Context, indices []int, opt Options) ([]Record, error) {
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var todo []int
	for _, i := range indices {
		if opt.Skip == nil || !opt.Skip(i) {
			todo = append(todo, i)
		}
	}
	workers = max(1, min(workers, len(todo)))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	var (
		mu      sync.Mutex
		records []Record
		first   error
		wg      sync.WaitGroup
	)
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				rec := sp.RunPoint(sp.Point(i))
				mu.Lock()
				if first == nil {
					records = append(records, rec)
					if opt.Done != nil {
						if err := opt.Done(rec); err != nil {
							first = err
							cancel()
						}
					}
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for _, i := range todo {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	sort.Slice(records, func(a, b int) bool { return records[a].Index < records[b].Index })
	return records, first
}

// RunPoint builds point p's setup and runs its workload on it in virtual
// time. A setup that cannot be built, or a run that fails, is the
// record's Error.
func (sp *Spec) RunPoint(p Point) Record {
	w := sp.Workloads[p.Workload]
	rec := Record{Index: p.Index, Values: p.Values, Workload: w.Label}
	s, err := sp.Setup(p)
	if err != nil {
		rec.Error = oneLine(err)
		return rec
	}
	if rec.UsableBytes, err = s.UsableCapacity(); err != nil {
		rec.Error = oneLine(err)
		return rec
	}
	rec.Tolerates = s.Tolerates()
	if usd, ok := Price(s); ok {
		rec.PriceUSD = usd
	}
	if s.NAS != nil {
		rec.PageCacheBytes = s.NAS.Config.PageCacheBytes()
	}
	dev, err := s.Build(sp.Seed)
	if err != nil {
		rec.Error = oneLine(err)
		return rec
	}
	target := bench.NewSim("sim:"+s.Name, bench.SimSetup{Device: dev})
	rep, err := bench.Run(target, w.Jobs, bench.Options{Seed: sp.Seed, Suite: w.Suite})
	if err != nil {
		rec.Error = oneLine(err)
		return rec
	}
	for i, x := range rep.Results {
		j := Job{Name: x.Name, RW: x.RW, BS: x.BS, IODepth: x.IODepth, NumJobs: x.NumJobs, IOPS: x.IOPS, MBps: x.MBps, Lat: x.Lat, Bottleneck: x.Bottleneck, Steady: x.Steady}
		if i < len(w.Jobs) && w.Jobs[i].Name == x.Name {
			j.Working = w.Jobs[i].WorkingSet()
		}
		rec.Results = append(rec.Results, j)
	}
	return rec
}

// oneLine joins a multi-line error (errors.Join) with "; " for a record.
func oneLine(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", "; ")
}

// errShard is wrapped by errors of shard selection.
var errShard = errors.New("bad shard")

// ShardIndices returns the points of shard k of n: every n-th point from
// k, so that each shard gets a like share of every axis (and of the slow
// points among them).
func ShardIndices(points, k, n int) ([]int, error) {
	if n < 1 || k < 0 || k >= n {
		return nil, fmt.Errorf("%w: %w: shard %d of %d (want 0 ≤ K < N)", models.ErrConfig, errShard, k, n)
	}
	var out []int
	for i := k; i < points; i += n {
		out = append(out, i)
	}
	return out, nil
}
