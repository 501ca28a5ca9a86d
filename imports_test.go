package nasemu

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// module is this repository's module path.
const module = "github.com/nasemu/nasemu"

// allowedImports is the layering of DESIGN.md as a rule: for each package
// (a directory, and the directories below it unless they have a rule of
// their own), the packages of this module that its non-test files may
// import. A package may always import the packages under its own rule.
// Models are pure and import only models; the emulator imports models; the
// fronts import the emulator and models, and the bench targets the bench
// engine they plug into; serve runs a NAS over the fronts; only the command
// wires everything together.
var allowedImports = map[string][]string{
	".":               {"models"},
	"internal":        {"models"},
	"models":          {"models"},
	"emu":             {"models"},
	"fusefs":          {"emu", "models"},
	"iscsi":           {"bench", "emu", "models"},
	"smb":             {"bench", "models", "rundir"},
	"rundir":          {},
	"serve":           {"emu", "fusefs", "iscsi", "models", "smb"},
	"bench":           {"models"},
	"report":          {"bench", "models"},
	"validate":        {"bench", "models"},
	"sweep":           {"bench", "models", "report"},
	"cmd":             {"*"},
	"scripts":         {"*"},
	"models/timeline": {},
}

// TestImportLayering fails when a package imports one that the layering
// does not allow (a model reaching for the emulator, the bench engine for a
// front, anything for cmd), naming the file and the import.
func TestImportLayering(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); p != "." && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(p))
		rule, allowed := ruleFor(dir)
		for _, imp := range f.Imports {
			ip := strings.Trim(imp.Path.Value, `"`)
			if ip != module && !strings.HasPrefix(ip, module+"/") {
				continue
			}
			rel := strings.TrimPrefix(strings.TrimPrefix(ip, module), "/")
			if rel == "" {
				rel = "."
			}
			checked++
			if !importAllowed(rule, rel, allowed) {
				t.Errorf("%s imports %s: package %s (rule %q) may import only %v and the packages of its own rule",
					p, ip, dir, rule, allowed)
			}
			if strings.HasPrefix(rel, "cmd") && !strings.HasPrefix(dir, "cmd") {
				t.Errorf("%s imports %s: nothing imports the command", p, ip)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked == 0 {
		t.Fatal("no imports of this module found: is the walk in the module root?")
	}
}

// ruleFor returns the rule that governs dir: its own, or that of its
// nearest ancestor that has one.
func ruleFor(dir string) (string, []string) {
	for d := dir; ; d = path.Dir(d) {
		if a, ok := allowedImports[d]; ok {
			return d, a
		}
		if d == "." || d == "/" {
			break
		}
	}
	keys := make([]string, 0, len(allowedImports))
	for k := range allowedImports {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	panic("no import rule for " + dir + " (rules: " + strings.Join(keys, ", ") + ")")
}

// importAllowed reports whether a package governed by rule may import rel
// (both module-relative).
func importAllowed(rule, rel string, allowed []string) bool {
	if rule != "." && (rel == rule || strings.HasPrefix(rel, rule+"/")) {
		return true // a package of its own rule (emu/storetest imports emu)
	}
	for _, a := range allowed {
		if a == "*" || rel == a || (a != "." && strings.HasPrefix(rel, a+"/")) {
			return true
		}
	}
	return false
}
