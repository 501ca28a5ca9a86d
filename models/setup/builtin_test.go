package setup

import (
	"errors"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/nas"
	"github.com/nasemu/nasemu/models/raid"
)

// builtinDir is where the built-in setups live in the source tree; the
// root package embeds the same files.
var builtinFS = os.DirFS("../../testdata/setups")

func builtins(t *testing.T) []*Setup {
	t.Helper()
	all, err := List(builtinFS)
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// TestBuiltinsParse checks every built-in setup parses, is named after its
// file and explains itself.
func TestBuiltinsParse(t *testing.T) {
	all := builtins(t)
	// review 003: 6 levels × 3 media × 2 protocols, 3 encrypted, 1 LACP;
	// review 001: 2 drives × 3 layouts × 3 networks; review 002: 4 arrays.
	if want := 36 + 3 + 1 + 18 + 4; len(all) != want {
		t.Errorf("%d built-in setups, want %d", len(all), want)
	}
	for _, s := range all {
		if s.File() != s.Name+".yaml" {
			t.Errorf("%s: named %q, want the file's name", s.File(), s.Name)
		}
		if s.Description == "" || len(s.Notes) < 200 {
			t.Errorf("%s: want a description and notes saying why each open choice was made", s.Name)
		}
		if strings.Contains(s.Description, "\n") {
			t.Errorf("%s: description is one line for listings", s.Name)
		}
	}
}

// TestBuiltinChoices checks that every setup of one reference system makes
// the same choice where its test bed is silent, and states what the review
// does state.
func TestBuiltinChoices(t *testing.T) {
	for _, s := range builtins(t) {
		n := s.DriveCount()
		switch {
		case strings.HasPrefix(s.Name, "ds1817-"):
			want := 4
			if s.RAID.Level == raid.RAID1 {
				want = 2
			}
			if n != want {
				t.Errorf("%s: %d drives, want %d", s.Name, n, want)
			}
			if strings.Contains(s.Name, "-hdd-cache-") != (s.Cache != nil) {
				t.Errorf("%s: cache %v does not match the name", s.Name, s.Cache != nil)
			}
			if s.Cache != nil && (s.Cache.Config.Mode != "read-write" || len(s.Cache.Drives) != 1 || s.Cache.Drives[0].Count != 2 || s.Cache.Drives[0].Ref != "kingston-suv500-240g") {
				t.Errorf("%s: cache %+v, want 2 × kingston-suv500-240g read-write", s.Name, s.Cache)
			}
			if s.Link.Kind != "1gbe" || s.Link.MTU != 1500 {
				t.Errorf("%s: link %+v, want 1gbe at MTU 1500", s.Name, s.Link)
			}
			lacp := strings.Contains(s.Name, "lacp")
			if lacp != (s.Link.Mode == "lacp" && s.Link.Count == 4 && s.Clients == 4) {
				t.Errorf("%s: link %+v clients %d", s.Name, s.Link, s.Clients)
			}
			if strings.HasSuffix(s.Name, "-encrypted") != s.Encryption {
				t.Errorf("%s: encryption %v does not match the name", s.Name, s.Encryption)
			}
		case strings.HasPrefix(s.Name, "rst001-"):
			if want := map[raid.Level]int{raid.Single: 1, raid.RAID0: 4, raid.RAID5: 4}[s.RAID.Level]; n != want {
				t.Errorf("%s: %d drives, want %d", s.Name, n, want)
			}
			// Intel RST defaults as the review states them.
			if want := map[raid.Level]models.Bytes{raid.RAID0: 16 << 10, raid.RAID5: 128 << 10}[s.RAID.Level]; want != 0 && s.RAID.Chunk != want {
				t.Errorf("%s: chunk %v, want %v", s.Name, s.RAID.Chunk, want)
			}
			if s.NAS.Config.DriveBus.PortRate != nas.SATA2 {
				t.Errorf("%s: drives not on SATA 3 Gb/s ports", s.Name)
			}
			if s.Protocol.Protocol != "local" && (s.Link.MTU != 9000 || s.Protocol.Protocol != "smb3") {
				t.Errorf("%s: %s over %+v, want smb3 with jumbo frames", s.Name, s.Protocol.Protocol, s.Link)
			}
			if strings.HasSuffix(s.Name, "-2x1g") != (s.Link.Count == 2 && s.Link.Mode == "smb-multichannel") {
				t.Errorf("%s: link %+v does not match the name", s.Name, s.Link)
			}
		case strings.HasPrefix(s.Name, "xeon002-"):
			want := 2
			if s.RAID.Level == raid.RAID10 {
				want = 4
			}
			if n != want || s.Protocol.Protocol != "local" {
				t.Errorf("%s: %d drives over %s, want %d, local", s.Name, n, s.Protocol.Protocol, want)
			}
		default:
			t.Errorf("%s: not a setup of a reference system", s.Name)
		}
	}
}

// testCapacity is what built-in drives are scaled to for the build tests.
const testCapacity = 2 << 30

// TestBuiltinsBuild builds every built-in setup, at full size and with
// its drives scaled down, checks that the capacity the setup reports is
// what the built stack offers, and that the stack serves a write and a
// read.
func TestBuiltinsBuild(t *testing.T) {
	for _, full := range builtins(t) {
		for _, s := range []*Setup{full, full.WithDriveCapacity(testCapacity)} {
			dev, err := s.Build(42)
			if err != nil {
				t.Errorf("%s: %v", s.Name, err)
				continue
			}
			usable, err := s.UsableCapacity()
			if err != nil {
				t.Errorf("%s: %v", s.Name, err)
				continue
			}
			// Members round their capacity down to a sector or mapping unit
			// and the array to whole chunks: allow a chunk per member.
			slack := int64(s.RAID.Chunk) * int64(s.DriveCount())
			if got := dev.Capacity(); got > usable || got < usable-slack {
				t.Errorf("%s: built capacity %d, setup says %d (slack %d)", s.Name, got, usable, slack)
			}
			at := time.Duration(0)
			for _, r := range []models.Request{
				{Op: models.Write, Offset: 0, Length: 64 << 10},
				{Op: models.Read, Offset: dev.Capacity() / 2, Length: 4 << 10},
			} {
				done, err := dev.Submit(at, r)
				if err != nil || done <= at {
					t.Errorf("%s: %v: done %v, err %v", s.Name, r, done, err)
				}
				at = done
			}
		}
	}
}

// TestBuildDeterministic checks that one seed gives bit-identical results
// through the whole stack and that the seed reaches the drives.
func TestBuildDeterministic(t *testing.T) {
	s, err := Load("ds1817-raid5-hdd-smb-1g", builtinFS, nil)
	if err != nil {
		t.Fatal(err)
	}
	s = s.WithDriveCapacity(testCapacity)
	// Reads of data never written would be holes (sparse_files) that no
	// drive serves; this test needs the drives.
	sys := *s.NAS
	sys.Config.SparseFiles = false
	s.NAS = &sys
	run := func(seed uint64) []time.Duration {
		dev, err := s.Build(seed)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(7, 7))
		var out []time.Duration
		at := time.Duration(0)
		for range 200 {
			op := models.Read
			if rng.IntN(3) == 0 {
				op = models.Write
			}
			off := rng.Int64N(dev.Capacity()/4096-16) * 4096
			done, err := dev.Submit(at, models.Request{Op: op, Offset: off, Length: 4096})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, done)
			at += 100 * time.Microsecond
		}
		return out
	}
	a, b, c := run(1), run(1), run(2)
	same := func(x, y []time.Duration) bool {
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	if !same(a, b) {
		t.Error("the same seed gave different completion times")
	}
	if same(a, c) {
		t.Error("different seeds gave identical completion times: the seed does not reach the drives")
	}
}

