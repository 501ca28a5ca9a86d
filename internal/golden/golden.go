// Package golden keeps the golden tests of the models readable: a test
// runs seeded traces and writes what the model answered as a text table
// — per configuration and workload the requests, errors, latency mean and
// percentiles and the last completion, then every counter — which it
// compares with a file under testdata. A change of behaviour is then a
// diff a reviewer can read (which figure moved, by how much), not "digest
// X, want Y".
//
// The tables pin the model bit for bit all the same: latencies are
// printed in exact nanoseconds, counters in the shortest form that reads
// back as the same float64, and each row ends with a trace column, an
// FNV-1a hash of every answer of the row, so that a change no summary
// figure shows (two completions swapped) still fails, on the row where it
// is.
//
// The package is test support for the models (it reads and writes files,
// which models never do), so it lives outside models/.
//
// Run a package's tests with -rewrite to write its golden files afresh,
// and say in the commit why the figures moved.
package golden

import (
	"encoding/binary"
	"flag"
	"fmt"
	"hash"
	"hash/fnv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
)

var rewrite = flag.Bool("rewrite", false, "write the golden files afresh from what the models answer")

// Series gathers the answers of one row: latencies of the requests that
// succeeded, the indexes of those that failed, and whatever else the test
// hashes into the row's trace.
type Series struct {
	lat  []int64
	errs int
	last time.Duration
	h    hash.Hash64
	buf  [8]byte
}

// NewSeries returns an empty series.
func NewSeries() *Series { return &Series{h: fnv.New64a()} }

// Done records request i, submitted at at, that completed at done or
// failed with err.
func (s *Series) Done(i int, at, done time.Duration, err error) {
	s.Hash(int64(done))
	if err != nil {
		s.Hash(int64(i))
		s.errs++
		return
	}
	s.lat = append(s.lat, int64(done-at))
	s.last = max(s.last, done)
}

// Hash adds v to the row's trace only (an answer that is not a request's
// completion: a calendar's reservation, a slot, a computed time).
func (s *Series) Hash(v int64) {
	binary.LittleEndian.PutUint64(s.buf[:], uint64(v))
	s.h.Write(s.buf[:])
}

// Header is the header of the columns Cells fills.
var Header = []string{"requests", "errors", "mean_us", "p50_us", "p99_us", "max_us", "end_ms", "trace"}

// Cells returns the row's figures, in the order of Header.
func (s *Series) Cells() []string {
	n := len(s.lat)
	var sum int64
	for _, v := range s.lat {
		sum += v
	}
	sorted := slices.Clone(s.lat)
	slices.Sort(sorted)
	pct := func(p int) int64 {
		if n == 0 {
			return 0
		}
		return sorted[(n-1)*p/100]
	}
	mean := "0"
	if n > 0 {
		mean = strconv.FormatFloat(float64(sum)/float64(n)/1e3, 'f', 3, 64)
	}
	return []string{
		strconv.Itoa(n + s.errs), strconv.Itoa(s.errs), mean,
		us(pct(50)), us(pct(99)), us(pct(100)),
		strconv.FormatFloat(float64(s.last)/1e6, 'f', 6, 64),
		s.Trace(),
	}
}

// Trace returns the hash of every answer of the row, in hex.
func (s *Series) Trace() string { return fmt.Sprintf("%016x", s.h.Sum64()) }

// us prints nanoseconds as microseconds, exactly.
func us(ns int64) string { return strconv.FormatFloat(float64(ns)/1e3, 'f', 3, 64) }

// Table is a text table with aligned columns.
type Table struct {
	rows [][]string
}

// NewTable returns a table with the given header.
func NewTable(header ...string) *Table { return &Table{rows: [][]string{header}} }

// Row adds a row.
func (t *Table) Row(cells ...string) { t.rows = append(t.rows, cells) }

// String writes the table, its columns padded to their widest cell.
func (t *Table) String() string {
	var width []int
	for _, r := range t.rows {
		for i, c := range r {
			if i >= len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], len(c))
		}
	}
	var b strings.Builder
	for _, r := range t.rows {
		for i, c := range r {
			if i == len(r)-1 {
				b.WriteString(c)
				break
			}
			fmt.Fprintf(&b, "%-*s  ", width[i], c)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// Counters adds one row per counter to t: the row's name, the device's
// place in the stack, the counter's name and its value, exactly.
func Counters(t *Table, row, device string, cs []models.Counter) {
	for _, c := range cs {
		t.Row(row, device, c.Name, strconv.FormatFloat(c.Value, 'f', -1, 64))
	}
}

// StackCounters adds the counters of every device of the stack rooted at
// d, each named by its depth and its index in the walk.
func StackCounters(t *Table, row string, d models.Device) {
	i := 0
	models.Walk(d, func(dev models.Device, depth int) {
		if o, ok := dev.(models.Observer); ok {
			Counters(t, row, fmt.Sprintf("%d.%d", depth, i), o.Counters())
		}
		i++
	})
}

// Check compares got with the golden file testdata/name.golden of the
// test's package, or writes the file with -rewrite. A difference fails
// the test with the lines that differ.
func Check(t testing.TB, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *rewrite {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -rewrite to write it)", err)
	}
	if string(want) == got {
		return
	}
	wl, gl := strings.Split(string(want), "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < max(len(wl), len(gl)) && shown < 30; i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			fmt.Fprintf(&b, "line %d:\n- %s\n+ %s\n", i+1, w, g)
			shown++
		}
	}
	t.Errorf("the model's answers differ from %s (- golden, + now; rerun with -rewrite if the change is meant, and say why in the commit):\n%s", path, b.String())
}
