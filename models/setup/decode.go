package setup

import (
	"fmt"
	"path"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/cache"
	"github.com/nasemu/nasemu/models/catalog"
	"github.com/nasemu/nasemu/models/link"
	"github.com/nasemu/nasemu/models/nas"
	"github.com/nasemu/nasemu/models/proto"
	"github.com/nasemu/nasemu/models/raid"
)

// Bounds of counts: far above any real system, low enough that a typo
// cannot make Build allocate without end.
const (
	maxDrives  = 1024 // per group; the largest JBOD enclosures hold ~100
	maxLinks   = 64   // the most ports one bond or session joins
	maxClients = 4096
)

// where remembers the nodes of the keys that cross-key checks and defaults
// point at, so that a mistake involving two keys names the line of the one
// to change.
type where struct {
	name, drives, raid, level, chunk             *yaml.Node
	cache, cacheDrives, cacheMode                *yaml.Node
	link, linkKind, linkCount, linkMode, linkMTU *yaml.Node
	protocol, protocolKind, encryption, clients  *yaml.Node
	driveGroups, cacheGroups                     []groupNodes // one per group
}

// at returns the first non-nil node: the most precise place for a message.
func at(nodes ...*yaml.Node) *yaml.Node {
	for _, n := range nodes {
		if n != nil {
			return n
		}
	}
	return nil
}

// MaxFileSize is the largest setup file Parse takes: the largest built-in
// setup is a few KiB, with notes; a YAML tree costs tens of times its
// text in memory, so a file of many megabytes is a mistake or an attack,
// refused before it is parsed (and before it is read whole, by readers
// that stop past this size).
const MaxFileSize = 1 << 20

// Parse parses and validates a setup file. filename only labels messages
// and gives the default name. Every mistake found is reported, each as an
// *Error naming file, line and key.
func Parse(filename string, data []byte) (*Setup, error) {
	p := &parser{file: filename}
	if len(data) > MaxFileSize {
		p.errorf(nil, "", "larger than %v, the most a setup file may hold", models.Bytes(MaxFileSize))
		return nil, p.err()
	}
	root := p.document(data)
	if root == nil {
		return nil, p.err()
	}
	s := &Setup{file: filename}
	w := &where{}
	p.setup(root, s, w)
	if !p.failed() {
		p.defaults(s, w, strings.TrimSuffix(strings.TrimSuffix(path.Base(filename), ".yaml"), ".yml"))
	}
	if !p.failed() {
		p.check(s, w)
	}
	if p.failed() {
		return nil, p.err()
	}
	return s, nil
}

// setup walks the top-level mapping.
func (p *parser) setup(root *yaml.Node, s *Setup, w *where) {
	p.mapping(root, "", []field{
		{"name", func(n *yaml.Node, k string) { w.name = n; p.str(n, k, &s.Name) }},
		{"description", func(n *yaml.Node, k string) { p.text(n, k, &s.Description) }},
		{"notes", func(n *yaml.Node, k string) { p.text(n, k, &s.Notes) }},
		{"nas", func(n *yaml.Node, k string) { s.NAS = p.system(n, k) }},
		{"drives", func(n *yaml.Node, k string) {
			w.drives = n
			s.Drives, w.driveGroups = p.driveGroups(n, k)
		}},
		{"raid", func(n *yaml.Node, k string) { w.raid = n; p.raid(n, k, &s.RAID, w) }},
		{"cache", func(n *yaml.Node, k string) {
			w.cache = n
			s.Cache = &Cache{}
			p.cache(n, k, s.Cache, w)
		}},
		{"link", func(n *yaml.Node, k string) { w.link = n; p.link(n, k, &s.Link, w) }},
		{"protocol", func(n *yaml.Node, k string) { w.protocol = n; p.protocol(n, k, &s.Protocol, w) }},
		{"encryption", func(n *yaml.Node, k string) { w.encryption = n; p.boolean(n, k, &s.Encryption) }},
		{"clients", func(n *yaml.Node, k string) { w.clients = n; p.integer(n, k, 1, maxClients, &s.Clients) }},
	})
	if w.drives == nil {
		p.errorf(root, "drives", "missing (want a drive model and count, e.g. drives: {model: wd-red-1tb, count: 4})")
	}
}

// inlineEntry splits an inline catalog entry's own keys (base, name and,
// for drives, kind) from the Config fields that follow them.
type inlineEntry struct {
	base, name, kind *yaml.Node
	rest             []pair
}

