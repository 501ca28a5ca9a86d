package sweep

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/setup"
)

// loadSetup loads the repository's built-in setups by name, or a file.
func loadSetup(name string) (*setup.Setup, error) {
	return setup.Load(name, os.DirFS("../testdata/setups"), os.ReadFile)
}

func loadSpec(t *testing.T, name string) *Spec {
	t.Helper()
	sp, err := Load(filepath.Join("../testdata/sweeps", name), loadSetup)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

func TestExampleSpec(t *testing.T) {
	sp := loadSpec(t, "example-500.yaml")
	if sp.Len() != 500 {
		t.Fatalf("example-500 has %d points", sp.Len())
	}
	if got := strings.Join(sp.Keys(), " "); got != "drives.model drives.count raid.level link" {
		t.Errorf("keys %q", got)
	}
	// The last axis varies fastest; the workload is the last of all.
	p := sp.Point(7)
	if want := []string{"wd-red-plus-4tb", "2", "raid1", "{kind: 1gbe, count: 4, mode: smb-multichannel}"}; !reflect.DeepEqual(p.Values, want) {
		t.Errorf("point 7 = %q, want %q", p.Values, want)
	}
	s, err := sp.Setup(sp.Point(499))
	if err != nil {
		t.Fatal(err)
	}
	if s.DriveCount() != 8 || s.RAID.Level.String() != "raid10" || s.Link.Kind != "10gbe" || s.Link.Count != 2 || s.Drives[0].Ref != "samsung-870-qvo-1t" {
		t.Errorf("point 499 builds %d × %s in %s over %d × %s", s.DriveCount(), s.Drives[0].Ref, s.RAID.Level, s.Link.Count, s.Link.Kind)
	}
	// Impossible points are the setup's: RAID 5 on 2 drives, RAID 6 and
	// RAID 10 on fewer than 4; every other combination builds.
	bad := 0
	for i := range sp.Len() {
		p := sp.Point(i)
		_, err := sp.Setup(p)
		wantBad := p.Values[1] == "2" && (p.Values[2] == "raid5" || p.Values[2] == "raid6" || p.Values[2] == "raid10")
		if (err != nil) != wantBad {
			t.Errorf("point %d %v: err %v, want refused: %v", i, p.Values, err, wantBad)
		}
		if err != nil {
			bad++
		}
	}
	if bad != 75 {
		t.Errorf("%d impossible points, want 75 (5 models × 3 levels × 5 links on 2 drives)", bad)
	}
	// Its 4 GiB test file is past the DS1817's page cache, so the
	// storage and the link show: 8 SATA SSDs in RAID 0 over 10GbE read
	// sequentially at several times what 2 hard disks in RAID 1 over
	// 1GbE (its line rate, ~118 MB/s) do.
	hdd, ssd := sp.RunPoint(sp.Point(5)), sp.RunPoint(sp.Point(378))
	if hdd.Values[0] != "wd-red-plus-4tb" || ssd.Values[0] != "kingston-dc500m-480g" || ssd.Values[3] != "10gbe" {
		t.Fatalf("points 5 and 378 are %v and %v", hdd.Values, ssd.Values)
	}
	for _, r := range []Record{hdd, ssd} {
		if r.Error != "" || len(r.Results) == 0 || r.InPageCache(r.Results[0]) {
			t.Fatalf("point %d: error %q, %d results, in page cache: %v", r.Index, r.Error, len(r.Results), len(r.Results) > 0 && r.InPageCache(r.Results[0]))
		}
	}
	if h, s := hdd.Results[0].MBps, ssd.Results[0].MBps; !(h > 50 && h < 120 && s > 5*h) {
		t.Errorf("%s: %.0f MB/s on 2 HDDs over 1GbE, %.0f MB/s on 8 SSDs over 10GbE", hdd.Results[0].Name, h, s)
	}
}

func TestBadSpecs(t *testing.T) {
	good := "base: ds1817-raid5-hdd-smb-1g\nworkloads: [{suite: cdm}]\naxes:\n  - key: drives.count\n    values: [2, 4]\n"
	if _, err := Parse("ok.yaml", []byte(good), ".", loadSetup); err != nil {
		t.Fatalf("the good spec: %v", err)
	}
	huge := "base: ds1817-raid5-hdd-smb-1g\nworkloads: [{suite: cdm}]\naxes:\n"
	for _, k := range []string{"raid.chunk", "link.mtu", "drives.overprovision", "clients", "drives.count"} {
		huge += "  - key: " + k + "\n    values: [" + strings.Repeat("1, ", 0) + "a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, b0, b1]\n"
	}
	for _, c := range []struct{ name, text, want string }{
		{"unknown spec key", "base: ds1817-raid5-hdd-smb-1g\nworkloads: [{suite: cdm}]\naxis: []\n", "x.yaml:3: axis: unknown key"},
		{"no base", "workloads: [{suite: cdm}]\n", "base: missing"},
		{"unknown base", "base: ds9999\nworkloads: [{suite: cdm}]\n", "x.yaml:1: base: "},
		{"unknown axis", good + "  - key: drives.modle\n    values: [wd-red-4tb]\n", "x.yaml:7: axes[1].values[0]: drives.modle=wd-red-4tb"},
		{"unknown axis names the key", good + "  - key: drives.modle\n    values: [wd-red-4tb]\n", "drives.modle: unknown key (did you mean model?)"},
		{"unknown drive", good + "  - key: drives.model\n    values: [wd-red-4tb, wd-red-99tb]\n", `unknown drive "wd-red-99tb"`},
		{"unknown level", good + "  - key: raid.level\n    values: [raid7]\n", `unknown level "raid7"`},
		{"empty axis", good + "  - key: raid.level\n    values: []\n", "axes[1].values: axis raid.level needs a non-empty list"},
		{"axis twice", good + "  - key: drives.count\n    values: [6]\n", "drives.count is an axis twice"},
		{"value twice", good + "  - key: raid.level\n    values: [raid0, raid0]\n", "raid0 is in axis raid.level twice"},
		{"no workloads", "base: ds1817-raid5-hdd-smb-1g\n", "workloads: want a non-empty list"},
		{"unknown suite", "base: ds1817-raid5-hdd-smb-1g\nworkloads: [{suite: cdn}]\n", `unknown suite "cdn"`},
		{"bad size", "base: ds1817-raid5-hdd-smb-1g\nworkloads: [{suite: cdm, size: 0}]\n", "workloads[0].size: want a positive size"},
		{"bad runtime", "base: ds1817-raid5-hdd-smb-1g\nworkloads: [{suite: cdm, runtime: -1s}]\n", "workloads[0].runtime: want a positive duration"},
		{"huge", huge, "(at most 100000 per sweep): split the spec"},
		{"alias", "base: ds1817-raid5-hdd-smb-1g\nworkloads: [{suite: cdm}]\nx: &a 1\n", "unknown key"},
		{"not yaml", "base: [\n", "x.yaml: "},
		{"bad steady", "base: ds1817-raid5-hdd-smb-1g\nworkloads: [{suite: cdm}]\nsteady: 0\n", "x.yaml:3: steady: want true, false or a round's completions"},
		{"steady not a number", "base: ds1817-raid5-hdd-smb-1g\nworkloads: [{suite: cdm}]\nsteady: pts\n", "steady: want true, false"},
	} {
		_, err := Parse("x.yaml", []byte(c.text), ".", loadSetup)
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, ErrSpec) || !errors.Is(err, models.ErrConfig) {
			t.Errorf("%s: got %v, want an ErrSpec containing %q", c.name, err, c.want)
		}
	}
}

