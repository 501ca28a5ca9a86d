package catalog

import (
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/nas"
)

// NAS products from their vendors' datasheets. Each gives only what a
// datasheet states — CPU model, family, cores and base clock, RAM as
// shipped, bays, ports, slots — and gets every CPU cost from its CPU's
// family (nas.Family): none was measured or fitted. Datasheet figures are
// as remembered from the vendors' product pages; verify against them
// before relying on an exact slot width. Prices are street prices in US
// dollars, dated (PriceDate), of the model as listed (RAM as shipped).

// linuxNAS is the configuration every Linux-based NAS OS here shares:
// ext4 or Btrfs volumes whose iSCSI LUNs are files (sparse), md RAID.
func linuxNAS(cpu nas.CPU, ram int64, bus nas.BusConfig, slots ...nas.PCIeSlot) nas.Config {
	return nas.Config{CPU: cpu, RAM: models.Bytes(ram), SparseFiles: true, DriveBus: bus, PCIeSlots: slots}
}

// sataBus is the drive bus of a NAS whose bays hang on SATA 6 Gb/s
// controllers behind PCIe lanes of the given generation and width.
func sataBus(name string, gen, lanes int) nas.BusConfig {
	return nas.BusConfig{Name: name, Rate: models.Bytes(nas.PCIeRate(gen, lanes)), PortRate: models.Bytes(nas.SATA3)}
}

