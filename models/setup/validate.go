package setup

import (
	"fmt"
	"github.com/nasemu/nasemu/models/catalog"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/cache"
	"github.com/nasemu/nasemu/models/link"
	"github.com/nasemu/nasemu/models/proto"
	"github.com/nasemu/nasemu/models/raid"
)

// minDrives is the fewest members each level can be built from.
var minDrives = map[string]int{
	"single": 1, "raid0": 2, "raid1": 2, "raid5": 3, "raid6": 4, "raid10": 4, "jbod": 1, "shr": 2,
}

// defaults fills what the file left out. base is the file's base name.
func (p *parser) defaults(s *Setup, w *where, base string) {
	if s.Name == "" {
		s.Name = base
	}
	if s.Clients == 0 {
		s.Clients = 1
	}
	if s.Protocol.Protocol == "" {
		s.Protocol.Protocol = proto.Local
	}
	if s.Link.Kind == "" {
		if s.Protocol.Protocol != proto.Local {
			p.errorf(at(w.protocolKind, w.protocol), "link", "missing: protocol %s needs a network link, e.g. link: {kind: 1gbe}", s.Protocol.Protocol)
		}
		s.Link.Kind = "local"
	}
	if s.Link.Count == 0 {
		s.Link.Count = 1
	}
	if s.Link.Mode == "" {
		s.Link.Mode = link.Single
	}
	if s.Link.Kind != "" {
		s.Link = s.Link.WithDefaults()
	}
	s.Protocol = s.Protocol.Defaults()
	if s.RAID.Level == raid.LevelUnset {
		if n := s.driveCount(); n != 1 {
			p.errorf(w.drives, "raid", "missing: %d drives need a raid level (want %s)", n, strings.Join(raidLevels, ", "))
		}
		s.RAID.Level = raid.Single
	}
	if s.RAID.Chunk == 0 {
		s.RAID.Chunk = raid.DefaultChunk
	}
	if s.Cache != nil {
		s.Cache.Config = s.Cache.Config.WithDefaults()
	}
	if s.NAS != nil {
		s.NAS.Config = s.NAS.Config.WithDefaults()
	}
}

// driveCount is how many array members the setup has.
func (s *Setup) driveCount() int {
	n := 0
	for _, g := range s.Drives {
		n += g.Count
	}
	return n
}

// Validate checks a setup built or changed by hand; Parse has already
// checked (with positions) what it returns.
func (s *Setup) Validate() error {
	file := s.file
	if file == "" {
		file = s.Name
	}
	p := &parser{file: file}
	p.check(s, &where{})
	return p.err()
}

