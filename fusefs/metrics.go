package fusefs

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/cache"
	"github.com/nasemu/nasemu/models/raid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// fsOp names a FUSE operation in the metrics.
type fsOp uint8

const (
	opLookup fsOp = iota
	opGetattr
	opSetattr
	opCreate
	opOpen
	opRelease
	opRead
	opWrite
	opFsync
	opUnlink
	opRmdir
	opMkdir
	opRename
	opOpendir
	opStatfs
	numOps
)

var opLabels = [numOps]string{
	opLookup: "lookup", opGetattr: "getattr", opSetattr: "setattr", opCreate: "create",
	opOpen: "open", opRelease: "release", opRead: "read", opWrite: "write", opFsync: "fsync",
	opUnlink: "unlink", opRmdir: "rmdir", opMkdir: "mkdir", opRename: "rename",
	opOpendir: "opendir", opStatfs: "statfs",
}

// Metrics are the Prometheus metrics of a mounted share: operations,
// bytes, errors and latency by FUSE operation, requests in flight, and —
// read from the model at each scrape — every counter of every device of the
// model (drive wear, cache hits, RAID state, rebuild progress...), each as
// a counter or a gauge in base units (seconds, bytes, ratios) as
// modelMetrics describes it, labelled with the array and the drive it
// belongs to (array="raid5", drive="3") and the device's place in the stack
// (device="0/0/0/3/0", unique).
type Metrics struct {
	reg      *prometheus.Registry
	inFlight prometheus.Gauge
	perOp    [numOps]opMetrics
}

type opMetrics struct {
	ops, errs, bytes prometheus.Counter
	latency          prometheus.Observer
}

// NewMetrics returns a set of metrics in a registry of its own (with the Go
// runtime's collectors). Pass it in Options.Metrics.
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	ops := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "nasemu_fs_ops_total", Help: "FUSE requests the share has answered, by operation (lookup, read, write, fsync...), errors included.",
	}, []string{"op"})
	errs := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "nasemu_fs_errors_total", Help: "FUSE requests the share answered with an error (ENOSPC, EIO of a failed array...), by operation.",
	}, []string{"op"})
	bytes := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "nasemu_fs_bytes_total", Help: "Bytes the share's clients read (op=read) and wrote (op=write) through the mount.",
	}, []string{"op"})
	lat := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "nasemu_fs_latency_seconds",
		Help:    "Wall time from a FUSE request's arrival to its answer, by operation: the modelled NAS's time for it (scaled by --time-scale) less the host's measured FUSE round trip. Successful requests only.",
		Buckets: prometheus.ExponentialBuckets(10e-6, 2, 22), // 10 µs .. 21 s
	}, []string{"op"})
	m := &Metrics{
		reg: reg,
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "nasemu_fs_in_flight", Help: "FUSE requests being served now: the queue depth the clients keep at the share.",
		}),
	}
	reg.MustRegister(ops, errs, bytes, lat, m.inFlight)
	for op := range numOps {
		l := opLabels[op]
		m.perOp[op] = opMetrics{ops: ops.WithLabelValues(l), errs: errs.WithLabelValues(l), bytes: bytes.WithLabelValues(l), latency: lat.WithLabelValues(l)}
	}
	return m
}

// Handler returns the HTTP handler that serves the metrics.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Registry returns the registry holding the metrics.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// begin starts timing an operation; the returned function ends it with the
// bytes moved and the outcome. A nil *Metrics records nothing.
func (m *Metrics) begin(op fsOp) func(n int64, errno *syscall.Errno) {
	if m == nil {
		return func(int64, *syscall.Errno) {}
	}
	start := time.Now()
	m.inFlight.Inc()
	return func(n int64, errno *syscall.Errno) {
		m.inFlight.Dec()
		o := &m.perOp[op]
		o.ops.Inc()
		if errno != nil && *errno != 0 {
			o.errs.Inc()
			return
		}
		o.bytes.Add(float64(n))
		o.latency.Observe(time.Since(start).Seconds())
	}
}

// attach registers the collectors that read the filesystem and its model.
func (m *Metrics) attach(f *FS) {
	m.reg.MustRegister(&modelCollector{fs: f, descs: map[string]*prometheus.Desc{}})
}