func products() []System {
	const gb = int64(1) << 30
	v1500b := nas.CPU{Name: "AMD Ryzen Embedded V1500B (4C/8T, Zen)", Family: "zen", Cores: 4, GHz: 2.2}
	j4125 := nas.CPU{Name: "Intel Celeron J4125 (Goldmont Plus)", Family: "goldmont-plus", Cores: 4, GHz: 2.0}
	return []System{
		{
			Name: "qnap-ts-464", Product: "QNAP TS-464-8G",
			Source: "QNAP TS-464 datasheet: Celeron N5095 4C 2.0 GHz (burst 2.9), 8 GB DDR4, 4 bays, 2 × 2.5GbE, 2 × M.2 2280 PCIe Gen3 x1, one PCIe Gen3 x2 slot.",
			NAS: linuxNAS(nas.CPU{Name: "Intel Celeron N5095 (Tremont)", Family: "tremont", Cores: 4, GHz: 2.0}, 8*gb,
				sataBus("SoC SATA 6 Gb/s", 3, 2), nas.PCIeSlot{Name: "PCIe Gen3 x2 slot", Gen: 3, Lanes: 2}),
			Bays: 4, NICs: []NIC{{Kind: "2.5gbe", Count: 2}}, PriceUSD: 550, PriceDate: "2025-01, US street", OS: "qts",
		},
		{
			Name: "qnap-ts-h973ax", Product: "QNAP TS-h973AX-8G",
			Source: "QNAP TS-h973AX datasheet: Ryzen V1500B 4C 2.2 GHz, 8 GB DDR4 ECC, 5 × 3.5\" + 4 × 2.5\" U.2 NVMe/SATA bays, 1 × 10GBASE-T, 2 × 2.5GbE; QuTS hero (ZFS).",
			NAS:    linuxNAS(v1500b, 8*gb, sataBus("SATA 6 Gb/s controller behind PCIe Gen3 x4", 3, 4)),
			Bays:   9, NICs: []NIC{{Kind: "10gbe", Count: 1}, {Kind: "2.5gbe", Count: 2}}, PriceUSD: 1200, PriceDate: "2025-01, US street", OS: "quts-hero",
			Notes: "QuTS hero is ZFS: data checksums and copy-on-write; set cpu.checksum_rate to model the checksums.",
		},
		{
			Name: "qnap-tvs-h874", Product: "QNAP TVS-h874-i5-32G",
			Source: "QNAP TVS-h874 datasheet: Core i5-12400 6C 2.5 GHz (Alder Lake P-cores), 32 GB DDR4, 8 bays, 2 × 2.5GbE, 2 × M.2 PCIe Gen4 x4, PCIe Gen4 x16 + Gen4 x4 slots; QuTS hero.",
			NAS: linuxNAS(nas.CPU{Name: "Intel Core i5-12400 (Alder Lake)", Family: "alder-lake", Cores: 6, GHz: 2.5}, 32*gb,
				sataBus("SATA 6 Gb/s controller behind PCIe Gen3 x4", 3, 4),
				nas.PCIeSlot{Name: "PCIe Gen4 x16 slot", Gen: 4, Lanes: 16}, nas.PCIeSlot{Name: "PCIe Gen4 x4 slot", Gen: 4, Lanes: 4}),
			Bays: 8, NICs: []NIC{{Kind: "2.5gbe", Count: 2}}, PriceUSD: 2300, PriceDate: "2025-01, US street", OS: "quts-hero",
		},
		{
			Name: "qnap-ts-873a", Product: "QNAP TS-873A-8G",
			Source: "QNAP TS-873A datasheet: Ryzen V1500B 4C 2.2 GHz, 8 GB DDR4, 8 bays, 2 × 2.5GbE, 2 × M.2 PCIe Gen3 x2, 2 PCIe Gen3 x4 slots.",
			NAS: linuxNAS(v1500b, 8*gb, sataBus("SATA 6 Gb/s controllers behind PCIe Gen3 x4", 3, 4),
				nas.PCIeSlot{Name: "PCIe Gen3 x4 slot 1", Gen: 3, Lanes: 4}, nas.PCIeSlot{Name: "PCIe Gen3 x4 slot 2", Gen: 3, Lanes: 4}),
			Bays: 8, NICs: []NIC{{Kind: "2.5gbe", Count: 2}}, PriceUSD: 1100, PriceDate: "2025-01, US street", OS: "qts",
		},
		{
			Name: "synology-ds224plus", Product: "Synology DiskStation DS224+",
			Source: "Synology DS224+ datasheet: Celeron J4125 4C 2.0 GHz, 2 GB DDR4, 2 bays, 2 × 1GbE.",
			NAS:    linuxNAS(j4125, 2*gb, sataBus("SoC SATA 6 Gb/s", 2, 2)),
			Bays:   2, NICs: []NIC{{Kind: "1gbe", Count: 2}}, PriceUSD: 300, PriceDate: "2025-01, US street", OS: "dsm",
		},
		{
			Name: "synology-ds920plus", Product: "Synology DiskStation DS920+",
			Source: "Synology DS920+ datasheet: Celeron J4125 4C 2.0 GHz, 4 GB DDR4, 4 bays, 2 × 1GbE, 2 × M.2 2280 NVMe (cache).",
			NAS:    linuxNAS(j4125, 4*gb, sataBus("SoC SATA 6 Gb/s", 2, 2)),
			Bays:   4, NICs: []NIC{{Kind: "1gbe", Count: 2}}, PriceUSD: 550, PriceDate: "2023-06, US street (discontinued since)", OS: "dsm",
		},
		{
			Name: "synology-ds1621plus", Product: "Synology DiskStation DS1621+",
			Source: "Synology DS1621+ datasheet: Ryzen V1500B 4C 2.2 GHz, 4 GB DDR4 ECC, 6 bays, 4 × 1GbE, 2 × M.2 NVMe (cache), one PCIe Gen3 x8 slot.",
			NAS: linuxNAS(v1500b, 4*gb, sataBus("SATA 6 Gb/s controller behind PCIe Gen3 x4", 3, 4),
				nas.PCIeSlot{Name: "PCIe Gen3 x8 slot", Gen: 3, Lanes: 8}),
			Bays: 6, NICs: []NIC{{Kind: "1gbe", Count: 4}}, PriceUSD: 900, PriceDate: "2025-01, US street", OS: "dsm",
		},
		{
			Name: "synology-ds3622xsplus", Product: "Synology DiskStation DS3622xs+",
			Source: "Synology DS3622xs+ datasheet: Xeon D-1531 6C 2.2 GHz (Broadwell-DE), 16 GB DDR4 ECC, 12 bays, 2 × 10GbE SFP+ and 2 × 1GbE, one PCIe Gen3 x8 slot.",
			NAS: linuxNAS(nas.CPU{Name: "Intel Xeon D-1531 (Broadwell-DE)", Family: "broadwell", Cores: 6, GHz: 2.2}, 16*gb,
				sataBus("SATA 6 Gb/s controllers behind PCIe Gen3 x8", 3, 8), nas.PCIeSlot{Name: "PCIe Gen3 x8 slot", Gen: 3, Lanes: 8}),
			Bays: 12, NICs: []NIC{{Kind: "10gbe", Count: 2}, {Kind: "1gbe", Count: 2}}, PriceUSD: 2400, PriceDate: "2025-01, US street", OS: "dsm",
		},
		{
			Name: "synology-rs1221plus", Product: "Synology RackStation RS1221+",
			Source: "Synology RS1221+ datasheet: Ryzen V1500B 4C 2.2 GHz, 4 GB DDR4 ECC, 8 bays, 4 × 1GbE, one PCIe Gen3 x8 slot.",
			NAS: linuxNAS(v1500b, 4*gb, sataBus("SATA 6 Gb/s controllers behind PCIe Gen3 x4", 3, 4),
				nas.PCIeSlot{Name: "PCIe Gen3 x8 slot", Gen: 3, Lanes: 8}),
			Bays: 8, NICs: []NIC{{Kind: "1gbe", Count: 4}}, PriceUSD: 1300, PriceDate: "2025-01, US street", OS: "dsm",
		},
		{
			Name: "synology-ds223j", Product: "Synology DiskStation DS223j",
			Source: "Synology DS223j datasheet: Realtek RTD1619B 4 × Cortex-A55 1.7 GHz, 1 GB DDR4, 2 bays, 1 × 1GbE.",
			NAS:    linuxNAS(nas.CPU{Name: "Realtek RTD1619B (4 × Cortex-A55)", Family: "cortex-a55", Cores: 4, GHz: 1.7}, 1*gb, sataBus("SoC SATA 6 Gb/s", 2, 1)),
			Bays:   2, NICs: []NIC{{Kind: "1gbe", Count: 1}}, PriceUSD: 200, PriceDate: "2025-01, US street", OS: "dsm",
		},
		{
			Name: "truenas-mini-x-plus", Product: "iXsystems TrueNAS Mini X+",
			Source: "iXsystems TrueNAS Mini X+ datasheet: Atom C3758 8C 2.2 GHz (Goldmont), 32 GB DDR4 ECC, 5 × 3.5\" + 2 × 2.5\" bays, 2 × 10GbE (10GBASE-T), 2 × 1GbE; TrueNAS (ZFS).",
			NAS: linuxNAS(nas.CPU{Name: "Intel Atom C3758 (Goldmont)", Family: "goldmont", Cores: 8, GHz: 2.2}, 32*gb,
				sataBus("SoC SATA 6 Gb/s", 3, 4)),
			Bays: 7, NICs: []NIC{{Kind: "10gbe", Count: 2}, {Kind: "1gbe", Count: 2}}, PriceUSD: 1500, PriceDate: "2024-06, vendor list", OS: "truenas",
			Notes: "ZFS: data checksums and copy-on-write; set cpu.checksum_rate to model the checksums.",
		},
		{
			Name: "asustor-as6704t", Product: "Asustor Lockerstor 4 Gen2 (AS6704T)",
			Source: "Asustor AS6704T datasheet: Celeron N5105 4C 2.0 GHz (Tremont), 4 GB DDR4, 4 bays, 2 × 2.5GbE, 4 × M.2 PCIe Gen3 x1.",
			NAS: linuxNAS(nas.CPU{Name: "Intel Celeron N5105 (Tremont)", Family: "tremont", Cores: 4, GHz: 2.0}, 4*gb,
				sataBus("SoC SATA 6 Gb/s", 3, 2)),
			Bays: 4, NICs: []NIC{{Kind: "2.5gbe", Count: 2}}, PriceUSD: 600, PriceDate: "2025-01, US street", OS: "adm",
		},
		{
			Name: "generic-x86-fileserver", Product: "Generic x86 file server (class profile: Xeon E-2300 6C 2.8 GHz, 32 GB, 8 bays, 2 × 10GbE)",
			Source: "Class profile, not a product: a Xeon E-2336 (Rocket Lake, 6C 2.9 GHz base) 1U/2U server running Linux with Samba " +
				"and md RAID on a SATA/SAS HBA in a PCIe Gen4 x8 slot; figures from Intel ARK and a typical HBA brief.",
			NAS: linuxNAS(nas.CPU{Name: "Intel Xeon E-2336 (Rocket Lake)", Family: "rocket-lake", Cores: 6, GHz: 2.9}, 32*gb,
				sataBus("SAS3 HBA behind PCIe Gen3 x8", 3, 8), nas.PCIeSlot{Name: "PCIe Gen4 x8 slot", Gen: 4, Lanes: 8}),
			Bays: 8, NICs: []NIC{{Kind: "10gbe", Count: 2}}, PriceUSD: 3000, PriceDate: "2025-01, class estimate without drives", OS: "linux",
		},
	}
}
