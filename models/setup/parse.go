package setup

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/nasemu/nasemu/models"
)

// Error is one mistake in a setup file: where it is and what is wrong.
// Parse returns every mistake it finds, joined (errors.Join); each one is an
// *Error, so errors.As finds the first. Every Error also matches
// models.ErrConfig under errors.Is.
type Error struct {
	File string // file name as given to Parse
	Line int    // 1-based line; 0 when the mistake has no single place (an empty file)
	Key  string // dotted path of the key, e.g. "raid.level" or "drives[1].count"; "" for syntax errors
	Msg  string

	unknown bool // an unknown key or name: wrong whatever else the setup says
}

// Error formats the mistake as file:line: key: message.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
	}
	b.WriteString(": ")
	if e.Key != "" {
		b.WriteString(e.Key + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Is makes every setup error match models.ErrConfig, and an unknown key
// or name (a misspelt key, a drive the catalog lacks, raid7) match
// ErrUnknown as well.
func (e *Error) Is(target error) bool {
	return target == models.ErrConfig || target == ErrUnknown && e.unknown
}

// ErrUnknown is matched by the errors of keys the schema lacks, names the
// catalog lacks and values outside a key's choices: mistakes no other key
// of the setup can make right, as a combination of keys can be.
var ErrUnknown = errors.New("unknown key or name")

// maxErrors bounds how many mistakes one Parse reports: past a few, the
// rest are usually echoes of the first.
const maxErrors = 20

// maxAliases bounds alias expansion so that a small file cannot expand to
// an enormous tree ("billion laughs").
const maxAliases = 1000

// parser walks a yaml.Node tree and collects positioned errors.
type parser struct {
	file    string
	errs    []error
	aliases int
}

// errorf records a mistake at node n (nil: no position) under key.
func (p *parser) errorf(n *yaml.Node, key, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	}
	if len(p.errs) < maxErrors {
		p.errs = append(p.errs, &Error{File: p.file, Line: line, Key: key, Msg: fmt.Sprintf(format, args...),
			unknown: strings.HasPrefix(format, "unknown ")})
	}
}

// failed reports whether any mistake has been recorded.
func (p *parser) failed() bool { return len(p.errs) > 0 }

// err returns the recorded mistakes, or nil.
func (p *parser) err() error {
	switch len(p.errs) {
	case 0:
		return nil
	case 1:
		return p.errs[0]
	}
	return errors.Join(p.errs...)
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// document parses data into the root mapping node of its single document.
// It returns nil (with an error recorded) when there is nothing to walk.
func (p *parser) document(data []byte) *yaml.Node {
	if len(bytes.TrimSpace(data)) == 0 {
		p.errorf(nil, "", "empty setup file (want a mapping with at least a drives: key)")
		return nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	switch err := dec.Decode(&doc); {
	case err == io.EOF: // only comments
		p.errorf(nil, "", "empty setup file (want a mapping with at least a drives: key)")
		return nil
	case err != nil:
		p.syntax(err)
		return nil
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == io.EOF:
	case err != nil:
		p.syntax(err)
		return nil
	default:
		p.errorf(&extra, "", "a setup file holds one YAML document; found a second one")
		return nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		p.errorf(nil, "", "empty setup file (want a mapping with at least a drives: key)")
		return nil
	}
	root := p.resolve(doc.Content[0])
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" {
		p.errorf(root, "", "empty setup file (want a mapping with at least a drives: key)")
		return nil
	}
	if root.Kind != yaml.MappingNode {
		p.errorf(root, "", "want a mapping of setup keys, got %s", describe(root))
		return nil
	}
	return root
}

// syntax records a YAML syntax error. yaml.v3 omits the line when the
// mistake is on the first line, so a missing line means line 1; and it
// gives parser errors ("did not find expected ...") the 0-based line of the
// construct left open, which is one less than the line a person counts.
func (p *parser) syntax(err error) {
	msg := err.Error()
	line := 1
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
		if strings.HasPrefix(msg, "did not find expected") {
			line++
		}
	} else {
		msg = strings.TrimPrefix(msg, "yaml: ")
	}
	if len(p.errs) < maxErrors {
		p.errs = append(p.errs, &Error{File: p.file, Line: line, Msg: "syntax error: " + msg})
	}
}

// resolve follows aliases, counting them against maxAliases.
func (p *parser) resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		p.aliases++
		if p.aliases > maxAliases {
			p.errorf(n, "", "too many alias expansions (more than %d)", maxAliases)
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Line: n.Line, Column: n.Column}
		}
		n = n.Alias
	}
	return n
}

// describe names a node's kind for "want X, got Y" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return strconv.Quote(n.Value)
	}
	return "an unexpected node"
}

// join makes the dotted path of a child key.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// field is one key of a mapping the parser knows, with what to do with its
// value.
type field struct {
	name string
	fn   func(value *yaml.Node, path string)
}

// pair is a key and its (alias-resolved) value.
type pair struct {
	key, value *yaml.Node
}

