package validate

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/nasemu/nasemu/models/catalog"
	"github.com/nasemu/nasemu/models/proto"
	"github.com/nasemu/nasemu/models/setup"
)

// Calibration is a model parameter set from reference rows rather than
// from a datasheet or a derivation. It is a class-level value (a CPU
// micro-architecture, a controller family, an OS's I/O path) that systems
// outside the reference set inherit, and it names the rows it came from,
// so that a leave-one-review-out run can switch it to the value its class
// has without them (Off) and predict those rows honestly. The code that
// defines each one says "calibrated: NAME" beside it.
type Calibration struct {
	// Name is the calibration's name, as the code's comment gives it.
	Name string
	// Class is what the value applies to.
	Class string
	// Review is the review whose rows set it ("001", "002", "003").
	Review string
	// Rows are the reference rows it was set from: case IDs or
	// path.Match patterns of them.
	Rows []string
	// Fitted is the calibrated value; Default the class value without
	// the rows, and where that comes from.
	Fitted, Default string
	// Off changes a setup so that it uses Default; nil when the
	// calibration does not apply to the setup. It changes s in place (the
	// leave-out builder gives it a copy).
	Off func(s *setup.Setup)
}

// Calibrations returns the registry of the model's calibrations.
func Calibrations() []Calibration {
	return []Calibration{
		{
			Name:   "proto.server_write",
			Class:  "Linux file server's buffered-write path (smbd pwrite, LIO FILEIO write) per request, on a ~3 GHz x86 core",
			Review: "003",
			Rows:   []string{"s003-diskspd-*-iops-*-ssd-write", "s003-diskspd-*-iops-*-ssdcache-write"},
			Fitted: "6 µs (proto.DefaultServerWrite)",
			Default: "4.7 µs: buffered 4 KiB writes at ~150,000/s against cached reads at ~500,000/s on one core " +
				"(6.7 − 2 µs, proto.DefaultServerWrite's derivation)",
			Off: func(s *setup.Setup) {
				if s.Protocol.Protocol != proto.SMB2 && s.Protocol.Protocol != proto.SMB3 && s.Protocol.Protocol != proto.ISCSI {
					return
				}
				if s.Protocol.ServerWrite == proto.DefaultServerWrite {
					// The protocol scales it by the NAS's CPU as it
					// scales the default.
					s.Protocol.ServerWrite = 4700 * time.Nanosecond
				}
			},
		},
		{
			Name:   "nas.crypto_write_through",
			Class:  "Synology DSM 6 encrypted shared folders (eCryptfs)",
			Review: "003",
			Rows:   []string{"s003-diskspd-smb-1g-iops-raid1-*enc-write", "s003-diskspd-smb-1g-mbps-raid1-*enc-write"},
			Fitted: "writes to an encrypted share are synchronous and flushed (catalog synology-ds1817)",
			Default: "off: eCryptfs writes through the lower filesystem's page cache like any other write " +
				"(no published figure says otherwise)",
			Off: func(s *setup.Setup) {
				if s.NAS != nil {
					s.NAS.Config.CryptoWriteThrough = false
				}
			},
		},
		{
			Name:   "cache.keep_sequential",
			Class:  "Synology DSM 6 SSD cache policy",
			Review: "003",
			Rows:   []string{"s003-*-ssdcache-*"},
			Fitted: "sequential I/O is cached too (keep_sequential: true in the ds1817 setups with a cache)",
			Default: "the cache's default: sequential streams bypass the SSDs (DSM's \"skip sequential I/O\", " +
				"as most NAS OSes document their SSD caches)",
			Off: func(s *setup.Setup) {
				if s.Cache != nil && s.NAS != nil && s.NAS.Ref == "synology-ds1817" {
					s.Cache.Config.KeepSequential = false
				}
			},
		},
		{
			Name:   "proto.unbuffered_copy",
			Class:  "Windows Explorer's copy engine onto a local NTFS volume (an iSCSI LUN)",
			Review: "003",
			Rows:   []string{"s003-iscsi-1g-copy1x2gb-*-up", "s003-iscsi-1g-copy1000x2mb-*-up"},
			Fitted: "Close waits for the file's writes on the LUN, as an unbuffered copy (proto.Config.UnbufferedCopy)",
			Default: "a buffered copy: the client's cache takes the data and its writes go on behind the copy " +
				"(Explorer's documentation does not say when it copies unbuffered)",
			Off: func(s *setup.Setup) {
				if s.Protocol.Protocol == proto.ISCSI && s.Protocol.Client != proto.ClientBlock {
					s.Protocol.UnbufferedCopy = new(bool)
				}
			},
		},
		{
			Name:   "nas.drive_bus.per_command",
			Class:  "Broadcom SAS3108 RAID-on-chip (MegaRAID 93xx) without FastPath",
			Review: "002",
			Rows:   []string{"s002-ezfio-raid1-micron5300-rnd4kread-qd256", "s002-ezfio-raid1-s4510-rnd4kread-qd256"},
			Fitted: "7.5 µs per command (catalog xeon-server-002)",
			Default: "2 µs (catalog.SAS3108FullPath): at least twice a FastPath command's 1 µs on one of the " +
				"chip's two 1.2 GHz cores (Broadcom's >1M IOPS with FastPath; FastPath's ~2x on the SAS2108)",
			Off: func(s *setup.Setup) {
				if s.NAS != nil && s.NAS.Config.DriveBus.PerCommand > 0 {
					s.NAS.Config.DriveBus.PerCommand = catalog.SAS3108FullPath
				}
			},
		},
	}
}

// Matches reports whether the calibration was set from case id.
func (c Calibration) Matches(id string) bool {
	return slices.ContainsFunc(c.Rows, func(p string) bool {
		ok, _ := path.Match(p, id)
		return ok
	})
}

// Review returns the review a case belongs to: the first word of its
// system ("003 Synology DS1817 (1GbE)" is review 003).
func (c *Case) Review() string {
	r, _, _ := strings.Cut(c.System, " ")
	return r
}

// Reviews returns the reviews of cases, in order of first appearance.
func Reviews(cases []Case) []string {
	var rs []string
	for i := range cases {
		if r := cases[i].Review(); !slices.Contains(rs, r) {
			rs = append(rs, r)
		}
	}
	return rs
}

// LeaveOut returns the calibrations set from review's rows, and an error
// when review names none of the reviews of cases.
func LeaveOut(cases []Case, review string) ([]Calibration, error) {
	if !slices.Contains(Reviews(cases), review) {
		return nil, fmt.Errorf("%w: no review %q (reviews: %s)", ErrData, review, strings.Join(Reviews(cases), ", "))
	}
	var off []Calibration
	for _, c := range Calibrations() {
		if c.Review == review {
			off = append(off, c)
		}
	}
	return off, nil
}

// Only returns the cases of review.
func Only(cases []Case, review string) []Case {
	var out []Case
	for _, c := range cases {
		if c.Review() == review {
			out = append(out, c)
		}
	}
	return out
}