func (p *parser) inlineEntry(n *yaml.Node, path string, withKind bool) inlineEntry {
	var e inlineEntry
	for _, kv := range p.pairs(n, path) {
		switch {
		case kv.key.Value == "base":
			e.base = kv.value
		case kv.key.Value == "name":
			e.name = kv.value
		case kv.key.Value == "kind" && withKind:
			e.kind = kv.value
		default:
			e.rest = append(e.rest, kv)
		}
	}
	return e
}

// groupNodes are the nodes of one drive group's keys, for later messages.
type groupNodes struct {
	path                                    string
	group, model, count, capacity, overprov *yaml.Node
}

// driveGroups decodes drives: (or cache.drives:): one group as a mapping,
// or a list of groups.
func (p *parser) driveGroups(n *yaml.Node, path string) ([]DriveGroup, []groupNodes) {
	if n.Kind == yaml.SequenceNode {
		if len(n.Content) == 0 {
			p.errorf(n, path, "want at least one drive group, got an empty list")
			return nil, nil
		}
		groups := make([]DriveGroup, 0, len(n.Content))
		nodes := make([]groupNodes, 0, len(n.Content))
		for i, item := range n.Content {
			g, gn := p.driveGroup(p.resolve(item), fmt.Sprintf("%s[%d]", path, i))
			groups, nodes = append(groups, g), append(nodes, gn)
		}
		return groups, nodes
	}
	g, gn := p.driveGroup(n, path)
	return []DriveGroup{g}, []groupNodes{gn}
}

// driveGroup decodes one {model, count, capacity, overprovision} mapping.
func (p *parser) driveGroup(n *yaml.Node, path string) (DriveGroup, groupNodes) {
	g := DriveGroup{Count: 1}
	w := groupNodes{path: path, group: n}
	p.mapping(n, path, []field{
		{"model", func(n *yaml.Node, k string) { w.model = n; p.drive(n, k, &g) }},
		{"count", func(n *yaml.Node, k string) { w.count = n; p.integer(n, k, 1, maxDrives, &g.Count) }},
		{"capacity", func(n *yaml.Node, k string) {
			w.capacity = n
			before := len(p.errs)
			if p.size(n, k, &g.Capacity); len(p.errs) == before && g.Capacity == 0 {
				p.errorf(n, k, "must not be 0 (leave the key out for the drive's own capacity)")
			}
		}},
		{"overprovision", func(n *yaml.Node, k string) { w.overprov = n; p.percent(n, k, &g.Overprovision) }},
	})
	if w.model == nil && n.Kind == yaml.MappingNode {
		p.errorf(n, join(path, "model"), "missing (want a catalog drive such as wd-red-1tb, or an inline map with kind: ssd or hdd)")
	}
	return g, w
}

// driveKinds are the kinds of an inline drive.
var driveKinds = []string{"ssd", "hdd"}

// drive decodes drives.model: a catalog name or an inline map.
func (p *parser) drive(n *yaml.Node, path string, g *DriveGroup) {
	if n.Kind == yaml.ScalarNode {
		name, ok := p.scalar(n, path, "a catalog drive name or an inline map")
		if !ok {
			return
		}
		d, ok := p.lookupDrive(n, path, name)
		if !ok {
			return
		}
		g.Ref, g.Drive = name, d
		return
	}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, path, "want a catalog drive name or an inline map, got %s", describe(n))
		return
	}
	g.Inline = true
	e := p.inlineEntry(n, path, true)
	var d catalog.Drive
	if e.base != nil {
		name, ok := p.scalar(e.base, join(path, "base"), "a catalog drive name")
		if !ok {
			return
		}
		base, ok := p.lookupDrive(e.base, join(path, "base"), name)
		if !ok {
			return
		}
		g.Ref, d = name, base
		d.Product, d.Source = base.Product+" (overridden in the setup)", "setup file"
	}
	kind := d.Kind()
	if e.kind != nil {
		var k string
		before := len(p.errs)
		p.enum(e.kind, join(path, "kind"), "drive kind", driveKinds, &k)
		if len(p.errs) != before {
			return
		}
		if e.base != nil && k != kind {
			p.errorf(e.kind, join(path, "kind"), "%s conflicts with base %s, which is an %s", k, g.Ref, kind)
			return
		}
		kind = k
	} else if e.base == nil {
		p.errorf(n, join(path, "kind"), "missing (an inline drive needs kind: ssd or hdd, or a base: catalog drive)")
		return
	}
	d.Name = "inline-" + kind
	if g.Ref != "" {
		d.Name = g.Ref + "-custom"
	}
	if e.name != nil {
		p.str(e.name, join(path, "name"), &d.Name)
	}
	if e.base == nil {
		d.Product, d.Source = "inline drive", "setup file"
	}
	before := len(p.errs)
	switch kind {
	case "ssd":
		cfg := ssdConfig(d)
		p.structPairs(e.rest, path, reflect.ValueOf(&cfg).Elem(), reflect.Value{})
		d.SSD, d.HDD = &cfg, nil
	case "hdd":
		cfg := hddConfig(d)
		p.structPairs(e.rest, path, reflect.ValueOf(&cfg).Elem(), reflect.Value{})
		d.SSD, d.HDD = nil, &cfg
	}
	if len(p.errs) != before {
		return
	}
	if err := validateDrive(d); err != nil {
		p.errorf(n, path, "%s", configMessage(err))
		return
	}
	g.Drive = d
}

