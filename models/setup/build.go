package setup

import (
	"fmt"
	"hash/fnv"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/cache"
	"github.com/nasemu/nasemu/models/link"
	"github.com/nasemu/nasemu/models/nas"
	"github.com/nasemu/nasemu/models/proto"
	"github.com/nasemu/nasemu/models/raid"
)

// Build composes the setup's models, bottom up: drives, the array, the
// cache tier, the NAS, the link and the protocol. The result is
// deterministic: each component gets its own seed, derived from seed and
// the component's place in the setup, so adding a cache does not change
// the drives' seeds.
func (s *Setup) Build(seed uint64) (models.Device, error) {
	dev, err := s.buildStorage(seed)
	if err != nil {
		return nil, err
	}
	if s.NAS != nil {
		if dev, err = s.buildNAS(dev); err != nil {
			return nil, err
		}
	}
	return s.buildFront(dev)
}

// buildNAS puts the NAS controller in front of the storage.
func (s *Setup) buildNAS(storage models.Device) (models.Device, error) {
	cfg := s.NAS.Config
	cfg.Local = s.Protocol.Protocol == proto.Local
	cfg.Encrypted = s.Encryption
	if cfg.RAIDStack == "" {
		cfg.RAIDStack = raidStack(s.NAS)
	}
	c, err := nas.New(cfg, storage)
	if err != nil {
		return nil, fmt.Errorf("setup %s: nas %s: %w", s.Name, s.NAS.Name, err)
	}
	if tier, ok := storage.(*cache.Tier); ok {
		tier.SetCPU(c) // the cache is a kernel target: its work runs on the NAS's cores
	}
	return c, nil
}

// raidStack returns the software RAID a system runs its arrays with
// (nas.Config.RAIDStack): Linux md under the NAS OSes built on it (DSM,
// QTS, ADM, a Linux server) and under a system written wholly inline (a
// NAS described by its CPU and RAM, which for the OSes a planner meets
// there is md as well); none under Windows servers, ZFS (TrueNAS,
// QuTS hero) and catalog systems that state no OS.
func raidStack(sys *System) string {
	switch sys.OS {
	case "dsm", "qts", "adm", "linux":
		return nas.RAIDStackMD
	case "":
		if sys.Ref == "" {
			return nas.RAIDStackMD
		}
	}
	return nas.RAIDStackNone
}

// buildStorage builds the drives, the array and the cache tier.
func (s *Setup) buildStorage(seed uint64) (models.Device, error) {
	// SATA and SAS drives (cache SSDs included: they sit in the same bays)
	// share the NAS's drive bus: its HBA uplink, port speed and command
	// processor. NVMe drives have a PCIe link of their own, which their
	// model already charges.
	var bus *nas.Bus
	if s.NAS != nil && s.NAS.Config.DriveBus != (nas.BusConfig{}) {
		var err error
		if bus, err = nas.NewBus(s.NAS.Config.DriveBus); err != nil {
			return nil, fmt.Errorf("setup %s: nas %s: %w", s.Name, s.NAS.Name, err)
		}
	}
	members, err := buildDrives(s.Drives, seed, "drive", bus)
	if err != nil {
		return nil, fmt.Errorf("setup %s: %w", s.Name, err)
	}
	array, err := raid.New(s.RAID, members)
	if err != nil {
		return nil, fmt.Errorf("setup %s: raid: %w", s.Name, err)
	}
	if s.Cache == nil {
		return array, nil
	}
	ssds, err := buildDrives(s.Cache.Drives, seed, "cache-drive", bus)
	if err != nil {
		return nil, fmt.Errorf("setup %s: cache: %w", s.Name, err)
	}
	tier, err := cache.New(s.Cache.Config, ssds, array)
	if err != nil {
		return nil, fmt.Errorf("setup %s: cache: %w", s.Name, err)
	}
	return tier, nil
}

// buildFront puts the link and the protocol in front of dev.
func (s *Setup) buildFront(dev models.Device) (models.Device, error) {
	l, err := link.New(s.Link)
	if err != nil {
		return nil, fmt.Errorf("setup %s: link: %w", s.Name, err)
	}
	front, err := proto.New(s.Protocol, l, dev)
	if err != nil {
		return nil, fmt.Errorf("setup %s: protocol: %w", s.Name, err)
	}
	return front, nil
}

// buildDrives builds every drive of the groups, in order, each SATA or
// SAS drive on a port of bus (when not nil).
func buildDrives(groups []DriveGroup, seed uint64, role string, bus *nas.Bus) ([]models.Device, error) {
	var out []models.Device
	for _, g := range groups {
		d := g.model()
		for range g.Count {
			dev, err := d.New(int64(g.Capacity), componentSeed(seed, role, len(out)))
			if err != nil {
				return nil, fmt.Errorf("%s %d (%s): %w", role, len(out), d.Name, err)
			}
			if bus != nil && !nvme(d) {
				dev = bus.Attach(dev)
			}
			out = append(out, dev)
		}
	}
	return out, nil
}

// componentSeed derives the seed of one component from the setup's seed,
// its role and its index, with SplitMix64 finalisers so that nearby seeds
// and indexes give unrelated streams.
func componentSeed(seed uint64, role string, index int) uint64 {
	h := fnv.New64a()
	h.Write([]byte(role))
	return mix(seed ^ mix(h.Sum64()+uint64(index)*0x9e3779b97f4a7c15))
}

// mix is SplitMix64's finaliser.
func mix(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// memberCapacities lists the user capacity of every array member.
func (s *Setup) memberCapacities() []int64 {
	var caps []int64
	for _, g := range s.Drives {
		c := g.memberCapacity()
		for range g.Count {
			caps = append(caps, c)
		}
	}
	return caps
}

// UsableCapacity returns the bytes the array offers (after RAID overhead;
// for shr and mixed sizes, after the layout's losses), computed from the
// drives' configurations without building them.
func (s *Setup) UsableCapacity() (int64, error) {
	c, _, err := raid.Usable(s.RAID, s.memberCapacities())
	return c, err
}

// Tolerates returns how many array members may fail without losing data.
func (s *Setup) Tolerates() int {
	return raid.Tolerates(s.RAID.Level, s.driveCount())
}

// DriveCount returns how many drives the array has (cache SSDs excluded).
func (s *Setup) DriveCount() int { return s.driveCount() }

// File returns the name the setup was parsed under.
func (s *Setup) File() string { return s.file }

// WithDriveCapacity returns a copy of the setup whose drives (array and
// cache) are scaled down to at most capacity each, for fast tests and
// simulations. Drives already smaller are left as they are.
func (s *Setup) WithDriveCapacity(capacity models.Bytes) *Setup {
	c := *s
	c.Drives = scaleGroups(s.Drives, capacity)
	if s.Cache != nil {
		cc := *s.Cache
		cc.Drives = scaleGroups(s.Cache.Drives, capacity)
		c.Cache = &cc
	}
	return &c
}

func scaleGroups(groups []DriveGroup, capacity models.Bytes) []DriveGroup {
	out := append([]DriveGroup(nil), groups...)
	for i := range out {
		native := out[i].Capacity
		if native == 0 {
			native = nativeCapacity(out[i].Drive)
		}
		if native > capacity {
			out[i].Capacity = capacity
		}
	}
	return out
}
