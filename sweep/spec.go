package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/nasemu/nasemu/bench"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/setup"
)

// MaxPoints bounds a sweep's cross product: past it a spec is refused
// before anything runs (a typo that multiplies an axis should not start a
// week of simulation). Split a larger sweep into several specs.
const MaxPoints = 100_000

// MaxSpecSize bounds a spec file; a longer one is refused unread.
const MaxSpecSize = 1 << 20

// ErrSpec is matched by every mistake in a spec (a *SpecError), as is
// models.ErrConfig.
var ErrSpec = errors.New("bad sweep spec")

// SpecError is a mistake in a spec: where (file:line: key) and what.
type SpecError struct {
	Where, Msg string
}

// Error formats the mistake as file:line: key: message.
func (e *SpecError) Error() string { return e.Where + ": " + e.Msg }

// Is makes a SpecError match ErrSpec and models.ErrConfig.
func (e *SpecError) Is(target error) bool { return target == ErrSpec || target == models.ErrConfig }

// Loader loads a setup by built-in name or file path.
type Loader func(nameOrPath string) (*setup.Setup, error)

// Spec is a parsed sweep.
type Spec struct {
	Name      string
	File      string // the spec's file name, for messages
	BaseName  string // the base setup as the spec names it
	Base      *setup.Setup
	Seed      uint64
	Set       []setup.KeyValue // keys every point gets, before its axes'
	Workloads []Workload
	Axes      []Axis
	// Steady is the size in completions of a round of the steady-state
	// criterion every job runs with (bench.Steady.RoundIOs); 0: jobs run
	// their whole runtime.
	Steady int64
	// Digest identifies the sweep: the spec's text and the base setup's
	// (with its defaults). Shard files of different sweeps never merge.
	Digest string
}

// Axis is one setup key and the values it takes.
type Axis struct {
	Key    string
	Values []string // each as YAML (flow style), which is also its label
}

// Workload is one suite or job file a point runs, with its overrides.
type Workload struct {
	Label   string // "cdm", "cdm size=4GiB runtime=1s", "rand.fio"
	Suite   string
	Job     string // a fio job file, when not a suite
	Size    int64
	Runtime time.Duration
	Jobs    []bench.Job
}

// Point is one setup and workload of a sweep.
type Point struct {
	Index    int
	Values   []string // one per axis
	Workload int      // index into Spec.Workloads
}

// Load reads and parses the spec file at path; a base or job file it
// names by relative path is found beside it.
func Load(path string, load Loader) (*Spec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &SpecError{Where: path, Msg: strings.TrimPrefix(err.Error(), "open "+path+": ")}
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxSpecSize+1))
	if err != nil {
		return nil, &SpecError{Where: path, Msg: err.Error()}
	}
	return Parse(path, data, filepath.Dir(path), load)
}

// specError is a mistake at a line and key of a spec.
func specError(file string, n *yaml.Node, key, format string, args ...any) error {
	where := file
	if n != nil && n.Line > 0 {
		where += ":" + strconv.Itoa(n.Line)
	}
	if key != "" {
		where += ": " + key
	}
	return &SpecError{Where: where, Msg: fmt.Sprintf(format, args...)}
}