// TestComponentSeeds checks that seeds differ across roles and indexes.
func TestComponentSeeds(t *testing.T) {
	seen := map[uint64]string{}
	for _, role := range []string{"drive", "cache-drive", "nas", "link"} {
		for i := range 64 {
			for _, seed := range []uint64{0, 1, 2} {
				s := componentSeed(seed, role, i)
				if prev, dup := seen[s]; dup {
					t.Fatalf("seed %d of %s %d equals %s", s, role, i, prev)
				}
				seen[s] = role
			}
		}
	}
}

// TestLoad checks how Load tells names from paths.
func TestLoad(t *testing.T) {
	if s, err := Load("ds1817-raid1-ssd-smb-1g", builtinFS, nil); err != nil || s.Name != "ds1817-raid1-ssd-smb-1g" {
		t.Errorf("built-in by name: %v", err)
	}
	_, err := Load("no-such-setup", builtinFS, nil)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "presets setups") {
		t.Errorf("unknown name: %v", err)
	}
	if _, err := Load("ds1817-raid5-hdd-smb-10g", builtinFS, nil); err == nil || !strings.Contains(err.Error(), "did you mean ds1817-raid5-hdd-smb-1g?") {
		t.Errorf("near miss: %v", err)
	}
	read := func(path string) ([]byte, error) {
		if path != "dir/my.yaml" {
			return nil, os.ErrNotExist
		}
		return []byte("drives: {model: wd-red-1tb}\n"), nil
	}
	if s, err := Load("dir/my.yaml", builtinFS, read); err != nil || s.Name != "my" || s.File() != "dir/my.yaml" {
		t.Errorf("path: %v %+v", err, s)
	}
	if _, err := Load("other.yaml", builtinFS, read); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing path: %v", err)
	}
}
