package setup

import (
	"encoding"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// This file decodes a YAML mapping into another package's typed Config
// struct (ssd.Config, raid.Config, nas.Config, ...), as strictly as the
// rest of the setup: every key must name a field, every value must have
// the field's type, and errors carry the line and the dotted key. Only the
// keys present are set, so decoding over a copy of a catalog entry
// overrides just those fields (the base: key).
//
// Field names follow yaml.v3: the name in the `yaml:"..."` tag, or the
// lower-cased Go name; `,inline` structs lend their fields to the parent;
// `yaml:"-"` fields cannot be set.

var (
	durationType        = reflect.TypeFor[time.Duration]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	yamlUnmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()
)

// structField is one settable field of a config struct, reached through an
// index path (for inline structs).
type structField struct {
	name  string
	index []int
}

// structFields lists the YAML keys of struct type t in declaration order.
func structFields(t reflect.Type) []structField {
	var out []structField
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		inline := false
		for _, o := range strings.Split(opts, ",") {
			inline = inline || o == "inline"
		}
		if inline && f.Type.Kind() == reflect.Struct {
			for _, sub := range structFields(f.Type) {
				out = append(out, structField{sub.name, append([]int{i}, sub.index...)})
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out = append(out, structField{name, []int{i}})
	}
	return out
}

// fieldNames returns the YAML keys of struct type t.
func fieldNames(t reflect.Type) []string {
	fs := structFields(t)
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.name
	}
	return names
}

// structPairs sets the fields of the struct v (addressable) from pairs.
//
// def, when valid, is v's type with every default applied to a zero
// value: the config types take a zero field to mean "the default", so a
// number written as 0 where the default is not 0 (raid.chunk: 0, nas.ram:
// 0) would silently become the default. Such a zero is an error naming
// the key; a key whose default is 0 itself (cache.capacity, rebuild_mbps)
// takes 0.
func (p *parser) structPairs(pairs []pair, path string, v, def reflect.Value) {
	fields := structFields(v.Type())
	for _, kv := range pairs {
		found := false
		for _, f := range fields {
			if f.name == kv.key.Value {
				fv := v.FieldByIndex(f.index)
				var fdef reflect.Value
				if def.IsValid() {
					fdef = def.FieldByIndex(f.index)
				}
				before := len(p.errs)
				p.value(kv.value, join(path, f.name), fv, fdef)
				if len(p.errs) == before && zeroForDefault(fv, fdef) {
					p.errorf(kv.value, join(path, f.name), "must not be 0 (leave the key out for the default, %v)", fdef.Interface())
				}
				found = true
				break
			}
		}
		if !found {
			p.unknownKey(kv.key, path, fieldNames(v.Type()))
		}
	}
}

// zeroForDefault reports whether v is a number that is 0 where its
// default def is not: a value the config would replace by the default.
func zeroForDefault(v, def reflect.Value) bool {
	if !def.IsValid() {
		return false
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return v.IsZero() && !def.IsZero()
	}
	return false
}

// value decodes node n into v (addressable), by v's type; def is v's
// default (see structPairs), or invalid where none is known.
func (p *parser) value(n *yaml.Node, path string, v, def reflect.Value) {
	n = p.resolve(n)
	t := v.Type()
	if reflect.PointerTo(t).Implements(yamlUnmarshalerType) {
		if err := n.Decode(v.Addr().Interface()); err != nil {
			p.errorf(n, path, "%s", strings.TrimPrefix(err.Error(), "yaml: "))
		}
		return
	}
	if t == durationType {
		s, ok := p.scalar(n, path, "a duration such as 5ms or 1.5us")
		if !ok {
			return
		}
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			p.errorf(n, path, "want a non-negative duration with a unit such as 5ms or 1.5us, got %q", s)
			return
		}
		v.SetInt(int64(d))
		return
	}
	if reflect.PointerTo(t).Implements(textUnmarshalerType) {
		s, ok := p.scalar(n, path, "a value")
		if !ok {
			return
		}
		if err := v.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s)); err != nil {
			p.errorf(n, path, "%v", err)
		}
		return
	}
	switch t.Kind() {
	case reflect.Bool:
		var b bool
		before := len(p.errs)
		p.boolean(n, path, &b)
		if len(p.errs) == before {
			v.SetBool(b)
		}
	case reflect.String:
		var s string
		before := len(p.errs)
		p.str(n, path, &s)
		if len(p.errs) == before {
			v.SetString(s)
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		s, ok := p.scalar(n, path, "a whole number")
		if !ok {
			return
		}
		i, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, t.Bits())
		if err != nil {
			p.errorf(n, path, "want a whole number, got %q", s)
			return
		}
		v.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		s, ok := p.scalar(n, path, "a whole number")
		if !ok {
			return
		}
		u, err := strconv.ParseUint(strings.ReplaceAll(s, "_", ""), 10, t.Bits())
		if err != nil {
			p.errorf(n, path, "want a non-negative whole number, got %q", s)
			return
		}
		v.SetUint(u)
	case reflect.Float32, reflect.Float64:
		s, ok := p.scalar(n, path, "a number")
		if !ok {
			return
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), t.Bits())
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			p.errorf(n, path, "want a number, got %q", s)
			return
		}
		v.SetFloat(f)
	case reflect.Struct:
		p.structPairs(p.pairs(n, path), path, v, def)
	case reflect.Pointer:
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			v.SetZero()
			return
		}
		if v.IsNil() {
			v.Set(reflect.New(t.Elem()))
		}
		p.value(n, path, v.Elem(), reflect.Value{})
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			p.errorf(n, path, "want a list, got %s", describe(n))
			return
		}
		s := reflect.MakeSlice(t, len(n.Content), len(n.Content))
		for i, item := range n.Content {
			p.value(item, fmt.Sprintf("%s[%d]", path, i), s.Index(i), reflect.Value{})
		}
		v.Set(s)
	case reflect.Array:
		if n.Kind != yaml.SequenceNode || len(n.Content) != v.Len() {
			p.errorf(n, path, "want a list of %d values, got %s", v.Len(), describe(n))
			return
		}
		for i, item := range n.Content {
			p.value(item, fmt.Sprintf("%s[%d]", path, i), v.Index(i), reflect.Value{})
		}
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			p.errorf(n, path, "cannot be set from a setup file (%s)", t)
			return
		}
		pairs := p.pairs(n, path)
		if pairs == nil && n.Kind != yaml.MappingNode {
			return
		}
		m := reflect.MakeMapWithSize(t, len(pairs))
		for _, kv := range pairs {
			e := reflect.New(t.Elem()).Elem()
			p.value(kv.value, join(path, kv.key.Value), e, reflect.Value{})
			m.SetMapIndex(reflect.ValueOf(kv.key.Value).Convert(t.Key()), e)
		}
		v.Set(m)
	default:
		p.errorf(n, path, "cannot be set from a setup file (%s)", t)
	}
}