// pairs returns a mapping's keys and values, recording duplicate and
// non-string keys. It returns nil, with an error recorded, when n is not a
// mapping.
func (p *parser) pairs(n *yaml.Node, path string) []pair {
	n = p.resolve(n)
	if n.Kind != yaml.MappingNode {
		p.errorf(n, path, "want a mapping, got %s", describe(n))
		return nil
	}
	out := make([]pair, 0, len(n.Content)/2)
	seen := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := p.resolve(n.Content[i]), p.resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			p.errorf(k, path, "a key must be a plain name, got %s", describe(k))
			continue
		}
		if k.Value == "<<" {
			p.errorf(k, join(path, k.Value), "merge keys are not supported; write the keys out")
			continue
		}
		if line, dup := seen[k.Value]; dup {
			p.errorf(k, join(path, k.Value), "duplicate key (first set at line %d)", line)
			continue
		}
		seen[k.Value] = k.Line
		out = append(out, pair{k, v})
	}
	return out
}

// mapping walks a mapping whose keys are all known in advance: each key's
// value goes to its field's function; an unknown key is an error naming the
// known ones.
func (p *parser) mapping(n *yaml.Node, path string, fields []field) {
	for _, kv := range p.pairs(n, path) {
		found := false
		for _, f := range fields {
			if f.name == kv.key.Value {
				f.fn(kv.value, join(path, f.name))
				found = true
				break
			}
		}
		if !found {
			names := make([]string, len(fields))
			for i, f := range fields {
				names[i] = f.name
			}
			p.unknownKey(kv.key, path, names)
		}
	}
}

// unknownKey records an unknown key, suggesting the nearest known one.
func (p *parser) unknownKey(k *yaml.Node, path string, known []string) {
	if s := nearest(k.Value, known); s != "" {
		p.errorf(k, join(path, k.Value), "unknown key (did you mean %s?)", s)
		return
	}
	p.errorf(k, join(path, k.Value), "unknown key (want %s)", strings.Join(known, ", "))
}

// nearest returns the known name within edit distance 2 of s, if one is.
func nearest(s string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := editDistance(strings.ToLower(s), k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// nearestName returns the catalog name closest to s: within a third of
// its length in edits (catalog names are long and differ in a digit or
// two: wd-red-2tb for wd-red-1tb).
func nearestName(s string, known []string) string {
	best, bestD := "", len(s)/3+1
	for _, k := range known {
		if d := editDistance(strings.ToLower(s), k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of two short strings.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// scalar returns n's value when it is a non-null scalar, recording an error
// naming want otherwise.
func (p *parser) scalar(n *yaml.Node, path, want string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		p.errorf(n, path, "want %s, got %s", want, describe(n))
		return "", false
	}
	return n.Value, true
}

// str decodes any scalar as a string (a name of 123 is the string "123").
func (p *parser) str(n *yaml.Node, path string, out *string) {
	if v, ok := p.scalar(n, path, "a string"); ok {
		*out = v
	}
}

// text decodes a free-text value: a string, or a list of strings joined by
// newlines (for notes: written as bullet points).
func (p *parser) text(n *yaml.Node, path string, out *string) {
	if n.Kind != yaml.SequenceNode {
		p.str(n, path, out)
		return
	}
	var lines []string
	for i, item := range n.Content {
		var s string
		p.str(p.resolve(item), fmt.Sprintf("%s[%d]", path, i), &s)
		lines = append(lines, s)
	}
	*out = strings.Join(lines, "\n")
}

// integer decodes a whole number from lo to hi.
func (p *parser) integer(n *yaml.Node, path string, lo, hi int, out *int) {
	v, ok := p.scalar(n, path, "a whole number")
	if !ok {
		return
	}
	i, err := strconv.Atoi(v)
	if err != nil {
		p.errorf(n, path, "want a whole number, got %q", v)
		return
	}
	if i < lo {
		p.errorf(n, path, "must be at least %d, got %d", lo, i)
		return
	}
	if i > hi {
		p.errorf(n, path, "must be at most %d, got %d", hi, i)
		return
	}
	*out = i
}

// boolean decodes true or false (not YAML 1.1's yes/no/on/off).
func (p *parser) boolean(n *yaml.Node, path string, out *bool) {
	v, ok := p.scalar(n, path, "true or false")
	if !ok {
		return
	}
	switch v {
	case "true":
		*out = true
	case "false":
		*out = false
	default:
		p.errorf(n, path, "want true or false, got %q", v)
	}
}

// size decodes a byte size with a unit ("8GiB", "64 KiB", "1.5TB").
func (p *parser) size(n *yaml.Node, path string, out *models.Bytes) {
	v, ok := p.scalar(n, path, "a size such as 64KiB or 8GiB")
	if !ok {
		return
	}
	b, err := models.ParseBytes(v)
	if err != nil {
		p.errorf(n, path, "%v", err)
		return
	}
	*out = b
}

// percent decodes a percentage written with a % sign ("7%", "0%", "12.5%")
// into a fraction.
func (p *parser) percent(n *yaml.Node, path string, out *float64) {
	v, ok := p.scalar(n, path, "a percentage such as 7%")
	if !ok {
		return
	}
	num, isPct := strings.CutSuffix(strings.TrimSpace(v), "%")
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if !isPct || err != nil || f < 0 || f >= 100 {
		p.errorf(n, path, "want a percentage from 0%% to below 100%% such as 7%%, got %q", v)
		return
	}
	*out = f / 100
}

// enum decodes one of a fixed list of words.
func (p *parser) enum(n *yaml.Node, path, what string, known []string, out *string) {
	v, ok := p.scalar(n, path, "one of "+strings.Join(known, ", "))
	if !ok {
		return
	}
	for _, k := range known {
		if v == k {
			*out = v
			return
		}
	}
	p.errorf(n, path, "unknown %s %q (want %s)", what, v, strings.Join(known, ", "))
}
