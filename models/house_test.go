package models_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestHouseRules enforces DESIGN.md's model contract on every non-test file
// under models/: models are pure and deterministic, so they never read the
// wall clock, sleep, start goroutines, do I/O or use math/rand's global
// source.
func TestHouseRules(t *testing.T) {
	forbiddenImports := map[string]string{
		"os":        "models do no I/O",
		"net":       "models do no I/O",
		"io/ioutil": "models do no I/O",
		"math/rand": "use math/rand/v2 with a seeded source owned by the component",
		"log":       "models do not log",
		"log/slog":  "models do not log",
	}
	forbiddenCalls := map[string]string{
		"time.Now": "models never read the wall clock", "time.Since": "models never read the wall clock",
		"time.Until": "models never read the wall clock", "time.Sleep": "models never sleep",
		"time.After": "models have no timers", "time.AfterFunc": "models have no timers",
		"time.NewTimer": "models have no timers", "time.NewTicker": "models have no timers",
		"time.Tick": "models have no timers",
	}
	// Top-level functions of math/rand/v2 use the global source.
	globalRand := map[string]bool{
		"Int": true, "IntN": true, "Int32": true, "Int32N": true, "Int64": true, "Int64N": true,
		"Uint32": true, "Uint32N": true, "Uint64": true, "Uint64N": true, "UintN": true, "Uint": true,
		"Float32": true, "Float64": true, "Perm": true, "Shuffle": true, "NormFloat64": true, "ExpFloat64": true, "N": true,
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		names := map[string]string{} // local name → import path
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if why, bad := forbiddenImports[p]; bad {
				t.Errorf("%s imports %q: %s", fset.Position(imp.Pos()), p, why)
			}
			name := p[strings.LastIndex(p, "/")+1:]
			if p == "math/rand/v2" {
				name = "rand"
			}
			if imp.Name != nil {
				name = imp.Name.Name
			}
			names[name] = p
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s: go statement: models have no goroutines", fset.Position(n.Pos()))
			case *ast.SelectorExpr:
				id, ok := n.X.(*ast.Ident)
				if !ok {
					return true
				}
				switch names[id.Name] {
				case "time":
					if why, bad := forbiddenCalls["time."+n.Sel.Name]; bad {
						t.Errorf("%s: time.%s: %s", fset.Position(n.Pos()), n.Sel.Name, why)
					}
				case "math/rand/v2":
					if globalRand[n.Sel.Name] {
						t.Errorf("%s: rand.%s uses the global source: use the component's seeded *rand.Rand", fset.Position(n.Pos()), n.Sel.Name)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
