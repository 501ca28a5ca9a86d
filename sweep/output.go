package sweep

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/nasemu/nasemu/models"
)

// Formats are the outputs a sweep writes: a table for people, CSV (one
// row per point and job), JSON lines (a header, then one record per
// point) and Parquet (the CSV's rows, typed).
var Formats = []string{"table", "csv", "json", "parquet"}

// Results are a sweep's records with the header that says what they are.
type Results struct {
	Header  Header
	Records []Record
}

// WriteFormat writes the results as "table", "csv", "json" or "parquet".
func (r *Results) WriteFormat(w io.Writer, format string) error {
	switch format {
	case "table":
		return r.WriteTable(w)
	case "csv":
		return r.WriteCSV(w)
	case "json":
		return r.WriteJSON(w)
	case "parquet":
		return r.WriteParquet(w)
	}
	return fmt.Errorf("%w: unknown format %q (known: %s)", models.ErrConfig, format, strings.Join(Formats, ", "))
}

// WriteJSON writes the header and each record as a line of JSON: the
// format of shard files.
func (r *Results) WriteJSON(w io.Writer) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	if err := enc.Encode(r.Header); err != nil {
		return err
	}
	for _, rec := range r.Records {
		if err := enc.Encode(rec); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// csvColumns are the CSV's columns after the axes' keys.
var csvColumns = []string{"workload", "error", "usable_bytes", "drives_tolerated", "price_usd", "usd_per_tb",
	"job", "rw", "bs", "iodepth", "numjobs", "iops", "mbps", "lat_mean_us", "lat_p50_us", "lat_p99_us", "lat_p999_us", "in_page_cache",
	"bottleneck", "bottleneck_resource", "bottleneck_busy"}

// steadyColumns follow csvColumns when the sweep ran with a steady-state
// criterion (Header.Steady): whether the job met it and ended early, and
// when, in seconds of its measured window.
var steadyColumns = []string{"steady", "steady_at_s"}

func steadyCells(j Job) []string {
	if j.Steady == nil {
		return []string{"false", ""}
	}
	return []string{"true", fixed(j.Steady.At, 4)}
}

// WriteCSV writes one row per point and job (one row with the error for a
// point that has no results), the axes' values in columns named by their
// keys.
func (r *Results) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	head := append(append([]string{"point"}, r.Header.Keys...), csvColumns...)
	steady := r.Header.Steady != ""
	if steady {
		head = append(head, steadyColumns...)
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, rec := range r.Records {
		point := append([]string{strconv.Itoa(rec.Index)}, rec.Values...)
		point = append(point, rec.Workload, rec.Error, intOrEmpty(rec.UsableBytes), "", money(rec.PriceUSD), money(rec.USDPerTB()))
		if rec.Error == "" {
			point[len(point)-3] = strconv.Itoa(rec.Tolerates)
		}
		if len(rec.Results) == 0 {
			if err := cw.Write(append(point, make([]string, len(head)-len(point))...)); err != nil {
				return err
			}
			continue
		}
		for _, j := range rec.Results {
			row := append(append([]string(nil), point...), j.Name, j.RW, strconv.FormatInt(j.BS, 10),
				strconv.Itoa(j.IODepth), strconv.Itoa(j.NumJobs), fixed(j.IOPS, 1), fixed(j.MBps, 2),
				fixed(j.Lat.Mean, 1), fixed(j.Lat.P50, 1), fixed(j.Lat.P99, 1), fixed(j.Lat.P999, 1),
				strconv.FormatBool(rec.InPageCache(j)))
			if b := j.Bottleneck; b != nil {
				row = append(row, b.Component, b.Resource, fixed(b.Busy, 4))
			} else {
				row = append(row, "", "", "")
			}
			if steady {
				row = append(row, steadyCells(j)...)
			}
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteTable writes the results for people: a row per point and job with
// the axes, MB/s, IOPS, p99 latency, price, $/TB and the bottleneck; a point's error in
// place of its figures. † marks a job whose working set fits in the NAS
// page cache.
func (r *Results) WriteTable(w io.Writer) error {
	fmt.Fprintf(w, "sweep %s: %d of %d points", r.Header.Sweep, len(r.Records), r.Header.Points)
	if r.Header.Shards > 1 {
		fmt.Fprintf(w, " (shard %d of %d)", r.Header.Shard, r.Header.Shards)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	steadyHead := ""
	if r.Header.Steady != "" {
		fmt.Fprintf(w, "steady state: %s (a job ends once met; steady at: when, in s of its window)\n", r.Header.Steady)
		steadyHead = "steady at\t"
	}
	fmt.Fprintf(tw, "#\t%s\tworkload\tjob\tMB/s\tIOPS\tp99 µs\tusable\tprice\t$/TB\tbottleneck\t%s\n", strings.Join(r.Header.Keys, "\t"), steadyHead)
	cached := false
	for _, rec := range r.Records {
		lead := strconv.Itoa(rec.Index) + "\t" + strings.Join(rec.Values, "\t") + "\t" + rec.Workload + "\t"
		if rec.Error != "" {
			fmt.Fprintf(tw, "%s-\t-\t-\t-\t-\t-\t-\t-\t\n", lead)
			continue
		}
		tail := fmt.Sprintf("%s\t%s\t%s\t", human(rec.UsableBytes), dollars(rec.PriceUSD), dollars(rec.USDPerTB()))
		for _, j := range rec.Results {
			mark := ""
			if rec.InPageCache(j) {
				mark, cached = " †", true
			}
			st := ""
			if r.Header.Steady != "" {
				st = "-\t"
				if j.Steady != nil {
					st = fixed(j.Steady.At, 3) + "\t"
				}
			}
			fmt.Fprintf(tw, "%s%s%s\t%s\t%s\t%s\t%s%s\t%s\n", lead, j.Name, mark, fixed(j.MBps, 1), fixed(j.IOPS, 0), fixed(j.Lat.P99, 0), tail, j.Bottleneck.String(), st)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, rec := range r.Records {
		if rec.Error != "" {
			fmt.Fprintf(w, "point %d (%s): %s\n", rec.Index, strings.Join(rec.Values, ", "), strings.TrimPrefix(rec.Error, "point "+strconv.Itoa(rec.Index)+": "))
		}
	}
	if cached {
		fmt.Fprintln(w, "† the job's working set fits in the NAS page cache: it measures RAM, link and protocol, not the storage")
	}
	return nil
}

func fixed(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }

func money(v float64) string {
	if v <= 0 {
		return ""
	}
	return fixed(v, 2)
}

func dollars(v float64) string {
	if v <= 0 {
		return "-"
	}
	return "$" + fixed(v, 0)
}

func intOrEmpty(v int64) string {
	if v == 0 {
		return ""
	}
	return strconv.FormatInt(v, 10)
}

// human writes a capacity in decimal units with three figures, as drives
// are sold.
func human(b int64) string {
	f := float64(b)
	for _, u := range []struct {
		s string
		m float64
	}{{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}} {
		if f >= u.m {
			return strconv.FormatFloat(f/u.m, 'f', 3-len(strconv.Itoa(int(f/u.m))), 64) + " " + u.s
		}
	}
	return strconv.FormatInt(b, 10) + " B"
}

// ShardFile is the name of shard k of n's file in an output directory.
func ShardFile(k, n int) string { return fmt.Sprintf("shard-%d-of-%d.jsonl", k, n) }

// maxLine bounds one line of a shard file (a record of many jobs is a few
// KiB; a sweep's axes values are short).
const maxLine = 1 << 20

// ReadShard reads a shard file: its header and the records of its
// complete lines. A last line without its newline (a run killed while
// writing it) is left out; its length is returned as torn so that a
// resumed run can cut it off.
func ReadShard(path string) (h Header, recs []Record, good int64, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return h, nil, 0, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	line := 0
	for {
		b, err := readLine(br)
		if errors.Is(err, io.EOF) {
			break // a torn last line, or the end
		}
		if err != nil {
			return h, nil, 0, fmt.Errorf("%s:%d: %w", path, line+1, err)
		}
		line++
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if line == 1 {
			if err := dec.Decode(&h); err != nil || h.Digest == "" {
				return h, nil, 0, fmt.Errorf("%w: %s:1: not a sweep shard file (want its header)", models.ErrConfig, path)
			}
		} else {
			var rec Record
			if err := dec.Decode(&rec); err != nil {
				return h, nil, 0, fmt.Errorf("%w: %s:%d: %v", models.ErrConfig, path, line, err)
			}
			if rec.Index < 0 || rec.Index >= h.Points || len(rec.Values) != len(h.Keys) {
				return h, nil, 0, fmt.Errorf("%w: %s:%d: point %d does not belong to the sweep of its header", models.ErrConfig, path, line, rec.Index)
			}
			recs = append(recs, rec)
		}
		good += int64(len(b))
	}
	if line == 0 {
		return h, nil, 0, fmt.Errorf("%w: %s: empty (no header)", models.ErrConfig, path)
	}
	return h, recs, good, nil
}

// readLine returns the next line with its newline; io.EOF when no
// complete line is left.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		line = append(line, chunk...)
		if len(line) > maxLine {
			return nil, fmt.Errorf("%w: a line longer than %d bytes", models.ErrConfig, maxLine)
		}
		switch {
		case err == nil:
			return line, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, err
		}
	}
}

// Merge reads the shard files in dirs and returns the whole sweep's
// results. The shards must be of one sweep (one digest), hold every point
// once and no point twice.
func Merge(dirs ...string) (*Results, error) {
	var files []string
	for _, d := range dirs {
		m, err := filepath.Glob(filepath.Join(d, "shard-*-of-*.jsonl"))
		if err != nil {
			return nil, err
		}
		if len(m) == 0 {
			return nil, fmt.Errorf("%w: %s holds no shard files (shard-K-of-N.jsonl)", models.ErrConfig, d)
		}
		files = append(files, m...)
	}
	sort.Strings(files)
	var res *Results
	from := map[int]string{}
	var first string
	for _, f := range files {
		h, recs, _, err := ReadShard(f)
		if err != nil {
			return nil, err
		}
		if res == nil {
			res, first = &Results{Header: h}, f
			res.Header.Shard, res.Header.Shards = 0, 1
		} else if h.Digest != res.Header.Digest || h.Points != res.Header.Points {
			return nil, fmt.Errorf("%w: %s is of sweep %s (digest %s, %d points), %s of %s (digest %s, %d points): merge shards of one sweep",
				models.ErrConfig, f, h.Sweep, h.Digest, h.Points, first, res.Header.Sweep, res.Header.Digest, res.Header.Points)
		}
		for _, rec := range recs {
			if other, ok := from[rec.Index]; ok {
				return nil, fmt.Errorf("%w: point %d is in %s and in %s", models.ErrConfig, rec.Index, other, f)
			}
			from[rec.Index] = f
			res.Records = append(res.Records, rec)
		}
	}
	if n := res.Header.Points - len(res.Records); n > 0 {
		var missing []string
		for i := 0; i < res.Header.Points && len(missing) < 10; i++ {
			if _, ok := from[i]; !ok {
				missing = append(missing, strconv.Itoa(i))
			}
		}
		return nil, fmt.Errorf("%w: %d of %d points are missing (%s%s): a shard has not finished or its output is elsewhere",
			models.ErrConfig, n, res.Header.Points, strings.Join(missing, ", "), map[bool]string{true: ", ...", false: ""}[n > len(missing)])
	}
	sort.Slice(res.Records, func(a, b int) bool { return res.Records[a].Index < res.Records[b].Index })
	return res, nil
}