// lookupDrive finds a catalog drive, or records an error suggesting the
// nearest name (the whole catalog is too long for a message: 'nasemu
// presets drives' lists it).
func (p *parser) lookupDrive(n *yaml.Node, path, name string) (catalog.Drive, bool) {
	d, err := catalog.LookupDrive(name)
	if err == nil {
		return d, true
	}
	var names []string
	for _, d := range catalog.Drives() {
		names = append(names, d.Name)
	}
	p.unknownName(n, path, "drive", name, names)
	return catalog.Drive{}, false
}

// unknownName records a catalog name that is not in the catalog.
func (p *parser) unknownName(n *yaml.Node, path, what, name string, known []string) {
	list := "nasemu presets " + what + "s"
	if s := nearestName(name, known); s != "" {
		p.errorf(n, path, "unknown %s %q (did you mean %s? '%s' lists them all)", what, name, s, list)
		return
	}
	p.errorf(n, path, "unknown %s %q ('%s' lists the known ones)", what, name, list)
}

// lookupSystem returns the catalog system called name.
func lookupSystem(name string) (System, error) {
	c, err := catalog.LookupSystem(name)
	if err != nil {
		return System{}, err
	}
	return System{Ref: name, Name: name, Product: c.Product, Config: c.NAS, Bays: c.Bays, NICs: c.NICs, OS: c.OS}, nil
}

// lookupSystemAt finds a catalog system, or records an error suggesting
// the nearest name.
func (p *parser) lookupSystemAt(n *yaml.Node, path, name string) (System, bool) {
	s, err := lookupSystem(name)
	if err == nil {
		return s, true
	}
	var names []string
	for _, s := range catalog.Systems() {
		names = append(names, s.Name)
	}
	p.unknownName(n, path, "system", name, names)
	return System{}, false
}

// system decodes nas: a catalog system name or an inline map.
func (p *parser) system(n *yaml.Node, path string) *System {
	if n.Kind == yaml.ScalarNode {
		name, ok := p.scalar(n, path, "a catalog system name or an inline map")
		if !ok {
			return nil
		}
		sys, ok := p.lookupSystemAt(n, path, name)
		if !ok {
			return nil
		}
		return &sys
	}
	if n.Kind != yaml.MappingNode {
		p.errorf(n, path, "want a catalog system name or an inline map, got %s", describe(n))
		return nil
	}
	s := &System{Inline: true, Name: "inline-nas", Product: "inline NAS"}
	e := p.inlineEntry(n, path, false)
	if e.base != nil {
		name, ok := p.scalar(e.base, join(path, "base"), "a catalog system name")
		if !ok {
			return nil
		}
		base, ok := p.lookupSystemAt(e.base, join(path, "base"), name)
		if !ok {
			return nil
		}
		s.Ref, s.Config, s.Bays, s.NICs, s.OS = name, base.Config, base.Bays, base.NICs, base.OS
		s.Name, s.Product = name+"-custom", base.Product+" (overridden in the setup)"
	}
	if e.name != nil {
		p.str(e.name, join(path, "name"), &s.Name)
	}
	var rest []pair
	for _, kv := range e.rest {
		switch kv.key.Value {
		case "encrypted":
			p.errorf(kv.key, join(path, kv.key.Value), "set by the top-level encryption: key, not here")
		case "local":
			p.errorf(kv.key, join(path, kv.key.Value), "set by protocol: (local or not), not here")
		default:
			rest = append(rest, kv)
		}
	}
	before := len(p.errs)
	p.structPairs(rest, path, reflect.ValueOf(&s.Config).Elem(), reflect.ValueOf(nas.Config{}.WithDefaults()))
	if len(p.errs) != before {
		return nil
	}
	if err := s.Config.Validate(); err != nil {
		p.layerError(n, path, err)
		return nil
	}
	return s
}

