package sweep

import (
	"bytes"
	"context"
	"encoding/csv"
	"math"
	"strconv"
	"sync"
	"testing"

	"github.com/parquet-go/parquet-go"
)

var small struct {
	sync.Once
	res *Results
	err error
}

// smallResults runs ci-small.yaml once for the tests that read results.
func smallResults(t *testing.T) *Results {
	t.Helper()
	small.Do(func() {
		sp, err := Load("../testdata/sweeps/ci-small.yaml", loadSetup)
		if err != nil {
			small.err = err
			return
		}
		all := make([]int, sp.Len())
		for i := range all {
			all[i] = i
		}
		recs, err := sp.Run(context.Background(), all, Options{})
		small.res, small.err = &Results{Header: Header{Sweep: sp.Name, Digest: sp.Digest, Points: sp.Len(), Keys: sp.Keys(), Shards: 1}, Records: recs}, err
	})
	if small.err != nil {
		t.Fatal(small.err)
	}
	return small.res
}

// TestParquetEqualsCSV writes the small sweep as Parquet and as CSV,
// reads the Parquet file back with the library's reader and checks that
// it holds the CSV's rows: every CSV column is a Parquet column of the
// same name, strings and booleans equal, numbers equal to the CSV's
// rounding, nulls where the CSV is empty.
func TestParquetEqualsCSV(t *testing.T) {
	res := smallResults(t)
	var pq, cs bytes.Buffer
	if err := res.WriteFormat(&pq, "parquet"); err != nil {
		t.Fatal(err)
	}
	if err := res.WriteCSV(&cs); err != nil {
		t.Fatal(err)
	}
	table, err := csv.NewReader(&cs).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head, want := table[0], table[1:]

	f, err := parquet.OpenFile(bytes.NewReader(pq.Bytes()), int64(pq.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if f.NumRows() != int64(len(want)) {
		t.Fatalf("%d Parquet rows, %d CSV rows", f.NumRows(), len(want))
	}
	col := map[string]int{}
	for i, c := range f.Schema().Fields() {
		col[c.Name()] = i
	}
	r := parquet.NewReader(bytes.NewReader(pq.Bytes()))
	defer r.Close()
	rows := make([]parquet.Row, len(want))
	if n, err := r.ReadRows(rows); n != len(want) {
		t.Fatalf("read %d rows: %v", n, err)
	}
	for i, line := range want {
		for c, name := range head {
			ci, ok := col[name]
			if !ok {
				t.Fatalf("no Parquet column %q", name)
			}
			var v parquet.Value
			for _, x := range rows[i] {
				if x.Column() == ci {
					v = x
				}
			}
			cell := line[c]
			switch {
			case v.IsNull():
				if cell != "" {
					t.Errorf("row %d %s: null, CSV %q", i, name, cell)
				}
			case v.Kind() == parquet.Double:
				x, err := strconv.ParseFloat(cell, 64)
				if err != nil || math.Abs(x-v.Double()) > 0.0500001 { // the CSV rounds to 1, 2 or 4 places
					t.Errorf("row %d %s: %v, CSV %q", i, name, v.Double(), cell)
				}
			case v.Kind() == parquet.Boolean:
				if strconv.FormatBool(v.Boolean()) != cell {
					t.Errorf("row %d %s: %v, CSV %q", i, name, v.Boolean(), cell)
				}
			case v.Kind() == parquet.Int32 || v.Kind() == parquet.Int64:
				if strconv.FormatInt(v.Int64(), 10) != cell {
					t.Errorf("row %d %s: %d, CSV %q", i, name, v.Int64(), cell)
				}
			default:
				if v.String() != cell {
					t.Errorf("row %d %s: %q, CSV %q", i, name, v.String(), cell)
				}
			}
		}
	}
}
