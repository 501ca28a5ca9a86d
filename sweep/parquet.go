package sweep

import (
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// A parquet column: its name, type, and its value in a row (ok false for
// null: an unknown price, a refused point's figures).
type parquetColumn struct {
	name string
	node parquet.Node
	get  func(r *Record, j *Job) (v any, ok bool)
}

// parquetColumns are the columns of WriteParquet after the axes': the
// CSV's, typed, with every latency percentile the record holds.
func parquetColumns(steady bool) []parquetColumn {
	str := func(f func(r *Record, j *Job) string) func(*Record, *Job) (any, bool) {
		return func(r *Record, j *Job) (any, bool) { return f(r, j), true }
	}
	job := func(f func(j *Job) any) func(*Record, *Job) (any, bool) {
		return func(_ *Record, j *Job) (any, bool) {
			if j == nil {
				return nil, false
			}
			return f(j), true
		}
	}
	positive := func(f func(r *Record) float64) func(*Record, *Job) (any, bool) {
		return func(r *Record, _ *Job) (any, bool) { v := f(r); return v, v > 0 }
	}
	bottleneck := func(f func(j *Job) any) func(*Record, *Job) (any, bool) {
		return func(_ *Record, j *Job) (any, bool) {
			if j == nil || j.Bottleneck == nil {
				return nil, false
			}
			return f(j), true
		}
	}
	opt := func(n parquet.Node) parquet.Node { return parquet.Optional(n) }
	f64 := parquet.Leaf(parquet.DoubleType)
	cols := []parquetColumn{
		{"point", parquet.Int(64), func(r *Record, _ *Job) (any, bool) { return int64(r.Index), true }},
		{"workload", parquet.String(), str(func(r *Record, _ *Job) string { return r.Workload })},
		{"error", opt(parquet.String()), func(r *Record, _ *Job) (any, bool) { return r.Error, r.Error != "" }},
		{"usable_bytes", opt(parquet.Int(64)), func(r *Record, _ *Job) (any, bool) { return r.UsableBytes, r.UsableBytes > 0 }},
		{"drives_tolerated", opt(parquet.Int(32)), func(r *Record, _ *Job) (any, bool) { return int32(r.Tolerates), r.Error == "" }},
		{"price_usd", opt(f64), positive(func(r *Record) float64 { return r.PriceUSD })},
		{"usd_per_tb", opt(f64), positive(func(r *Record) float64 { return r.USDPerTB() })},
		{"job", opt(parquet.String()), job(func(j *Job) any { return j.Name })},
		{"rw", opt(parquet.String()), job(func(j *Job) any { return j.RW })},
		{"bs", opt(parquet.Int(64)), job(func(j *Job) any { return j.BS })},
		{"iodepth", opt(parquet.Int(32)), job(func(j *Job) any { return int32(j.IODepth) })},
		{"numjobs", opt(parquet.Int(32)), job(func(j *Job) any { return int32(j.NumJobs) })},
		{"iops", opt(f64), job(func(j *Job) any { return j.IOPS })},
		{"mbps", opt(f64), job(func(j *Job) any { return j.MBps })},
		{"lat_mean_us", opt(f64), job(func(j *Job) any { return j.Lat.Mean })},
		{"lat_p50_us", opt(f64), job(func(j *Job) any { return j.Lat.P50 })},
		{"lat_p90_us", opt(f64), job(func(j *Job) any { return j.Lat.P90 })},
		{"lat_p99_us", opt(f64), job(func(j *Job) any { return j.Lat.P99 })},
		{"lat_p999_us", opt(f64), job(func(j *Job) any { return j.Lat.P999 })},
		{"lat_max_us", opt(f64), job(func(j *Job) any { return j.Lat.Max })},
		{"in_page_cache", opt(parquet.Leaf(parquet.BooleanType)), func(r *Record, j *Job) (any, bool) {
			if j == nil {
				return nil, false
			}
			return r.InPageCache(*j), true
		}},
		{"bottleneck", opt(parquet.String()), bottleneck(func(j *Job) any { return j.Bottleneck.Component })},
		{"bottleneck_resource", opt(parquet.String()), bottleneck(func(j *Job) any { return j.Bottleneck.Resource })},
		{"bottleneck_busy", opt(f64), bottleneck(func(j *Job) any { return j.Bottleneck.Busy })},
	}
	if steady { // the CSV's steadyColumns
		cols = append(cols,
			parquetColumn{"steady", opt(parquet.Leaf(parquet.BooleanType)), job(func(j *Job) any { return j.Steady != nil })},
			parquetColumn{"steady_at_s", opt(f64), func(_ *Record, j *Job) (any, bool) {
				if j == nil || j.Steady == nil {
					return nil, false
				}
				return j.Steady.At, true
			}})
	}
	return cols
}

// WriteParquet writes the results as a Parquet file (zstd): the CSV's
// rows — one per point and job, one for a refused point — with typed
// columns a planner filters on: an axis's values (a string column named
// by its key), the setup's capacity, price and $/TB, each job's figures
// and its bottleneck. Unknown values (a price the catalog lacks, a
// refused point's figures) are nulls. Parquet orders a schema's columns
// by name.
func (r *Results) WriteParquet(w io.Writer) error {
	cols := parquetColumns(r.Header.Steady != "")
	byName := map[string]parquetColumn{}
	group := parquet.Group{}
	for _, c := range cols {
		byName[c.name] = c
		group[c.name] = parquet.Compressed(c.node, &zstd.Codec{})
	}
	for i, k := range r.Header.Keys {
		if _, ok := byName[k]; ok {
			return fmt.Errorf("sweep: axis %q has the name of a result column", k)
		}
		i := i
		c := parquetColumn{name: k, node: parquet.String(), get: func(rec *Record, _ *Job) (any, bool) { return rec.Values[i], true }}
		byName[k] = c
		group[k] = parquet.Compressed(c.node, &zstd.Codec{})
	}
	schema := parquet.NewSchema("sweep", group)
	leaves := schema.Fields()
	pw := parquet.NewWriter(w, schema)
	row := func(rec *Record, j *Job) parquet.Row {
		out := make(parquet.Row, len(leaves))
		for ci, f := range leaves {
			v, ok := byName[f.Name()].get(rec, j)
			switch {
			case !ok:
				out[ci] = parquet.NullValue().Level(0, 0, ci)
			case f.Optional():
				out[ci] = parquet.ValueOf(v).Level(0, 1, ci)
			default:
				out[ci] = parquet.ValueOf(v).Level(0, 0, ci)
			}
		}
		return out
	}
	var rows []parquet.Row
	for i := range r.Records {
		rec := &r.Records[i]
		if len(rec.Results) == 0 {
			rows = append(rows, row(rec, nil))
		}
		for k := range rec.Results {
			rows = append(rows, row(rec, &rec.Results[k]))
		}
		if len(rows) >= 4096 {
			if _, err := pw.WriteRows(rows); err != nil {
				return err
			}
			rows = rows[:0]
		}
	}
	if _, err := pw.WriteRows(rows); err != nil {
		return err
	}
	return pw.Close()
}