// Parse parses a spec's text; dir is where relative paths in it start.
func Parse(file string, data []byte, dir string, load Loader) (*Spec, error) {
	if len(data) > MaxSpecSize {
		return nil, specError(file, nil, "", "longer than %d bytes", MaxSpecSize)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, specError(file, nil, "", "%s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(doc.Content) == 0 {
		return nil, specError(file, nil, "", "empty")
	}
	top, err := fields(file, doc.Content[0], "", "name", "base", "seed", "set", "workloads", "axes", "steady")
	if err != nil {
		return nil, err
	}
	sp := &Spec{File: file, Seed: 1, Name: strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))}
	if n := top["name"]; n != nil {
		if sp.Name, err = scalar(file, n, "name"); err != nil {
			return nil, err
		}
	}
	n := top["base"]
	if n == nil {
		return nil, specError(file, doc.Content[0], "base", "missing: name a built-in setup or a setup file")
	}
	if sp.BaseName, err = scalar(file, n, "base"); err != nil {
		return nil, err
	}
	name := sp.BaseName
	if strings.Contains(name, "/") || strings.HasSuffix(name, ".yaml") {
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
	}
	if sp.Base, err = load(name); err != nil {
		return nil, specError(file, n, "base", "%v", err)
	}
	if n := top["seed"]; n != nil {
		s, err := scalar(file, n, "seed")
		if err != nil {
			return nil, err
		}
		if sp.Seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			return nil, specError(file, n, "seed", "want a non-negative integer, got %q", s)
		}
	}
	if n := top["set"]; n != nil {
		if n.Kind != yaml.MappingNode {
			return nil, specError(file, n, "set", "want a map of setup keys to values")
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if hasAlias(v) {
				return nil, specError(file, v, "set."+k.Value, "aliases are not allowed in values")
			}
			kv := setup.KeyValue{Key: k.Value, Value: flow(v)}
			if _, err := sp.Base.WithAll("set", kv); errors.Is(err, setup.ErrUnknown) {
				return nil, specError(file, k, "set."+k.Value, "%v", err)
			}
			sp.Set = append(sp.Set, kv)
		}
	}
	if sp.Workloads, err = workloads(file, top["workloads"], doc.Content[0], dir); err != nil {
		return nil, err
	}
	if n := top["steady"]; n != nil {
		if sp.Steady, err = steady(file, n); err != nil {
			return nil, err
		}
		for i := range sp.Workloads {
			sp.Workloads[i].Jobs = withSteady(sp.Workloads[i].Jobs, sp.Steady)
		}
	}
	if sp.Axes, err = sp.axes(top["axes"]); err != nil {
		return nil, err
	}
	total := len(sp.Workloads)
	for i, a := range sp.Axes {
		if total > MaxPoints/len(a.Values) {
			return nil, specError(file, top["axes"], fmt.Sprintf("axes[%d]", i),
				"the cross product has more than %d points (at most %d per sweep): split the spec", total*len(a.Values), MaxPoints)
		}
		total *= len(a.Values)
	}
	baseYAML, err := sp.Base.YAML()
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	fmt.Fprintf(h, "%d\n%s\n%d\n%s", len(data), data, len(baseYAML), baseYAML)
	sp.Digest = hex.EncodeToString(h.Sum(nil))[:16]
	return sp, nil
}

// SteadyCriterion names the criterion the sweep's jobs run with, for the
// header of its results; "" without one.
func (sp *Spec) SteadyCriterion() string {
	if sp.Steady <= 0 {
		return ""
	}
	return (&bench.Steady{Metric: "iops", RoundIOs: sp.Steady}).String()
}

// DefaultSteadyRound is a steady-state round's completions with "steady:
// true": enough that counting noise (1/√1000, 3 %) stays well inside the
// criterion's 20 % range over five rounds, and that a round spans many
// turns of a queue (31 at QD32).
const DefaultSteadyRound = 1000

