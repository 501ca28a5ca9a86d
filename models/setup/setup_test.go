package setup

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nasemu/nasemu/models/raid"
)

// TestDefaults pins what minimal setups expand to (testdata/NAME.yaml →
// testdata/NAME.golden): every default of every layer, in one place.
func TestDefaults(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.yaml")
	if len(files) == 0 {
		t.Fatal("no testdata/*.yaml")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Parse(filepath.Base(file), data)
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.YAML()
			if err != nil {
				t.Fatal(err)
			}
			golden := strings.TrimSuffix(file, ".yaml") + ".golden"
			if *rewrite {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestDefaults -rewrite to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s expands to:\n%s\nwant (%s):\n%s", file, got, golden, want)
			}
		})
	}
}

// roundTrip checks that the expanded form of s parses back to the same
// setup.
func roundTrip(t *testing.T, s *Setup) {
	t.Helper()
	y, err := s.YAML()
	if err != nil {
		t.Fatalf("%s: YAML: %v", s.Name, err)
	}
	back, err := Parse(s.File(), y)
	if err != nil {
		t.Fatalf("%s: the expanded form does not parse: %v\n%s", s.Name, err, y)
	}
	y2, err := back.YAML()
	if err != nil {
		t.Fatalf("%s: YAML again: %v", s.Name, err)
	}
	if !bytes.Equal(y, y2) {
		t.Fatalf("%s: expanded form changes on a second round:\n%s\n---\n%s", s.Name, y, y2)
	}
}

// TestRoundTrip checks every built-in and test setup survives expansion.
func TestRoundTrip(t *testing.T) {
	for _, s := range builtins(t) {
		roundTrip(t, s)
	}
}

// TestInline checks catalog entries written inline, with and without a
// base, and drive groups of mixed sizes.
func TestInline(t *testing.T) {
	src := `
name: mixed-shr
nas: {name: my-nas}
drives:
  - model: wd-red-1tb
    count: 2
  - model: {base: wd-red-4tb, name: red-4tb-sata3g, interface: sata-3g}
    count: 2
  - model:
      kind: hdd
      name: my-disk
      capacity: 2TB
      rpm: 7200
      outer_mbps: 180
      avg_seek: 8.5ms
      track_to_track: 1ms
      full_stroke: 18ms
raid: {level: shr}
`
	s, err := Parse("mixed.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Drives) != 3 || s.DriveCount() != 5 {
		t.Fatalf("groups %d, drives %d", len(s.Drives), s.DriveCount())
	}
	g := s.Drives[1]
	if !g.Inline || g.Ref != "wd-red-4tb" || g.Drive.Name != "red-4tb-sata3g" || g.Drive.HDD.Interface != "sata-3g" || g.Drive.HDD.RPM != 5400 {
		t.Errorf("base override: %+v %+v", g, g.Drive.HDD)
	}
	if d := s.Drives[2].Drive; d.HDD == nil || d.HDD.Capacity != 2e12 || d.HDD.AvgSeek.Microseconds() != 8500 {
		t.Errorf("inline drive: %+v", d.HDD)
	}
	if s.NAS == nil || !s.NAS.Inline {
		t.Errorf("inline nas: %+v", s.NAS)
	}
	// SHR over 1, 1, 4, 4, 2 TB drives: one-drive redundancy in each layer
	// of equal slices. Layers: the 1TB slice of all 5 drives (RAID 5: 4
	// slices usable), the next 1TB of the 2TB and 4TB drives (3 drives:
	// 2 usable), the last 2TB of the 4TB pair (mirrored: 1 usable).
	usable, err := s.UsableCapacity()
	if err != nil {
		t.Fatal(err)
	}
	one, four, two := float64(s.Drives[0].Drive.HDD.Capacity), float64(s.Drives[1].Drive.HDD.Capacity), 2e12
	want := int64(4*one + 2*(two-one) + (four - two))
	if slack := int64(5 * s.RAID.Chunk); usable > want || usable < want-slack {
		t.Errorf("shr usable %d, want %d (less at most %d of chunk rounding)", usable, want, slack)
	}
	if s.Tolerates() != 1 || s.RAID.Level != raid.SHR {
		t.Errorf("tolerates %d", s.Tolerates())
	}
	roundTrip(t, s)
}