// check looks at combinations of keys that each parsed well alone.
func (p *parser) check(s *Setup, w *where) {
	if s.Name != "" && !validName(s.Name) {
		p.errorf(w.name, "name", "%q: use letters, digits, '.', '_', '-' and '+' only, so that sim:NAME works", s.Name)
	}
	if len(s.Drives) == 0 {
		p.errorf(w.drives, "drives", "missing")
		return
	}
	p.checkGroups(s.Drives, "drives", w.driveGroups)

	n := s.driveCount()
	lvl := s.RAID.Level.String()
	switch min, ok := minDrives[lvl]; {
	case !ok:
		p.errorf(at(w.level, w.raid), "raid.level", "unknown level %q (want %s)", lvl, strings.Join(raidLevels, ", "))
	case lvl == "single" && n != 1:
		p.errorf(at(w.level, w.raid, w.drives), "raid.level", "single takes exactly 1 drive, got %d (want raid0, raid1, ... for more)", n)
	case n < min:
		p.errorf(at(w.level, w.raid), "raid.level", "%s needs at least %d drives, got %d", lvl, min, n)
	case lvl == "raid10" && n%2 != 0:
		p.errorf(at(w.level, w.raid), "raid.level", "raid10 needs an even number of drives (mirrored pairs), got %d", n)
	}
	if c := s.RAID.Chunk; c < 4<<10 || c > 16<<20 || c&(c-1) != 0 {
		p.errorf(at(w.chunk, w.raid), "raid.chunk", "%v: want a power of two from 4KiB to 16MiB", c)
	} else if err := s.RAID.Validate(n); err != nil && !p.failed() {
		p.layerError(at(w.raid), "raid", err)
	}
	if kinds := s.driveKinds(); lvl != "single" && lvl != "jbod" && len(kinds) > 1 {
		p.errorf(at(w.drives), "drives", "the %s array mixes ssd and hdd members; each array holds one kind", lvl)
	}

	network := s.Protocol.Protocol != proto.Local
	if s.NAS == nil {
		switch {
		case s.Cache != nil:
			p.errorf(at(w.cache), "cache", "an SSD cache tier is a NAS feature: add nas: (a catalog system or an inline map)")
		case network:
			p.errorf(at(w.protocolKind, w.protocol), "protocol", "%s needs a NAS to serve it: add nas:", s.Protocol.Protocol)
		case s.Encryption:
			p.errorf(at(w.encryption), "encryption", "an encrypted shared folder needs a NAS to encrypt it: add nas:")
		}
	}
	if s.Cache != nil {
		p.checkCache(s, w)
	}
	p.checkLink(s, w)
	if s.NAS != nil {
		p.checkSystem(s, w)
	}
	if err := s.Protocol.Validate(); err != nil && !p.failed() {
		p.layerError(at(w.protocol), "protocol", err)
	}
	if s.Encryption && s.Protocol.Protocol == proto.ISCSI {
		p.errorf(at(w.encryption), "encryption", "an encrypted shared folder is served over smb, not iscsi (an iSCSI LUN is not a shared folder)")
	}
	if s.Clients < 1 {
		p.errorf(at(w.clients), "clients", "must be at least 1, got %d", s.Clients)
	}
}

// checkGroups checks each drive group alone.
func (p *parser) checkGroups(groups []DriveGroup, path string, nodes []groupNodes) {
	for i, g := range groups {
		w := groupNodes{path: path}
		if len(groups) > 1 {
			w.path = fmt.Sprintf("%s[%d]", path, i)
		}
		if i < len(nodes) {
			w = nodes[i]
		}
		if g.Count < 1 {
			p.errorf(at(w.count, w.group), w.path+".count", "must be at least 1, got %d", g.Count)
		}
		if g.Drive.SSD == nil && g.Drive.HDD == nil {
			p.errorf(w.group, w.path+".model", "missing")
			continue
		}
		if g.Overprovision != 0 {
			switch {
			case g.Drive.SSD == nil:
				p.errorf(at(w.overprov, w.group), w.path+".overprovision", "only SSDs have spare area to reserve; %s is an hdd", g.Drive.Name)
			case g.Overprovision < 0 || g.Overprovision >= 1:
				p.errorf(at(w.overprov, w.group), w.path+".overprovision", "want a percentage from 0%% to below 100%%, got %g%%", 100*g.Overprovision)
			default:
				if err := g.model().SSD.Validate(); err != nil {
					p.errorf(at(w.overprov, w.group), w.path+".overprovision", "%g%% is more than %s takes (%s)", 100*g.Overprovision, g.Drive.Name, configMessage(err))
				}
			}
		}
		if g.Capacity != 0 {
			if err := g.checkCapacity(); err != nil {
				p.errorf(at(w.capacity, w.group), w.path+".capacity", "%v", err)
			}
		}
	}
}

// checkCapacity checks that the drive scales down to the group's capacity.
func (g DriveGroup) checkCapacity() error {
	d := g.model()
	native := nativeCapacity(d)
	if g.Capacity > native {
		return fmt.Errorf("%s is more than %s's own %s: capacity only scales a drive down", humanSize(g.Capacity), d.Name, humanSize(native))
	}
	var err error
	if d.SSD != nil {
		_, err = d.SSD.ScaleTo(int64(g.Capacity))
	} else {
		_, err = d.HDD.ScaleTo(int64(g.Capacity))
	}
	if err != nil {
		return fmt.Errorf("%s cannot scale to %s: %s", d.Name, humanSize(g.Capacity), configMessage(err))
	}
	return nil
}