// modelCollector reads the model's counters and the volume's state at each
// scrape. Counter names are only known then, so it is an unchecked
// collector (Describe sends nothing).
type modelCollector struct {
	fs *FS

	mu    sync.Mutex
	descs map[string]*prometheus.Desc
}

var (
	capacityDesc  = prometheus.NewDesc("nasemu_capacity_bytes", "Usable capacity of the modelled volume, what statfs reports as the share's size.", nil, nil)
	freeDesc      = prometheus.NewDesc("nasemu_free_bytes", "Bytes of the modelled volume not allocated to files: what a client can still write before ENOSPC.", nil, nil)
	volOpsDesc    = prometheus.NewDesc("nasemu_volume_requests_total", "Requests the share submitted to the model of the NAS (data reads and writes, flushes, file operations), by operation.", []string{"op"}, nil)
	volErrsDesc   = prometheus.NewDesc("nasemu_volume_errors_total", "Requests the model of the NAS failed (a failed array, no space), by operation.", []string{"op"}, nil)
	volBytesDesc  = prometheus.NewDesc("nasemu_volume_bytes_total", "Bytes of the requests submitted to the model of the NAS, by operation.", []string{"op"}, nil)
	volQDDesc     = prometheus.NewDesc("nasemu_volume_in_flight", "Requests submitted to the model of the NAS and not yet answered: its queue depth.", nil, nil)
	lateDesc      = prometheus.NewDesc("nasemu_volume_late_answers_total", "Requests answered after the model's completion time because the host's own work for them took longer: the host could not keep up with the modelled NAS.", nil, nil)
	latenessDesc  = prometheus.NewDesc("nasemu_volume_lateness_seconds_total", "How much later than the model's completion times the late answers were, summed, in model seconds.", nil, nil)
	arrayLabels   = []string{"device", "array"}
	raidStateDesc = prometheus.NewDesc("nasemu_raid_state", "1 for the array's current state, 0 for the others: optimal (all members serve), degraded (serving without redundancy lost to failed members), rebuilding (onto a replacement), failed (data lost).", append(arrayLabels, "state"), nil)
	rebuildDesc   = prometheus.NewDesc("nasemu_raid_rebuild_progress_ratio", "Fraction of the running rebuild done, from 0 to 1 (1 when none runs).", arrayLabels, nil)
	failedDesc    = prometheus.NewDesc("nasemu_raid_failed_members", "Members of the array that have failed and are not replaced yet ('nasemu ctl fail N').", arrayLabels, nil)
)

// Describe implements prometheus.Collector (unchecked).
func (c *modelCollector) Describe(chan<- *prometheus.Desc) {}

