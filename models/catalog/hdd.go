package catalog

import (
	"time"

	"github.com/nasemu/nasemu/models"
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
//
// The current NAS and data-centre drives after the first five are made by
// nasHDD from their data sheets' capacity, spindle speed, cache and
// sustained (outer-diameter) rate, typed in as recalled from the vendors'
// sheets and repeated in models/hdd's catalog test so that a slip shows;
// their capacity is the marketed decimal one (the LBA count is not
// modelled to the sector). Toshiba states rates in MiB/s (converted
// here). Seek figures are the class's (above); head counts follow the
// platter counts reported for the models, uncertain where noted.
var hddDrives = []Drive{
	{
		Name:    "wd-red-1tb",
		Price:   price(60, "2017-06"),
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
		Price:   price(130, "2017-06"),
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
		Price:   price(250, "2015-06"),
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
		Price:   price(250, "2018-06"),
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
		Price:   price(330, "2022-06"),
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
	nasHDD("seagate-ironwolf-pro-12tb", "Seagate IronWolf Pro 12TB (ST12000NE0008)",
		"Seagate IronWolf Pro data sheet (ST12000NE0008): 7200 rpm, 256 MB cache, max. sustained 250 MB/s; 8 platters",
		12, 7200, 250, 256, 16, price(230, "2021-06")),
	nasHDD("seagate-ironwolf-pro-16tb", "Seagate IronWolf Pro 16TB (ST16000NE000)",
		"Seagate IronWolf Pro data sheet (ST16000NE000): 7200 rpm, 256 MB cache, max. sustained 255 MB/s; 9 platters",
		16, 7200, 255, 256, 18, price(300, "2021-06")),
	nasHDD("seagate-ironwolf-pro-20tb", "Seagate IronWolf Pro 20TB (ST20000NT001)",
		"Seagate IronWolf Pro data sheet (ST20000NT001): 7200 rpm, 256 MB cache, max. sustained 285 MB/s; 10 platters",
		20, 7200, 285, 256, 20, price(370, "2023-06")),
	nasHDD("seagate-ironwolf-pro-24tb", "Seagate IronWolf Pro 24TB (ST24000NT002)",
		"Seagate IronWolf Pro data sheet (ST24000NT002): 7200 rpm, 512 MB cache, max. sustained 285 MB/s; 10 platters",
		24, 7200, 285, 512, 20, price(500, "2024-06")),
	nasHDD("seagate-exos-x20-20tb", "Seagate Exos X20 20TB (ST20000NM007D)",
		"Seagate Exos X20 data sheet (ST20000NM007D, SATA): 7200 rpm, 256 MB cache, max. sustained (OD) 272 MB/s, "+
			"random 4K read QD16 (write cache off) 168 IOPS; 10 platters",
		20, 7200, 272, 256, 20, price(320, "2023-06")),
	nasHDD("seagate-exos-x24-24tb", "Seagate Exos X24 24TB (ST24000NM002H)",
		"Seagate Exos X24 data sheet (ST24000NM002H, SATA): 7200 rpm, 512 MB cache, max. sustained (OD) 285 MB/s, "+
			"random 4K read QD16 (write cache off) 168 IOPS; 10 platters",
		24, 7200, 285, 512, 20, price(450, "2024-06")),
	nasHDD("wd-red-plus-4tb", "WD Red Plus 4TB (WD40EFZX)",
		"WD Red Plus data sheet (WD40EFZX): 5400 rpm class, 128 MB cache, up to 175 MB/s (CMR); 3 platters (uncertain)",
		4, 5400, 175, 128, 6, price(100, "2021-06")),
	nasHDD("wd-red-plus-8tb", "WD Red Plus 8TB (WD80EFZZ)",
		"WD Red Plus data sheet (WD80EFZZ): 5640 rpm, 128 MB cache, up to 185 MB/s; 5 platters (uncertain)",
		8, 5640, 185, 128, 10, price(180, "2022-06")),
	nasHDD("wd-red-plus-12tb", "WD Red Plus 12TB (WD120EFBX)",
		"WD Red Plus data sheet (WD120EFBX): 7200 rpm class, 256 MB cache, up to 196 MB/s; 8 platters (uncertain)",
		12, 7200, 196, 256, 16, price(240, "2022-06")),
	nasHDD("wd-red-pro-16tb", "WD Red Pro 16TB (WD161KFGX)",
		"WD Red Pro data sheet (WD161KFGX): 7200 rpm, 512 MB cache, up to 259 MB/s; 8 platters (uncertain)",
		16, 7200, 259, 512, 16, price(320, "2022-06")),
	nasHDD("wd-red-pro-20tb", "WD Red Pro 20TB (WD201KFGX)",
		"WD Red Pro data sheet (WD201KFGX): 7200 rpm, 512 MB cache, up to 268 MB/s; 9 platters (uncertain)",
		20, 7200, 268, 512, 18, price(400, "2023-06")),
	nasHDD("wd-ultrastar-hc550-16tb", "WD Ultrastar DC HC550 16TB (WUH721816ALE6L4)",
		"WD Ultrastar DC HC550 data sheet (WUH721816ALE6L4, SATA 512e): 7200 rpm, 512 MB cache, sustained 262 MB/s; 9 platters",
		16, 7200, 262, 512, 18, price(280, "2022-06")),
	nasHDD("wd-ultrastar-hc550-18tb", "WD Ultrastar DC HC550 18TB (WUH721818ALE6L4)",
		"WD Ultrastar DC HC550 data sheet (WUH721818ALE6L4, SATA 512e): 7200 rpm, 512 MB cache, sustained 269 MB/s; 9 platters",
		18, 7200, 269, 512, 18, price(320, "2022-06")),
	nasHDD("toshiba-n300-8tb", "Toshiba N300 8TB (HDWG480UZSVA)",
		"Toshiba N300 NAS hard drive data sheet (HDWG480): 7200 rpm, 256 MiB buffer, max. sustained 240 MiB/s (252 MB/s); "+
			"heads uncertain",
		8, 7200, 252, 256, 12, price(180, "2022-06")),
	nasHDD("toshiba-mg09-18tb", "Toshiba MG09 18TB (MG09ACA18TE)",
		"Toshiba MG09 series data sheet (MG09ACA18TE, SATA): 7200 rpm, 512 MiB buffer, sustained 268 MiB/s (281 MB/s); 9 platters",
		18, 7200, 281, 512, 18, price(300, "2022-06")),
}

// nasHDD builds a catalog entry of a current 3.5" drive from its data
// sheet's figures (capacity in decimal TB, rate in MB/s, cache in MiB)
// and the seek figures of its class: 7200 rpm drives 8.5 ms average,
// 5400-class NAS drives 11 ms (see the top of this file).
func nasHDD(name, product, source string, tb, rpm, mbps float64, cacheMiB int64, heads int, p StreetPrice) Drive {
	c := &hdd.Config{
		Capacity:     models.Bytes(int64(tb*1e12) / 4096 * 4096),
		RPM:          rpm,
		OuterMBps:    mbps,
		Heads:        heads,
		TrackToTrack: 800 * time.Microsecond,
		AvgSeek:      8500 * time.Microsecond,
		FullStroke:   18 * time.Millisecond,
		CacheSize:    models.Bytes(cacheMiB << 20),
	}
	if rpm < 7200 {
		c.TrackToTrack, c.AvgSeek, c.FullStroke = time.Millisecond, 11*time.Millisecond, 24*time.Millisecond
	}
	return Drive{Name: name, Product: product, Source: source, Price: p, HDD: c}
}