// checkCache checks the cache tier against the rest of the setup.
func (p *parser) checkCache(s *Setup, w *where) {
	c := s.Cache
	if len(c.Drives) == 0 {
		p.errorf(at(w.cacheDrives, w.cache), "cache.drives", "a cache tier needs at least one SSD")
		return
	}
	p.checkGroups(c.Drives, "cache.drives", w.cacheGroups)
	n := 0
	for i, g := range c.Drives {
		n += g.Count
		if g.Drive.HDD != nil {
			gw := groupNodes{path: "cache.drives"}
			if i < len(w.cacheGroups) {
				gw = w.cacheGroups[i]
			}
			p.errorf(at(gw.model, w.cacheDrives), gw.path+".model", "%s is an hdd; a cache tier is made of SSDs", g.Drive.Name)
		}
	}
	switch c.Config.Mode {
	case cache.ReadOnly:
	case cache.ReadWrite:
		// A write cache holds the only copy of acknowledged writes until they
		// are flushed, so most NAS firmwares (DSM among them) mirror it and
		// refuse to create one on a single SSD; QTS allows it, with a
		// warning (catalog.SingleSSDWriteCache).
		os := ""
		if s.NAS != nil {
			os = s.NAS.OS
		}
		if n < 2 && !catalog.SingleSSDWriteCache(os) {
			p.errorf(at(w.cacheMode, w.cache), "cache.mode", "read-write needs at least 2 cache SSDs (the write cache is mirrored), got %d", n)
		}
	default:
		p.errorf(at(w.cacheMode, w.cache), "cache.mode", "unknown cache mode %q (want %s)", c.Config.Mode, strings.Join(cacheModes, ", "))
		return
	}
	if err := c.Config.Validate(); err != nil {
		p.layerError(at(w.cache), "cache", err)
	}
}

// checkLink checks the link against the protocol.
func (p *parser) checkLink(s *Setup, w *where) {
	l := s.Link
	kindAt := at(w.linkKind, w.link)
	if !contains(protocolKinds, s.Protocol.Protocol) {
		p.errorf(at(w.protocolKind, w.protocol), "protocol", "unknown protocol %q (want %s)", s.Protocol.Protocol, strings.Join(protocolKinds, ", "))
		return
	}
	kind, ok := link.LookupKind(l.Kind)
	if !ok {
		p.errorf(kindAt, "link.kind", "unknown link kind %q (want %s)", l.Kind, strings.Join(linkKinds(), ", "))
		return
	}
	local := s.Protocol.Protocol == proto.Local
	switch {
	case local && l.Kind != "local":
		p.errorf(kindAt, "link.kind", "%s with protocol local: local access uses no network link (drop link: or set a network protocol)", l.Kind)
		return
	case !local && l.Kind == "local":
		p.errorf(kindAt, "link.kind", "local with protocol %s: a network protocol needs a network link (1gbe, 10gbe, ...)", s.Protocol.Protocol)
		return
	}
	countAt := at(w.linkCount, w.link)
	modeAt := at(w.linkMode, w.link)
	switch {
	case l.Count < 1:
		p.errorf(countAt, "link.count", "must be at least 1, got %d", l.Count)
	case l.Kind == "local" && l.Count != 1:
		p.errorf(countAt, "link.count", "local access has no links to count, got %d", l.Count)
	}
	switch l.Mode {
	case link.Single:
		if l.Count > 1 {
			p.errorf(modeAt, "link.mode", "single uses one link but count is %d: use lacp or smb-multichannel to spread traffic over several", l.Count)
		}
	case link.LACP:
		if l.Count < 2 {
			p.errorf(modeAt, "link.mode", "lacp aggregates at least 2 links, got count %d", l.Count)
		}
		if kind.Framing != link.EthernetTCP || !kind.StoreForward {
			p.errorf(modeAt, "link.mode", "lacp (802.3ad) aggregates Ethernet links, not %s", l.Kind)
		}
	case link.SMBMultichannel:
		if s.Protocol.Protocol != proto.SMB3 {
			p.errorf(modeAt, "link.mode", "smb-multichannel is an SMB 3 feature, but protocol is %s", s.Protocol.Protocol)
		}
	default:
		p.errorf(modeAt, "link.mode", "unknown link mode %q (want %s)", l.Mode, strings.Join(linkModes, ", "))
	}
	mtuAt := at(w.linkMTU, w.link)
	switch {
	case kind.MaxMTU == 0 && l.MTU != 0:
		p.errorf(mtuAt, "link.mtu", "%s has no settable MTU (no jumbo frames either), got %d: leave mtu out", l.Kind, l.MTU)
	case kind.MaxMTU != 0 && (l.MTU < link.MinMTU || l.MTU > kind.MaxMTU):
		p.errorf(mtuAt, "link.mtu", "%d is outside what %s carries: want %d to %d (%d standard, %d jumbo frames)", l.MTU, l.Kind, link.MinMTU, kind.MaxMTU, link.DefaultMTU, link.JumboMTU)
	}
	if p.failed() {
		return
	}
	if err := l.Validate(); err != nil {
		p.layerError(at(w.link), "link", err)
	}
}

