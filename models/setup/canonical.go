package setup

import (
	"bytes"
	"fmt"
	"reflect"
	"strconv"

	"go.yaml.in/yaml/v3"

	"github.com/nasemu/nasemu/models"
)

// YAML renders the setup with every default filled in: what the file
// expands to. Catalog entries stay names; inline ones are written out in
// full. Parsing the result gives the same setup back.
func (s *Setup) YAML() ([]byte, error) {
	root := mapNode()
	add(root, "name", strNode(s.Name))
	if s.Description != "" {
		add(root, "description", strNode(s.Description))
	}
	if s.Notes != "" {
		add(root, "notes", strNode(s.Notes))
	}
	if s.NAS != nil {
		n, err := systemNode(s.NAS)
		if err != nil {
			return nil, err
		}
		add(root, "nas", n)
	}
	drives, err := groupsNode(s.Drives)
	if err != nil {
		return nil, err
	}
	add(root, "drives", drives)
	array, err := structNode(&s.RAID)
	if err != nil {
		return nil, err
	}
	add(root, "raid", array)
	if s.Cache != nil {
		c, err := structNode(&s.Cache.Config)
		if err != nil {
			return nil, err
		}
		d, err := groupsNode(s.Cache.Drives)
		if err != nil {
			return nil, err
		}
		c.Content = append([]*yaml.Node{strNode("drives"), d}, c.Content...)
		add(root, "cache", c)
	}
	link, err := structNode(&s.Link)
	if err != nil {
		return nil, err
	}
	add(root, "link", link)
	pr, err := structNode(&s.Protocol)
	if err != nil {
		return nil, err
	}
	// proto.Config calls the protocol "protocol"; under protocol: the
	// setup calls it kind, like link: does.
	for i := 0; i+1 < len(pr.Content); i += 2 {
		if pr.Content[i].Value == "protocol" {
			kv := []*yaml.Node{strNode("kind"), pr.Content[i+1]}
			pr.Content = append(kv, append(pr.Content[:i:i], pr.Content[i+2:]...)...)
			break
		}
	}
	add(root, "protocol", pr)
	add(root, "encryption", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(s.Encryption)})
	add(root, "clients", intNode(s.Clients))

	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func mapNode() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"} }

func strNode(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func intNode(i int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(i)}
}

func add(m *yaml.Node, key string, v *yaml.Node) { m.Content = append(m.Content, strNode(key), v) }

// structNode encodes a config struct as a mapping of its non-zero fields,
// named as the decoder names them. Zero fields mean "the default" in every
// layer's Config, so leaving them out loses nothing.
func structNode(v any) (*yaml.Node, error) {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return nil, fmt.Errorf("setup: rendering %T: not a struct", v)
	}
	m := mapNode()
	for _, f := range structFields(rv.Type()) {
		fv := rv.FieldByIndex(f.index)
		if fv.IsZero() {
			continue
		}
		n, err := valueNode(fv)
		if err != nil {
			return nil, fmt.Errorf("setup: rendering %T.%s: %w", v, f.name, err)
		}
		add(m, f.name, n)
	}
	return m, nil
}

var bytesType = reflect.TypeFor[models.Bytes]()

// valueNode encodes one field's value: sizes with a readable unit, nested
// structs as structNode does, the rest as yaml.v3 does.
func valueNode(v reflect.Value) (*yaml.Node, error) {
	switch {
	case v.Type() == bytesType:
		return strNode(sizeString(v.Interface().(models.Bytes))), nil
	case v.Kind() == reflect.Struct && !reflect.PointerTo(v.Type()).Implements(textUnmarshalerType):
		return structNode(v.Interface())
	}
	var n yaml.Node
	if err := n.Encode(v.Interface()); err != nil {
		return nil, err
	}
	return &n, nil
}

// sizeString writes a size in binary units when it is a whole number of
// MiB (RAM, caches), in decimal ones when it is a round decimal figure
// (datasheet capacities, rates: 2GB rather than 1953125KiB), and as
// Bytes.String otherwise. ParseBytes reads each back exactly.
func sizeString(b models.Bytes) string {
	if b%(1<<20) == 0 {
		return b.String()
	}
	for _, u := range []struct {
		s string
		m models.Bytes
	}{{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}} {
		if b%u.m == 0 {
			return strconv.FormatInt(int64(b/u.m), 10) + u.s
		}
	}
	return b.String()
}

// systemNode writes nas: as its catalog name, or in full when inline.
func systemNode(s *System) (*yaml.Node, error) {
	if !s.Inline {
		return strNode(s.Ref), nil
	}
	n, err := structNode(&s.Config)
	if err != nil {
		return nil, err
	}
	head := []*yaml.Node{strNode("name"), strNode(s.Name)}
	if s.Ref != "" {
		head = append([]*yaml.Node{strNode("base"), strNode(s.Ref)}, head...)
	}
	n.Content = append(head, n.Content...)
	return n, nil
}

// groupsNode writes drives: as one mapping, or a list for several groups.
func groupsNode(groups []DriveGroup) (*yaml.Node, error) {
	if len(groups) == 1 {
		return groupNode(groups[0])
	}
	list := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	for _, g := range groups {
		n, err := groupNode(g)
		if err != nil {
			return nil, err
		}
		list.Content = append(list.Content, n)
	}
	return list, nil
}

func groupNode(g DriveGroup) (*yaml.Node, error) {
	n := mapNode()
	if g.Inline {
		var cfg any = g.Drive.HDD
		if g.Drive.SSD != nil {
			cfg = g.Drive.SSD
		}
		m, err := structNode(cfg)
		if err != nil {
			return nil, err
		}
		head := []*yaml.Node{strNode("kind"), strNode(g.Drive.Kind()), strNode("name"), strNode(g.Drive.Name)}
		if g.Ref != "" {
			head = append([]*yaml.Node{strNode("base"), strNode(g.Ref)}, head...)
		}
		m.Content = append(head, m.Content...)
		add(n, "model", m)
	} else {
		add(n, "model", strNode(g.Ref))
	}
	add(n, "count", intNode(g.Count))
	if g.Capacity != 0 {
		add(n, "capacity", strNode(sizeString(g.Capacity)))
	}
	if g.Overprovision != 0 {
		add(n, "overprovision", strNode(strconv.FormatFloat(100*g.Overprovision, 'g', 12, 64)+"%"))
	}
	return n, nil
}
