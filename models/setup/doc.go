// Package setup reads setup files: YAML that composes one whole system —
// drives, RAID, SSD cache, NAS controller, links and protocol — and builds
// it into one models.Device.
//
// # Schema
//
//	name: ds1817-raid5-hdd-smb-1g   # default: the file's base name
//	description: one line for listings
//	notes: |                        # or a list of lines
//	  where the figures come from, why each open choice was made
//	nas: synology-ds1817            # catalog system, or an inline map (see below); optional
//	drives:                         # one group, or a list of groups (mixed sizes, e.g. for shr)
//	  model: wd-red-1tb             # catalog drive, or an inline map
//	  count: 4                      # default 1
//	  capacity: 8GiB                # optional: scale each drive down (same geometry), for tests
//	  overprovision: 7%             # optional: extra spare area on SSDs
//	raid:                           # optional for one drive (single)
//	  level: raid5                  # single | raid0 | raid1 | raid5 | raid6 | raid10 | jbod | shr
//	  chunk: 64KiB                  # default 64KiB; plus raid.Config's other keys
//	cache:                          # optional SSD cache tier (needs nas:)
//	  drives: {model: kingston-suv500-240g, count: 2}
//	  mode: read-write              # read-only (default) | read-write; plus cache.Config's keys
//	link:                           # or just "link: 1gbe"; default local for protocol local
//	  kind: 1gbe                    # local | 1gbe | 2.5gbe | 10gbe | 25gbe | fc8 | tb3
//	  count: 1
//	  mode: single                  # single | smb-multichannel | lacp
//	  mtu: 1500                     # Ethernet kinds only; 9000 for jumbo frames
//	protocol: smb3                  # local (default) | smb2 | smb3 | iscsi, or {kind: smb3, ...proto.Config keys}
//	encryption: false               # an encrypted shared folder (needs nas:, not iscsi)
//	clients: 1                      # client machines at once, one flow each (LACP hashes flows)
//
// A catalog entry can always be written inline, as a map of its Config's
// fields (nas.Config for nas:, ssd.Config or hdd.Config for a drive, with
// kind: ssd|hdd). base: names a catalog entry to start from, so that only
// the differences are written: model: {base: wd-se-4tb, interface: sata-3g}.
// name: names an inline entry in reports. An inline nas: that gives its
// CPU as cpu: {name, cores, ghz, family} (nas.Family: cortex-a55, tremont,
// zen, skylake, ...) and ram: gets every CPU cost from the family's
// published per-core figures at that clock.
//
// # Strictness
//
// Parsing walks the yaml.Node tree itself, so every mistake is reported
// with file, line and dotted key (ds.yaml:7: raid.level: unknown level
// "raid7" (want single, raid0, ...)), as an *Error matching
// models.ErrConfig: unknown keys at every level (with a suggestion when one
// is close), duplicate keys, values of the wrong type or unit, YAML 1.1
// booleans (yes/no), merge keys, more than one document, and combinations
// no real system allows: raid5 with two drives, a cache or a network
// protocol without a NAS, a read-write cache on one SSD (except under QNAP's QTS, which allows it: catalog.System.OS), jumbo frames on a
// kind without them, lacp over one link, an encrypted folder over iSCSI.
// Each layer's own Validate runs last, as a backstop, at the layer's key.
//
// # Defaults
//
// A parsed Setup has every default filled in, the layers' own included
// (link.Config.WithDefaults, cache.Config.WithDefaults,
// proto.Config.Defaults), so (*Setup).YAML shows what the file expands to
// and parses back to the same setup.
//
// # Building
//
// Build composes the layers bottom up: each drive (wrapped in a port of the
// NAS's drive bus when the system has one), the array, the cache tier, the
// NAS controller, the link and the protocol. Each component's seed is
// derived from the setup's seed, its role and its index, so results are
// reproducible and adding a layer does not reseed the others.
//
// # Built-in setups
//
// The setups of the reference systems live in the repository's
// testdata/setups and are embedded by the root package; Load and List take
// them as an fs.FS, so this package does no file I/O of its own.
package setup