// layerError records a layer's Validate error at that layer's key, taking
// a more precise key from the message when it starts with one ("nas.ram:
// ...", "cache.block: ...").
func (p *parser) layerError(n *yaml.Node, path string, err error) {
	msg := configMessage(err)
	if rest, ok := strings.CutPrefix(msg, path+"."); ok {
		if key, m, ok := strings.Cut(rest, ": "); ok && !strings.Contains(key, " ") {
			p.errorf(n, path+"."+key, "%s", m)
			return
		}
	}
	if m, ok := strings.CutPrefix(msg, path+": "); ok {
		msg = m
	}
	p.errorf(n, path, "%s", msg)
}

// configMessage strips the sentinel's text from a layer's Validate error:
// the position already says it is a configuration mistake.
func configMessage(err error) string {
	return strings.TrimPrefix(err.Error(), models.ErrConfig.Error()+": ")
}

// checkSystem checks the setup against what the catalog says the box
// offers: bays for its SATA/SAS drives, ports for its links.
func (p *parser) checkSystem(s *Setup, w *where) {
	sys := s.NAS
	if sys.Bays > 0 {
		n := 0
		groups := s.Drives
		if s.Cache != nil {
			groups = append(append([]DriveGroup(nil), groups...), s.Cache.Drives...)
		}
		for _, g := range groups {
			if !nvme(g.Drive) {
				n += g.Count
			}
		}
		if n > sys.Bays {
			p.errorf(at(w.drives), "drives", "%s has %d bays, but the setup puts %d drives in them (cache SSDs included)", sys.Name, sys.Bays, n)
		}
	}
	if len(sys.NICs) == 0 || s.Link.Kind == "local" {
		return
	}
	ports := 0
	var have []string
	for _, nic := range sys.NICs {
		have = append(have, fmt.Sprintf("%d×%s", nic.Count, nic.Kind))
		if nic.Kind == s.Link.Kind {
			ports += nic.Count
		}
	}
	if s.Link.Count > ports {
		p.errorf(at(w.linkCount, w.linkKind, w.link), "link", "%d×%s, but %s has %s", s.Link.Count, s.Link.Kind, sys.Name, strings.Join(have, " + "))
	}
}

// humanSize writes a size for messages: exact when it has a round unit,
// else in decimal units with three figures, as drives are sold.
func humanSize(b models.Bytes) string {
	if s := sizeString(b); len(s) <= 8 {
		return s
	}
	f := float64(b)
	for _, u := range []struct {
		s string
		m float64
	}{{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"kB", 1e3}} {
		if f >= u.m {
			return strconv.FormatFloat(f/u.m, 'g', 3, 64) + " " + u.s
		}
	}
	return strconv.FormatInt(int64(b), 10) + " bytes"
}

// driveKinds returns the kinds ("ssd", "hdd") among the array's members.
func (s *Setup) driveKinds() []string {
	var kinds []string
	for _, g := range s.Drives {
		if k := g.Drive.Kind(); !contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	return kinds
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// validName reports whether a setup name is safe in sim:NAME and file
// names.
func validName(s string) bool {
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-', r == '+':
		default:
			return false
		}
	}
	return s != "" && s != "." && s != ".."
}