// steady parses the steady key: true (rounds of DefaultSteadyRound
// completions), false, or a round's completions.
func steady(file string, n *yaml.Node) (int64, error) {
	s, err := scalar(file, n, "steady")
	if err != nil {
		return 0, err
	}
	switch s {
	case "true":
		return DefaultSteadyRound, nil
	case "false":
		return 0, nil
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v < 1 || v > 1e9 {
		return 0, specError(file, n, "steady", "want true, false or a round's completions (1 to 10^9), got %q", s)
	}
	return v, nil
}

// withSteady gives every job without a criterion of its own SNIA PTS's
// over rounds of round completions: IOPS, or bandwidth where a job mixes
// block sizes.
func withSteady(jobs []bench.Job, round int64) []bench.Job {
	out := append([]bench.Job(nil), jobs...)
	for i := range out {
		if round <= 0 || out[i].SteadyState != nil {
			continue
		}
		metric := "iops"
		if len(out[i].BSSplit) > 0 {
			metric = "bw"
		}
		out[i].SteadyState = &bench.Steady{Metric: metric, RoundIOs: round}
	}
	return out
}

// axes parses the axes: each a key and a non-empty list of values, every
// value one the setup's schema and catalog know.
func (sp *Spec) axes(n *yaml.Node) ([]Axis, error) {
	file := sp.File
	if n == nil {
		return nil, nil // one point per workload: the base itself
	}
	if n.Kind != yaml.SequenceNode {
		return nil, specError(file, n, "axes", "want a list of {key, values}")
	}
	var out []Axis
	seen := map[string]bool{}
	for i, an := range n.Content {
		where := fmt.Sprintf("axes[%d]", i)
		f, err := fields(file, an, where, "key", "values")
		if err != nil {
			return nil, err
		}
		if f["key"] == nil {
			return nil, specError(file, an, where+".key", "missing: a setup key such as drives.count")
		}
		key, err := scalar(file, f["key"], where+".key")
		if err != nil {
			return nil, err
		}
		if seen[key] {
			return nil, specError(file, f["key"], where+".key", "%s is an axis twice", key)
		}
		seen[key] = true
		vn := f["values"]
		if vn == nil || vn.Kind != yaml.SequenceNode || len(vn.Content) == 0 {
			return nil, specError(file, an, where+".values", "axis %s needs a non-empty list of values", key)
		}
		a := Axis{Key: key}
		dup := map[string]bool{}
		for j, v := range vn.Content {
			val := flow(v)
			if hasAlias(v) {
				return nil, specError(file, v, fmt.Sprintf("%s.values[%d]", where, j), "aliases are not allowed in values")
			}
			if dup[val] {
				return nil, specError(file, v, fmt.Sprintf("%s.values[%d]", where, j), "%s is in axis %s twice", val, key)
			}
			dup[val] = true
			kvs := append(append([]setup.KeyValue(nil), sp.Set...), setup.KeyValue{Key: key, Value: val})
			if _, err := sp.Base.WithAll(key+"="+val, kvs...); errors.Is(err, setup.ErrUnknown) {
				return nil, specError(file, v, fmt.Sprintf("%s.values[%d]", where, j), "%v", err)
			}
			a.Values = append(a.Values, val)
		}
		out = append(out, a)
	}
	return out, nil
}

// workloads parses the workloads: each a suite or a job file, with an
// optional size and runtime for every job.
func workloads(file string, n, top *yaml.Node, dir string) ([]Workload, error) {
	if n == nil || n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		return nil, specError(file, at(n, top), "workloads", "want a non-empty list of {suite|job, size, runtime}")
	}
	var out []Workload
	for i, wn := range n.Content {
		where := fmt.Sprintf("workloads[%d]", i)
		f, err := fields(file, wn, where, "suite", "job", "size", "runtime")
		if err != nil {
			return nil, err
		}
		var w Workload
		if (f["suite"] == nil) == (f["job"] == nil) {
			return nil, specError(file, wn, where, "give exactly one of suite and job")
		}
		if f["suite"] != nil {
			if w.Suite, err = scalar(file, f["suite"], where+".suite"); err != nil {
				return nil, err
			}
			if w.Suite == bench.SSDProfileSuite {
				return nil, specError(file, f["suite"], where+".suite", "a sweep runs job suites; run ssd-profile with nasemu bench")
			}
			w.Jobs, err = bench.Suite(w.Suite)
			w.Label = w.Suite
		} else {
			if w.Job, err = scalar(file, f["job"], where+".job"); err != nil {
				return nil, err
			}
			path := w.Job
			if !filepath.IsAbs(path) {
				path = filepath.Join(dir, path)
			}
			w.Jobs, err = bench.LoadFio(path)
			w.Label = filepath.Base(w.Job)
		}
		if err != nil {
			return nil, specError(file, wn, where, "%v", err)
		}
		if sn := f["size"]; sn != nil {
			s, err := scalar(file, sn, where+".size")
			if err != nil {
				return nil, err
			}
			b, err := models.ParseBytes(s)
			if err != nil || b == 0 {
				return nil, specError(file, sn, where+".size", "want a positive size such as 4GiB, got %q", s)
			}
			w.Size = int64(b)
			w.Label += " size=" + s
		}
		if rn := f["runtime"]; rn != nil {
			s, err := scalar(file, rn, where+".runtime")
			if err != nil {
				return nil, err
			}
			d, err := time.ParseDuration(s)
			if err != nil || d <= 0 {
				return nil, specError(file, rn, where+".runtime", "want a positive duration such as 1s, got %q", s)
			}
			w.Runtime = d
			w.Label += " runtime=" + s
		}
		w.Jobs = bench.Overrides{Runtime: w.Runtime, Size: w.Size}.Apply(w.Jobs)
		for _, x := range out {
			if x.Label == w.Label {
				return nil, specError(file, wn, where, "workload %q is listed twice", w.Label)
			}
		}
		out = append(out, w)
	}
	return out, nil
}

