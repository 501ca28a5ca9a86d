package raid

import (
	"fmt"
	"math"
	"strings"

	"github.com/nasemu/nasemu/models"
)

// Level is a RAID level. The zero value is unset, which Validate rejects:
// there is no level one could assume for an array of unknown purpose.
type Level uint8

// The levels a setup file can name.
const (
	LevelUnset Level = iota
	Single           // one drive, no redundancy
	RAID0            // striping, no redundancy
	RAID1            // n-way mirror
	RAID5            // striping with one rotating parity chunk (left-symmetric)
	RAID6            // striping with rotating P and Q parity chunks
	RAID10           // striped mirrors (md raid10 "near 2")
	JBOD             // concatenation of whole drives
	SHR              // Synology Hybrid RAID with one-drive redundancy
)

var levelNames = [...]string{
	LevelUnset: "unset", Single: "single", RAID0: "raid0", RAID1: "raid1", RAID5: "raid5",
	RAID6: "raid6", RAID10: "raid10", JBOD: "jbod", SHR: "shr",
}

// String returns the level as setup files spell it.
func (l Level) String() string {
	if int(l) < len(levelNames) {
		return levelNames[l]
	}
	return fmt.Sprintf("level(%d)", uint8(l))
}

// ParseLevel parses a level as setup files write it: single, raid0, raid1,
// raid5, raid6, raid10, jbod or shr (case-insensitive).
func ParseLevel(s string) (Level, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	for l := Single; l <= SHR; l++ {
		if levelNames[l] == t {
			return l, nil
		}
	}
	return LevelUnset, fmt.Errorf("%w: unknown raid level %q (want single, raid0, raid1, raid5, raid6, raid10, jbod or shr)", models.ErrConfig, s)
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (l *Level) UnmarshalText(text []byte) error {
	v, err := ParseLevel(string(text))
	if err != nil {
		return err
	}
	*l = v
	return nil
}

// MarshalText implements encoding.TextMarshaler.
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// Defaults used when a Config field is zero.
const (
	// DefaultChunk is the stripe unit (md "chunk", Intel RST "strip"):
	// 64 KiB, what Synology DSM creates. (mdadm's own default is 512 KiB and
	// Intel RST's is 128 KiB for RAID 5, 16 KiB for RAID 0; setups of those
	// systems say so.)
	DefaultChunk = 64 << 10

	// DefaultRebuildMinKiBps and DefaultRebuildMaxKiBps are Linux md's
	// dev.raid.speed_limit_min and speed_limit_max (KiB/s per member being
	// rebuilt): md rebuilds as fast as the max allows while the array is
	// otherwise idle and throttles down to the min while foreground I/O is
	// in flight. Synology DSM keeps md's defaults.
	DefaultRebuildMinKiBps = 1000
	DefaultRebuildMaxKiBps = 200000
)

// Config describes an array. The zero value of every field but Level means
// its default.
type Config struct {
	Level Level `yaml:"level"`

	// Chunk is the stripe unit: the bytes of consecutive array address
	// space placed on one member before moving to the next. A power of two,
	// at least 4 KiB. Default DefaultChunk.
	Chunk models.Bytes `yaml:"chunk"`

	// RebuildRate, in MB/s (10^6 bytes/s) per member being rebuilt, when
	// non-zero paces the rebuild at exactly that rate whether or not
	// foreground I/O is running (like setting md's speed_limit_min and
	// speed_limit_max both to it); foreground I/O queues behind the rebuild
	// and the rebuild behind foreground I/O. Zero means md's defaults: up
	// to 200000 KiB/s while the array is idle, 1000 KiB/s while foreground
	// I/O is in flight (see DefaultRebuildMinKiBps); either way the members
	// themselves may be slower.
	RebuildRate float64 `yaml:"rebuild_mbps"`

	// Coalesce turns on a write coalescer above RAID 5 and 6 rows, as
	// Intel RST has ("IRST uses Volume Write-Back Cache and Coalescer ...
	// Coalescer allows multiple write requests to be combined to reduce the
	// overhead on parity calculation": Dell Precision 3640 Tower manual,
	// "Technology and components", RAID 5). Writes that cover whole
	// chunks of a row but not the whole row are held until other writes
	// complete the row, which then goes as one full-stripe write (no
	// reads); writes that cover part of a chunk still pay their reads
	// (gather.go). Linux md has no such layer for synchronous writes (a
	// NAS's writeback reaches it in whole stripes instead: package nas,
	// writebackPages); off by default.
	Coalesce bool `yaml:"coalesce"`

	// Name names the array in error messages ("volume1"). Default: the
	// level and member count, e.g. "raid5 array of 4".
	Name string `yaml:"name"`
}

// withDefaults returns c with zero fields replaced by their defaults; n is
// the member count (for the default name).
func (c Config) withDefaults(n int) Config {
	if c.Chunk == 0 {
		c.Chunk = DefaultChunk
	}
	if c.Name == "" {
		c.Name = fmt.Sprintf("%s array of %d", c.Level, n)
	}
	return c
}

// Validate checks the configuration for an array of the given number of
// drives. Errors wrap models.ErrConfig and say what is wrong.
func (c Config) Validate(drives int) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: raid: "+format, append([]any{models.ErrConfig}, args...)...)
	}
	if c.Level == LevelUnset {
		return bad("level not set (want single, raid0, raid1, raid5, raid6, raid10, jbod or shr)")
	}
	if c.Level > SHR {
		return bad("unknown level %d", uint8(c.Level))
	}
	if ch := int64(c.Chunk); ch != 0 && (ch < 4096 || ch > 1<<30 || ch&(ch-1) != 0) {
		return bad("chunk %s: want a power of two from 4KiB to 1GiB", c.Chunk)
	}
	if c.RebuildRate < 0 || math.IsNaN(c.RebuildRate) || math.IsInf(c.RebuildRate, 0) {
		return bad("rebuild_mbps %v: want a positive rate in MB/s, or 0 for the default", c.RebuildRate)
	}
	n := drives
	var want string
	switch c.Level {
	case Single:
		if n != 1 {
			want = "exactly 1 drive"
		}
	case RAID0, RAID1:
		if n < 2 {
			want = "at least 2 drives"
		}
	case RAID5:
		if n < 3 {
			want = "at least 3 drives"
		}
	case RAID6:
		if n < 4 {
			want = "at least 4 drives"
		}
	case RAID10:
		if n < 4 || n%2 != 0 {
			want = "an even number of drives, at least 4"
		}
	case JBOD:
		if n < 1 {
			want = "at least 1 drive"
		}
	case SHR:
		if n < 2 {
			want = "at least 2 drives (one-drive redundancy; use single for one drive)"
		}
	}
	if want != "" {
		return bad("%s with %d drives: %s needs %s", c.Level, n, c.Level, want)
	}
	return nil
}

// Tolerates returns how many failed members an array of the level and
// member count is guaranteed to survive. RAID 10 survives one failure per
// mirror pair if lucky, but only one is guaranteed.
func Tolerates(level Level, members int) int {
	switch level {
	case RAID1:
		return members - 1
	case RAID5, RAID10, SHR:
		return 1
	case RAID6:
		return 2
	}
	return 0
}
