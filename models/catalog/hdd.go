package catalog

import (
	"time"

	"github.com/nasemu/nasemu/models/hdd"
)

// Hard disk drives. Capacity, spindle speed, buffer size, interface and
// sustained (outer-zone) rate are the datasheets'. Vendors of NAS and
// desktop drives publish no seek figures, so the seek curve is the class's:
// 7200 rpm drives measure ≈ 8.5 ms average read seek, 5400 rpm NAS drives
// ≈ 11 ms (slower actuators tuned for noise and power), track-to-track
// ≈ 1 ms and full stroke ≈ 2.2 × average. Inner-zone rates are half the
// outer ones (3.5" platters record from about 0.5 to 1 of the outer
// radius). Zone counts and the controller overhead (200 µs) are model
// defaults; the head counts follow the platter counts reported for these
// models and only decide which nearby requests need no seek. LBA counts
// follow the IDEMA capacity formula up to 8 TB; the Exos count
// (35,156,656,128 × 512 B) is the guaranteed-sector figure of its datasheet
// as recalled, uncertain in the last digits; nothing depends on them.
var hddDrives = []Drive{
	{
		Name:    "wd-red-1tb",
		Product: "WD Red 1TB (WD10EFRX)",
		Source: "WD Red NAS Hard Drives specification sheet (WD10EFRX column): 1 TB, IntelliPower " +
			"5400 rpm class, 64 MB cache, SATA 6 Gb/s, host-to/from-drive sustained up to 150 MB/s. " +
			"Seek times not published (class values); one 1 TB platter, 2 heads in the later " +
			"revisions (early units had two 500 GB platters; uncertain).",
		HDD: &hdd.Config{
			Capacity:     1_000_204_886_016,
			RPM:          5400,
			OuterMBps:    150,
			Heads:        2,
			TrackToTrack: time.Millisecond,
			AvgSeek:      11 * time.Millisecond,
			FullStroke:   24 * time.Millisecond,
			CacheSize:    64 << 20,
		},
	},
	{
		Name:    "wd-red-4tb",
		Product: "WD Red 4TB (WD40EFRX)",
		Source: "WD Red NAS Hard Drives specification sheet (WD40EFRX column): 4 TB, IntelliPower " +
			"5400 rpm class, 64 MB cache, SATA 6 Gb/s, sustained up to 150 MB/s. Seek times not " +
			"published (class values); four 1 TB platters, 8 heads (uncertain).",
		HDD: &hdd.Config{
			Capacity:     4_000_787_030_016,
			RPM:          5400,
			OuterMBps:    150,
			Heads:        8,
			TrackToTrack: time.Millisecond,
			AvgSeek:      11 * time.Millisecond,
			FullStroke:   24 * time.Millisecond,
			CacheSize:    64 << 20,
		},
	},
	{
		Name:    "wd-se-4tb",
		Product: "WD Se 4TB (WD4000F9YZ)",
		Source: "WD Se Datacenter Hard Drives specification sheet (WD4000F9YZ column): 4 TB, " +
			"7200 rpm, 64 MB cache, SATA 6 Gb/s, sustained up to 171 MB/s. Average read seek " +
			"8.5 ms is the class value (WD's datacenter sheets of that era quote it; not checked " +
			"for this model); 8 heads (uncertain).",
		HDD: &hdd.Config{
			Capacity:     4_000_787_030_016,
			RPM:          7200,
			OuterMBps:    171,
			Heads:        8,
			TrackToTrack: 800 * time.Microsecond,
			AvgSeek:      8500 * time.Microsecond,
			FullStroke:   18 * time.Millisecond,
			CacheSize:    64 << 20,
		},
	},
	{
		Name:    "seagate-ironwolf-8tb",
		Product: "Seagate IronWolf 8TB (ST8000VN004)",
		Source: "Seagate IronWolf NAS data sheet (8TB column; ST8000VN0022 of the earlier sheet " +
			"has the same figures): 7200 rpm, 256 MB cache, SATA 6 Gb/s, max. sustained transfer " +
			"rate 210 MB/s. Seek times not published (class values); 12 heads (six platters; " +
			"uncertain).",
		HDD: &hdd.Config{
			Capacity:     8_001_563_222_016,
			RPM:          7200,
			OuterMBps:    210,
			Heads:        12,
			TrackToTrack: 800 * time.Microsecond,
			AvgSeek:      8500 * time.Microsecond,
			FullStroke:   18 * time.Millisecond,
			CacheSize:    256 << 20,
		},
	},
	{
		Name:    "seagate-exos-x18-18tb",
		Product: "Seagate Exos X18 18TB (ST18000NM000J)",
		Source: "Seagate Exos X18 data sheet (ST18000NM000J, SATA 6 Gb/s 512e/4Kn): 7200 rpm, " +
			"256 MB cache, max. sustained transfer rate (OD) 270 MB/s, average latency 4.16 ms " +
			"(half a revolution at 7200 rpm), random 4K read QD16 (write cache off) 170 IOPS. " +
			"Seek times not published (class values); nine platters, 18 heads.",
		HDD: &hdd.Config{
			Capacity:     18_000_207_937_536,
			RPM:          7200,
			OuterMBps:    270,
			Heads:        18,
			TrackToTrack: 800 * time.Microsecond,
			AvgSeek:      8500 * time.Microsecond,
			FullStroke:   18 * time.Millisecond,
			CacheSize:    256 << 20,
		},
	},
}