// Len returns how many points the sweep has.
func (sp *Spec) Len() int {
	n := len(sp.Workloads)
	for _, a := range sp.Axes {
		n *= len(a.Values)
	}
	return n
}

// Keys returns the axes' keys, in order.
func (sp *Spec) Keys() []string {
	keys := make([]string, len(sp.Axes))
	for i, a := range sp.Axes {
		keys[i] = a.Key
	}
	return keys
}

// Point returns point i (0 ≤ i < Len()): the workloads vary fastest, then
// the last axis, and so on to the first.
func (sp *Spec) Point(i int) Point {
	p := Point{Index: i, Values: make([]string, len(sp.Axes))}
	p.Workload = i % len(sp.Workloads)
	i /= len(sp.Workloads)
	for a := len(sp.Axes) - 1; a >= 0; a-- {
		vals := sp.Axes[a].Values
		p.Values[a] = vals[i%len(vals)]
		i /= len(vals)
	}
	return p
}

// Setup returns the point's setup: the base with the spec's set keys and
// the point's axis values, judged together. An impossible combination is
// the setup's own error, naming the point.
func (sp *Spec) Setup(p Point) (*setup.Setup, error) {
	kvs := append([]setup.KeyValue(nil), sp.Set...)
	for a, v := range p.Values {
		kvs = append(kvs, setup.KeyValue{Key: sp.Axes[a].Key, Value: v})
	}
	return sp.Base.WithAll("point "+strconv.Itoa(p.Index), kvs...)
}

// fields returns the values of mapping n by key, refusing keys not in
// known and keys given twice.
func fields(file string, n *yaml.Node, where string, known ...string) (map[string]*yaml.Node, error) {
	if n.Kind != yaml.MappingNode {
		return nil, specError(file, n, where, "want a map with keys %s", strings.Join(known, ", "))
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		key := k.Value
		if where != "" {
			key = where + "." + k.Value
		}
		ok := false
		for _, x := range known {
			ok = ok || x == k.Value
		}
		switch {
		case !ok:
			return nil, specError(file, k, key, "unknown key (want %s)", strings.Join(known, ", "))
		case out[k.Value] != nil:
			return nil, specError(file, k, key, "given twice")
		}
		out[k.Value] = n.Content[i+1]
	}
	return out, nil
}

// scalar returns n's value, refusing a map or list.
func scalar(file string, n *yaml.Node, key string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Value == "" {
		return "", specError(file, n, key, "want a single value")
	}
	return n.Value, nil
}

// flow writes a YAML value on one line: a scalar as it is, a map or list
// in flow style ({kind: 10gbe, count: 2}).
func flow(n *yaml.Node) string {
	c := deepFlow(n)
	b, err := yaml.Marshal(c)
	if err != nil {
		return n.Value
	}
	return strings.TrimSpace(string(b))
}

func deepFlow(n *yaml.Node) *yaml.Node {
	c := *n
	c.Style |= yaml.FlowStyle
	c.HeadComment, c.LineComment, c.FootComment = "", "", ""
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, x := range n.Content {
		c.Content[i] = deepFlow(x)
	}
	return &c
}

// at returns the first non-nil node.
func at(nodes ...*yaml.Node) *yaml.Node {
	for _, n := range nodes {
		if n != nil {
			return n
		}
	}
	return nil
}

// hasAlias reports whether n holds a YAML alias (*name).
func hasAlias(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode {
		return true
	}
	for _, c := range n.Content {
		if hasAlias(c) {
			return true
		}
	}
	return false
}