// Collect implements prometheus.Collector.
func (c *modelCollector) Collect(ch chan<- prometheus.Metric) {
	capacity, free := c.fs.Usage()
	ch <- prometheus.MustNewConstMetric(capacityDesc, prometheus.GaugeValue, float64(capacity))
	ch <- prometheus.MustNewConstMetric(freeDesc, prometheus.GaugeValue, float64(free))
	st := c.fs.vol.Stats()
	ch <- prometheus.MustNewConstMetric(volQDDesc, prometheus.GaugeValue, float64(st.InFlight))
	late := c.fs.vol.Late()
	ch <- prometheus.MustNewConstMetric(lateDesc, prometheus.CounterValue, float64(late.Count))
	ch <- prometheus.MustNewConstMetric(latenessDesc, prometheus.CounterValue, late.Total.Seconds())
	for _, o := range st.Ops {
		ch <- prometheus.MustNewConstMetric(volOpsDesc, prometheus.CounterValue, float64(o.Count), o.Op.String())
		ch <- prometheus.MustNewConstMetric(volErrsDesc, prometheus.CounterValue, float64(o.Errors), o.Op.String())
		ch <- prometheus.MustNewConstMetric(volBytesDesc, prometheus.CounterValue, float64(o.Bytes), o.Op.String())
	}
	arrays := map[string]string{}
	for _, d := range c.fs.Devices() {
		arrays[d.Path] = d.Array
		for _, k := range d.Counters {
			mm, ok := modelMetrics[k.Name]
			if !ok {
				mm = modelMetric{name: "nasemu_model_" + k.Name, scale: 1,
					help: "Counter " + k.Name + " of a device of the model, not yet described in fusefs/modelmetrics.go."}
			}
			if mm.name == "" {
				continue // exported in a form of its own
			}
			labels := []string{d.Path, d.Array, d.Drive}
			if mm.label[0] != "" {
				labels = append(labels, mm.label[1])
			}
			ch <- prometheus.MustNewConstMetric(c.desc(mm), mm.typ(), k.Value*mm.scale, labels...)
		}
	}
	for _, a := range c.fs.Arrays() {
		for s := raid.Optimal; s <= raid.Failed; s++ {
			v := 0.0
			if s.String() == a.State {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(raidStateDesc, prometheus.GaugeValue, v, a.Path, arrays[a.Path], s.String())
		}
		ch <- prometheus.MustNewConstMetric(rebuildDesc, prometheus.GaugeValue, a.RebuildProgress, a.Path, arrays[a.Path])
		ch <- prometheus.MustNewConstMetric(failedDesc, prometheus.GaugeValue, float64(len(a.Failed)), a.Path, arrays[a.Path])
	}
}

// desc returns the descriptor of a model metric's family.
func (c *modelCollector) desc(mm modelMetric) *prometheus.Desc {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.descs[mm.name]
	if d == nil {
		labels := []string{"device", "array", "drive"}
		if mm.label[0] != "" {
			labels = append(labels, mm.label[0])
		}
		d = prometheus.NewDesc(mm.name, mm.help, labels, nil)
		c.descs[mm.name] = d
	}
	return d
}

// DeviceStatus is one device of the model's stack and its counters.
type DeviceStatus struct {
	// Path is the device's place in the stack: "0" for the top, "0/1"
	// for its second child, and so on.
	Path string `json:"path"`
	// Kind is the device's Go type, e.g. "raid.Array".
	Kind string `json:"kind"`
	// Array names the array the device is, or belongs to: its RAID level
	// ("raid5"), or "cache" for the drives of an SSD cache tier; "" above
	// the arrays.
	Array string `json:"array,omitempty"`
	// Drive is the device's member number in that array (from 0, as
	// 'nasemu ctl fail N' counts), for a drive and the bus port it sits
	// behind; "" for the array itself and above.
	Drive    string           `json:"drive,omitempty"`
	Counters []models.Counter `json:"counters,omitempty"`
}

// Devices returns every device of the model's stack, depth first, with its
// counters.
func (f *FS) Devices() []DeviceStatus {
	var out []DeviceStatus
	f.vol.WithModel(func(m models.Device, _ time.Duration) {
		walkMembers(m, "0", "", "", func(d models.Device, path, array, drive string) {
			s := DeviceStatus{Path: path, Kind: kind(d), Array: array, Drive: drive}
			if o, ok := d.(models.Observer); ok {
				s.Counters = o.Counters()
			}
			out = append(out, s)
		})
	})
	return out
}

// walkMembers is walkPaths with the array each device is or belongs to and
// its member number there: the children of a raid.Array are its members,
// those of a cache.Tier its cache drives and then its backing device
// (which is not a member).
func walkMembers(d models.Device, path, array, drive string, fn func(d models.Device, path, array, drive string)) {
	a, isArray := d.(*raid.Array)
	if isArray {
		array, drive = a.Level().String(), ""
	}
	fn(d, path, array, drive)
	p, ok := d.(models.Parent)
	if !ok {
		return
	}
	kids := p.Children()
	_, isTier := d.(*cache.Tier)
	for i, c := range kids {
		ca, cd := array, drive
		switch {
		case isArray:
			cd = strconv.Itoa(i)
		case isTier && i < len(kids)-1:
			ca, cd = "cache", strconv.Itoa(i)
		}
		walkMembers(c, path+"/"+strconv.Itoa(i), ca, cd, fn)
	}
}

// kind names a device's type for people: "raid.Array".
func kind(d models.Device) string { return strings.TrimPrefix(fmt.Sprintf("%T", d), "*") }

// walkPaths is models.Walk with each device's path in the stack ("0",
// "0/1", ...), which names it in metrics and status.
func walkPaths(d models.Device, path string, fn func(d models.Device, path string)) {
	fn(d, path)
	if p, ok := d.(models.Parent); ok {
		for i, c := range p.Children() {
			walkPaths(c, fmt.Sprintf("%s/%d", path, i), fn)
		}
	}
}