// raid decodes raid: its level (checked here for a precise message) and the
// rest of the array's parameters.
func (p *parser) raid(n *yaml.Node, path string, r *raid.Config, w *where) {
	var rest []pair
	for _, kv := range p.pairs(n, path) {
		switch kv.key.Value {
		case "level":
			w.level = kv.value
			var s string
			p.enum(kv.value, join(path, "level"), "level", raidLevels, &s)
			if s != "" {
				r.Level, _ = raid.ParseLevel(s)
			}
		case "chunk":
			w.chunk = kv.value
			rest = append(rest, kv)
		default:
			rest = append(rest, kv)
		}
	}
	p.structPairs(rest, path, reflect.ValueOf(r).Elem(), reflect.ValueOf(raid.Config{Chunk: raid.DefaultChunk}))
	if w.level == nil && n.Kind == yaml.MappingNode {
		p.errorf(n, join(path, "level"), "missing (want %s)", strings.Join(raidLevels, ", "))
	}
}

// cache decodes cache: its drives, mode and tuning.
func (p *parser) cache(n *yaml.Node, path string, c *Cache, w *where) {
	var rest []pair
	for _, kv := range p.pairs(n, path) {
		switch kv.key.Value {
		case "drives":
			w.cacheDrives = kv.value
			c.Drives, w.cacheGroups = p.driveGroups(kv.value, join(path, "drives"))
		case "mode":
			w.cacheMode = kv.value
			p.enum(kv.value, join(path, "mode"), "cache mode", cacheModes, &c.Config.Mode)
		default:
			rest = append(rest, kv)
		}
	}
	p.structPairs(rest, path, reflect.ValueOf(&c.Config).Elem(), reflect.ValueOf(cache.Config{}.WithDefaults()))
	if w.cacheDrives == nil && n.Kind == yaml.MappingNode {
		p.errorf(n, join(path, "drives"), "missing: a cache tier needs SSDs, e.g. drives: {model: kingston-suv500-240g, count: 2}")
	}
}

// link decodes link: a kind alone ("link: 1gbe") or a mapping.
func (p *parser) link(n *yaml.Node, path string, l *link.Config, w *where) {
	if n.Kind == yaml.ScalarNode {
		w.linkKind = n
		p.enum(n, path, "link kind", linkKinds(), &l.Kind)
		return
	}
	var rest []pair
	for _, kv := range p.pairs(n, path) {
		k := join(path, kv.key.Value)
		switch kv.key.Value {
		case "kind":
			w.linkKind = kv.value
			p.enum(kv.value, k, "link kind", linkKinds(), &l.Kind)
		case "count":
			w.linkCount = kv.value
			p.integer(kv.value, k, 1, maxLinks, &l.Count)
		case "mode":
			w.linkMode = kv.value
			p.enum(kv.value, k, "link mode", linkModes, &l.Mode)
		case "mtu":
			w.linkMTU = kv.value
			p.integer(kv.value, k, 1, 1<<16, &l.MTU)
		default:
			rest = append(rest, kv)
		}
	}
	p.structPairs(rest, path, reflect.ValueOf(l).Elem(), reflect.ValueOf(link.Config{Kind: l.Kind}.WithDefaults()))
	if w.linkKind == nil && n.Kind == yaml.MappingNode {
		p.errorf(n, join(path, "kind"), "missing (want %s)", strings.Join(linkKinds(), ", "))
	}
}

// protocol decodes protocol: a kind alone ("protocol: smb3") or a mapping
// of the kind and its tuning.
func (p *parser) protocol(n *yaml.Node, path string, pr *proto.Config, w *where) {
	if n.Kind == yaml.ScalarNode {
		w.protocolKind = n
		p.enum(n, path, "protocol", protocolKinds, &pr.Protocol)
		return
	}
	var rest []pair
	for _, kv := range p.pairs(n, path) {
		switch kv.key.Value {
		case "kind":
			w.protocolKind = kv.value
			p.enum(kv.value, join(path, "kind"), "protocol", protocolKinds, &pr.Protocol)
		case "protocol":
			p.errorf(kv.key, join(path, "protocol"), "unknown key (did you mean kind?)")
		default:
			rest = append(rest, kv)
		}
	}
	p.structPairs(rest, path, reflect.ValueOf(pr).Elem(), reflect.ValueOf(proto.Config{Protocol: pr.Protocol}.Defaults()))
	if w.protocolKind == nil && n.Kind == yaml.MappingNode {
		p.errorf(n, join(path, "kind"), "missing (want %s)", strings.Join(protocolKinds, ", "))
	}
}
