package fusefs

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nasemu/nasemu/models"
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
// model (drive wear, cache hits, RAID state, rebuild progress...), labelled
// with the device's place in the stack.
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
		Name: "nasemu_fs_ops_total", Help: "FUSE operations served, by operation.",
	}, []string{"op"})
	errs := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "nasemu_fs_errors_total", Help: "FUSE operations that returned an error, by operation.",
	}, []string{"op"})
	bytes := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "nasemu_fs_bytes_total", Help: "Bytes read and written through the mount.",
	}, []string{"op"})
	lat := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "nasemu_fs_latency_seconds",
		Help:    "Latency of FUSE operations as served (model time plus emulator overhead).",
		Buckets: prometheus.ExponentialBuckets(10e-6, 2, 22), // 10 µs .. 21 s
	}, []string{"op"})
	m := &Metrics{
		reg: reg,
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "nasemu_fs_in_flight", Help: "FUSE operations being served now (the client's queue depth).",
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
	capacityDesc  = prometheus.NewDesc("nasemu_capacity_bytes", "Modelled usable capacity of the share.", nil, nil)
	freeDesc      = prometheus.NewDesc("nasemu_free_bytes", "Bytes of the modelled capacity not allocated to files.", nil, nil)
	volOpsDesc    = prometheus.NewDesc("nasemu_volume_requests_total", "Requests charged to the model, by operation.", []string{"op"}, nil)
	volErrsDesc   = prometheus.NewDesc("nasemu_volume_errors_total", "Requests the model failed, by operation.", []string{"op"}, nil)
	volBytesDesc  = prometheus.NewDesc("nasemu_volume_bytes_total", "Bytes charged to the model, by operation.", []string{"op"}, nil)
	volQDDesc     = prometheus.NewDesc("nasemu_volume_in_flight", "Requests outstanding at the model (its queue depth).", nil, nil)
	raidStateDesc = prometheus.NewDesc("nasemu_raid_state", "1 for the array's current state (optimal, degraded, rebuilding, failed), 0 for the others.", []string{"device", "state"}, nil)
	rebuildDesc   = prometheus.NewDesc("nasemu_raid_rebuild_progress_ratio", "Fraction of the running rebuild done (1 when none runs).", []string{"device"}, nil)
	failedDesc    = prometheus.NewDesc("nasemu_raid_failed_members", "Members failed and not replaced.", []string{"device"}, nil)
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
	for _, o := range st.Ops {
		ch <- prometheus.MustNewConstMetric(volOpsDesc, prometheus.CounterValue, float64(o.Count), o.Op.String())
		ch <- prometheus.MustNewConstMetric(volErrsDesc, prometheus.CounterValue, float64(o.Errors), o.Op.String())
		ch <- prometheus.MustNewConstMetric(volBytesDesc, prometheus.CounterValue, float64(o.Bytes), o.Op.String())
	}
	for _, d := range c.fs.Devices() {
		for _, k := range d.Counters {
			ch <- prometheus.MustNewConstMetric(c.desc(k.Name), prometheus.GaugeValue, k.Value, d.Path, d.Kind)
		}
	}
	for _, a := range c.fs.Arrays() {
		for s := raid.Optimal; s <= raid.Failed; s++ {
			v := 0.0
			if s.String() == a.State {
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(raidStateDesc, prometheus.GaugeValue, v, a.Path, s.String())
		}
		ch <- prometheus.MustNewConstMetric(rebuildDesc, prometheus.GaugeValue, a.RebuildProgress, a.Path)
		ch <- prometheus.MustNewConstMetric(failedDesc, prometheus.GaugeValue, float64(len(a.Failed)), a.Path)
	}
}

// desc returns the descriptor of a model counter's gauge.
func (c *modelCollector) desc(name string) *prometheus.Desc {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.descs[name]
	if d == nil {
		d = prometheus.NewDesc("nasemu_model_"+name,
			fmt.Sprintf("The model's %s counter.", name), []string{"device", "kind"}, nil)
		c.descs[name] = d
	}
	return d
}

// DeviceStatus is one device of the model's stack and its counters.
type DeviceStatus struct {
	// Path is the device's place in the stack: "0" for the top, "0/1"
	// for its second child, and so on.
	Path string `json:"path"`
	// Kind is the device's Go type, e.g. "raid.Array".
	Kind     string           `json:"kind"`
	Counters []models.Counter `json:"counters,omitempty"`
}

// Devices returns every device of the model's stack, depth first, with its
// counters.
func (f *FS) Devices() []DeviceStatus {
	var out []DeviceStatus
	f.vol.WithModel(func(m models.Device, _ time.Duration) {
		walkPaths(m, "0", func(d models.Device, path string) {
			s := DeviceStatus{Path: path, Kind: kind(d)}
			if o, ok := d.(models.Observer); ok {
				s.Counters = o.Counters()
			}
			out = append(out, s)
		})
	})
	return out
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
