package setup

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/nasemu/nasemu/models"
)

// With returns the setup with one key set, as if the file had said so:
// key is a dotted path of the schema (drives.count, link.kind,
// cache.mode, nas, drives[1].model), value is YAML (6, 10gbe,
// {base: wd-se-4tb, interface: sata-3g}). The setup is written out with
// every default (YAML), the key is set in that text and the result goes
// through Parse, so a bad key, value or combination is refused with the
// setup's own errors, each naming the key and "--set KEY=VALUE".
func (s *Setup) With(key, value string) (*Setup, error) {
	return s.WithAll("--set "+key+"="+value, KeyValue{key, value})
}

// KeyValue is one setup key to set and its value, as With takes them.
type KeyValue struct {
	Key, Value string
}

// WithAll returns the setup with every key of kvs set at once, in order,
// and the result parsed once: a combination is judged whole, so a setup
// of four drives in RAID 5 can become two drives in RAID 1
// (drives.count=2 would be refused on its own). Errors name where in
// place of a file.
func (s *Setup) WithAll(where string, kvs ...KeyValue) (*Setup, error) {
	data, err := s.YAML()
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	for _, kv := range kvs {
		if err := set(doc.Content[0], kv.Key, kv.Value, where); err != nil {
			return nil, err
		}
	}
	out, err := yaml.Marshal(&doc)
	if err != nil {
		return nil, err
	}
	t, err := Parse(s.file, out)
	if err != nil {
		return nil, relabel(err, where)
	}
	t.file = s.file
	return t, nil
}

// set sets key (a dotted path) to value (YAML) in the setup document's
// root mapping n.
func set(n *yaml.Node, key, value, where string) error {
	fail := func(format string, args ...any) error {
		return &Error{File: where, Key: key, Msg: fmt.Sprintf(format, args...), unknown: true}
	}
	if key == "" {
		return fail("want KEY=VALUE with a dotted key such as drives.count")
	}
	var val yaml.Node
	if err := yaml.Unmarshal([]byte(value), &val); err != nil {
		return fail("the value is not YAML: %v", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	v := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: ""}
	if len(val.Content) == 1 {
		v = val.Content[0]
	}
	parts := strings.Split(key, ".")
	for i, part := range parts {
		name, index, err := keyIndex(part)
		if err != nil {
			return fail("%v", err)
		}
		last := i == len(parts)-1 && index < 0
		child := mappingValue(n, name)
		switch {
		case child == nil && n.Kind == yaml.MappingNode:
			// A key the setup leaves out (cache:, a default-less field):
			// add it, and let Parse judge it.
			child = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			if last {
				child = v
			}
			n.Content = append(n.Content, strNode(name), child)
		case child == nil:
			return fail("%s is not a mapping here", strings.Join(parts[:i], "."))
		case last:
			*child = *v
		}
		n = child
		if index >= 0 {
			if n.Kind == yaml.MappingNode && index == 0 {
				// One group written as a mapping is drives[0].
			} else if n.Kind != yaml.SequenceNode || index >= len(n.Content) {
				return fail("%s has no element %d", name, index)
			} else {
				n = n.Content[index]
			}
			if i == len(parts)-1 {
				*n = *v
			}
		}
	}
	return nil
}

// keyIndex splits "drives[1]" into drives and 1; "drives" gives index -1.
func keyIndex(part string) (string, int, error) {
	name, rest, ok := strings.Cut(part, "[")
	if !ok {
		if part == "" {
			return "", 0, errors.New("empty key in the dotted path")
		}
		return part, -1, nil
	}
	i, err := strconv.Atoi(strings.TrimSuffix(rest, "]"))
	if err != nil || !strings.HasSuffix(rest, "]") || i < 0 || name == "" {
		return "", 0, fmt.Errorf("bad index in %q (want KEY[N])", part)
	}
	return name, i, nil
}

// mappingValue returns the value of key in mapping n, or nil.
func mappingValue(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// relabel makes the setup errors of a --set name it instead of the
// generated text's file and line.
func relabel(err error, where string) error {
	var out []error
	var walk func(error)
	walk = func(e error) {
		if j, ok := e.(interface{ Unwrap() []error }); ok {
			for _, x := range j.Unwrap() {
				walk(x)
			}
			return
		}
		var se *Error
		if errors.As(e, &se) {
			c := *se
			c.File, c.Line = where, 0
			out = append(out, &c)
			return
		}
		out = append(out, fmt.Errorf("%s: %w", where, e))
	}
	walk(err)
	if len(out) == 1 {
		return out[0]
	}
	return errors.Join(out...)
}

// errBadSet is wrapped by errors of malformed --set arguments.
var errBadSet = fmt.Errorf("%w: want KEY=VALUE", models.ErrConfig)

// ParseSet splits a KEY=VALUE argument.
func ParseSet(arg string) (key, value string, err error) {
	key, value, ok := strings.Cut(arg, "=")
	key = strings.TrimSpace(key)
	if !ok || key == "" {
		return "", "", fmt.Errorf("%w, got %q", errBadSet, arg)
	}
	return key, value, nil
}