// TestShorthands checks the scalar forms of link: and protocol:, notes as
// a list, and aliases.
func TestShorthands(t *testing.T) {
	src := `
notes: [one, two]
clients: &c 2
nas: {name: n}
drives: {model: wd-red-1tb, count: *c}
cache: {drives: {model: kingston-suv500-240g, count: *c}}
raid: {level: raid1}
link: 10gbe
protocol: {kind: smb3, max_io: 8MiB, credits: 8192}
`
	s, err := Parse("short.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if s.Notes != "one\ntwo" || s.Link.Kind != "10gbe" || s.Link.MTU != 1500 || s.Protocol.MaxIO != 8<<20 || s.Cache.Drives[0].Count != 2 || s.DriveCount() != 2 || s.Clients != 2 {
		t.Errorf("got notes %q link %+v protocol %+v", s.Notes, s.Link, s.Protocol)
	}
}

// TestAliasBomb checks that aliases cannot make a small file expand to an
// enormous tree: past maxAliases expansions parsing stops.
func TestAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("drives: {model: wd-red-1tb}\nnas:\n  pcie_slots: [&s {gen: 3, lanes: 4}")
	for range maxAliases + 10 {
		b.WriteString(", *s")
	}
	b.WriteString("]\n")
	_, err := Parse("bomb.yaml", []byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "too many alias expansions") {
		t.Fatalf("an alias bomb: %v", err)
	}
}

// TestValidateByHand checks Validate on a setup changed after parsing: the
// same checks, without positions.
func TestValidateByHand(t *testing.T) {
	s, err := Parse("ds.yaml", []byte("drives: {model: wd-red-1tb, count: 2}\nraid: {level: raid1}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(); err != nil {
		t.Errorf("a parsed setup does not validate: %v", err)
	}
	s.RAID.Level = raid.RAID5
	want := "ds.yaml: raid.level: raid5 needs at least 3 drives, got 2"
	if err := s.Validate(); err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// designExample is DESIGN.md's "Setup file (core keys)" contract, verbatim.
const designExample = `name: ds1817-raid5-hdd-smb-1g
nas: synology-ds1817          # a catalog system, or an inline map of its parameters
drives:
  model: wd-red-1tb           # a catalog drive, or an inline map of its parameters
  count: 4
  capacity: 8GiB              # optional: scale the drive down (same geometry per die/zone), for tests
  overprovision: 0%           # optional: extra over-provisioning reserved on SSDs
raid:
  level: raid5                # single | raid0 | raid1 | raid5 | raid6 | raid10 | jbod | shr
  chunk: 64KiB
cache:                        # optional SSD cache tier in front of the array
  drives: {model: kingston-suv500-240g, count: 2}
  mode: read-write            # read-only | read-write
link:
  kind: 1gbe                  # local | 1gbe | 2.5gbe | 10gbe | 25gbe | fc8 | tb3
  count: 1
  mode: single                # single | smb-multichannel | lacp
  mtu: 1500
protocol: smb3                # local | smb2 | smb3 | iscsi
encryption: false             # encrypted shared folder
`

// TestDesignExample checks that the contract's example parses, means what
// it says and builds.
func TestDesignExample(t *testing.T) {
	s, err := Parse("design.yaml", []byte(designExample))
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "ds1817-raid5-hdd-smb-1g" || s.NAS.Ref != "synology-ds1817" || s.DriveCount() != 4 ||
		s.Drives[0].Capacity != 8<<30 || s.RAID.Level != raid.RAID5 || s.RAID.Chunk != 64<<10 ||
		s.Cache.Config.Mode != "read-write" || s.Cache.Drives[0].Count != 2 || s.Link.Kind != "1gbe" ||
		s.Link.MTU != 1500 || s.Protocol.Protocol != "smb3" || s.Encryption {
		t.Errorf("parsed as %+v", s)
	}
	dev, err := s.Build(1)
	if err != nil {
		t.Fatal(err)
	}
	// RAID 5 of 4 × 8 GiB: three drives' worth, less chunk rounding.
	if c := dev.Capacity(); c > 3*8<<30 || c < 3*8<<30-4*64<<10 {
		t.Errorf("capacity %d, want 3 × 8 GiB", c)
	}
}