func TestPrice(t *testing.T) {
	s, err := loadSetup("ds1817-raid5-hdd-cache-smb-1g")
	if err != nil {
		t.Fatal(err)
	}
	// DS1817 $850 + 4 × WD Red 1TB $60 + 2 × Kingston UV500 240GB $45.
	if usd, ok := Price(s); !ok || usd != 850+4*60+2*45 {
		t.Errorf("price %v %v, want 1180", usd, ok)
	}
	s, err = s.With("nas", "{base: synology-ds1817, ram: 8GiB}")
	if err != nil {
		t.Fatal(err)
	}
	if usd, ok := Price(s); ok {
		t.Errorf("an inline system has no catalog price, got %v", usd)
	}
}

// TestRunShardMerge runs the small sweep with one worker and with two, as
// three shards written to files (one resumed after a torn line), and
// checks that all give the same records and the same CSV; that an
// impossible point carries the setup's message; and that merge refuses
// missing and duplicate points.
func TestRunShardMerge(t *testing.T) {
	sp := loadSpec(t, "ci-small.yaml")
	all := make([]int, sp.Len())
	for i := range all {
		all[i] = i
	}
	one, err := sp.Run(context.Background(), all, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	two, err := sp.Run(context.Background(), all, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(one, two) {
		t.Fatal("records differ between 1 and 2 workers")
	}
	h := Header{Sweep: sp.Name, Digest: sp.Digest, Points: sp.Len(), Keys: sp.Keys(), Shards: 1}
	var want bytes.Buffer
	if err := (&Results{Header: h, Records: one}).WriteCSV(&want); err != nil {
		t.Fatal(err)
	}
	for _, r := range one {
		switch {
		case r.Values[1] == "2" && r.Values[2] == "raid6":
			if !strings.Contains(r.Error, "raid6 needs at least 4 drives") || len(r.Results) != 0 {
				t.Errorf("point %d %v: error %q with %d results", r.Index, r.Values, r.Error, len(r.Results))
			}
		case r.Error != "" || len(r.Results) != 8 || r.PriceUSD <= 0 || r.USDPerTB() <= 0 || r.Results[0].MBps <= 0:
			t.Errorf("point %d %v: error %q, %d results, $%v, $%v/TB", r.Index, r.Values, r.Error, len(r.Results), r.PriceUSD, r.USDPerTB())
		default:
			for _, j := range r.Results {
				if b := j.Bottleneck; b == nil || b.Resource == "" || b.Busy <= 0 || b.Busy > 1.001 {
					t.Errorf("point %d %v %s: bottleneck %v", r.Index, r.Values, j.Name, b)
				}
			}
		}
	}

	dir := t.TempDir()
	const shards = 3
	for k := range shards {
		idx, err := ShardIndices(sp.Len(), k, shards)
		if err != nil {
			t.Fatal(err)
		}
		hk := h
		hk.Shard, hk.Shards = k, shards
		out, err := OpenOutput(dir, hk)
		if err != nil {
			t.Fatal(err)
		}
		if k == 1 {
			// Stop shard 1 after its first point, tear a line, resume.
			if _, err := sp.Run(context.Background(), idx[:1], Options{Workers: 1, Done: out.Append}); err != nil {
				t.Fatal(err)
			}
			if _, err := out.f.WriteString(`{"index":`); err != nil {
				t.Fatal(err)
			}
			out.Close()
			if out, err = OpenOutput(dir, hk); err != nil {
				t.Fatal(err)
			}
			if len(out.Have()) != 1 {
				t.Fatalf("resumed shard holds %d points, want 1", len(out.Have()))
			}
		}
		have := out.Have()
		if _, err := sp.Run(context.Background(), idx, Options{Workers: 2, Done: out.Append,
			Skip: func(i int) bool { _, ok := have[i]; return ok }}); err != nil {
			t.Fatal(err)
		}
		out.Close()
		if k == 0 {
			if _, err := Merge(dir); err == nil || !strings.Contains(err.Error(), "points are missing") {
				t.Errorf("merge of shard 0 alone: %v, want missing points", err)
			}
		}
	}
	res, err := Merge(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := res.WriteCSV(&got); err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() {
		t.Errorf("merged CSV differs from one process's:\n%s\nwant\n%s", got.String(), want.String())
	}
	// Another sweep's shard in the same directory is refused.
	hx := h
	hx.Digest = "0123456789abcdef"
	if _, err := OpenOutput(dir, Header{Sweep: "x", Digest: hx.Digest, Points: h.Points, Keys: h.Keys, Shard: 0, Shards: shards}); err == nil {
		t.Error("OpenOutput over another sweep's shard file: no error")
	}
	// A point twice is refused.
	b, err := os.ReadFile(filepath.Join(dir, ShardFile(0, shards)))
	if err != nil {
		t.Fatal(err)
	}
	dup := t.TempDir()
	lines := strings.SplitAfter(string(b), "\n")
	if err := os.WriteFile(filepath.Join(dup, ShardFile(0, shards)), []byte(lines[0]+lines[1]), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Merge(dir, dup); err == nil || !strings.Contains(err.Error(), "is in") {
		t.Errorf("merge with a point twice: %v", err)
	}
}

// TestSteady: with "steady:", every job runs under SNIA PTS's criterion
// over rounds of completions and ends once it is met; the records say
// when, the outputs carry it (and only then), and the figures are those
// of the full run within a few percent, since the model is steady by then.
func TestSteady(t *testing.T) {
	const text = "base: ds1817-raid5-hdd-smb-1g\nworkloads: [{suite: cdm, size: 1GiB, runtime: 1s}]\n" +
		"axes:\n  - key: drives.model\n    values: [kingston-dc500m-480g]\n"
	full, err := Parse("full.yaml", []byte(text), ".", loadSetup)
	if err != nil {
		t.Fatal(err)
	}
	steady, err := Parse("steady.yaml", []byte(text+"steady: 500\n"), ".", loadSetup)
	if err != nil {
		t.Fatal(err)
	}
	if steady.Digest == full.Digest || steady.SteadyCriterion() != "pts:iops:5x500" || full.SteadyCriterion() != "" {
		t.Fatalf("digests %s, %s; criteria %q, %q", steady.Digest, full.Digest, steady.SteadyCriterion(), full.SteadyCriterion())
	}
	a, b := full.RunPoint(full.Point(0)), steady.RunPoint(steady.Point(0))
	if a.Error != "" || b.Error != "" || len(a.Results) != len(b.Results) {
		t.Fatalf("errors %q, %q; %d and %d results", a.Error, b.Error, len(a.Results), len(b.Results))
	}
	early := 0
	for i, x := range b.Results {
		y := a.Results[i]
		if y.Steady != nil {
			t.Errorf("%s: steady %v without a criterion", y.Name, y.Steady)
		}
		if x.Steady == nil {
			continue
		}
		early++
		if x.Steady.At <= 0 || x.Steady.At >= 1 || x.Steady.Criterion != "pts:iops:5x500" {
			t.Errorf("%s: steady %+v, want within the 1-s run", x.Name, *x.Steady)
		}
		if d := x.IOPS/y.IOPS - 1; d < -0.05 || d > 0.05 {
			t.Errorf("%s: %.0f IOPS steady, %.0f full (%+.1f %%)", x.Name, x.IOPS, y.IOPS, 100*d)
		}
	}
	if early == 0 {
		t.Fatal("no job met the criterion")
	}
	var csvFull, csvSteady, table bytes.Buffer
	hf := Header{Sweep: "full", Digest: full.Digest, Points: 1, Keys: full.Keys(), Shards: 1}
	hs := Header{Sweep: "steady", Digest: steady.Digest, Points: 1, Keys: steady.Keys(), Shards: 1, Steady: steady.SteadyCriterion()}
	if err := (&Results{Header: hf, Records: []Record{a}}).WriteCSV(&csvFull); err != nil {
		t.Fatal(err)
	}
	if err := (&Results{Header: hs, Records: []Record{b}}).WriteCSV(&csvSteady); err != nil {
		t.Fatal(err)
	}
	if err := (&Results{Header: hs, Records: []Record{b}}).WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(csvFull.String(), "steady") {
		t.Errorf("a run without the criterion has steady columns:\n%s", csvFull.String())
	}
	head, _, _ := strings.Cut(csvSteady.String(), "\n")
	if !strings.HasSuffix(head, ",steady,steady_at_s") || strings.Count(csvSteady.String(), ",true,0.") != early {
		t.Errorf("CSV with the criterion:\n%s", csvSteady.String())
	}
	if !strings.Contains(table.String(), "steady state: pts:iops:5x500") {
		t.Errorf("table:\n%s", table.String())
	}
}
