package setup

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// ErrNotFound is returned (wrapped) by Load when a name is neither a
// built-in setup nor a file.
var ErrNotFound = errors.New("no such setup")

// Load returns the setup that nameOrPath names: a path to a YAML file
// (anything with a '/' or a .yaml or .yml suffix), read with readFile
// (os.ReadFile, passed in because models do no I/O of their own), or else
// the name of a built-in setup in builtin (NAME.yaml at its root).
// readFile may be nil when only built-in names are acceptable.
func Load(nameOrPath string, builtin fs.FS, readFile func(string) ([]byte, error)) (*Setup, error) {
	if isPath(nameOrPath) {
		if readFile == nil {
			return nil, fmt.Errorf("%w: %s: reading setup files is not available here", ErrNotFound, nameOrPath)
		}
		data, err := readFile(nameOrPath)
		if err != nil {
			return nil, fmt.Errorf("setup %s: %w", nameOrPath, err)
		}
		return Parse(nameOrPath, data)
	}
	if builtin != nil {
		data, err := fs.ReadFile(builtin, nameOrPath+".yaml")
		if err == nil {
			return Parse(nameOrPath+".yaml", data)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("built-in setup %s: %w", nameOrPath, err)
		}
	}
	names, _ := Names(builtin)
	hint := ""
	if s := nearestName(nameOrPath, names); s != "" {
		hint = "did you mean " + s + "? "
	}
	return nil, fmt.Errorf("%w %q: not a built-in setup nor a path to a .yaml file (%s'nasemu presets setups' lists the %d built-ins)",
		ErrNotFound, nameOrPath, hint, len(names))
}

// isPath reports whether Load should read nameOrPath as a file.
func isPath(s string) bool {
	return strings.ContainsAny(s, `/\`) || strings.HasSuffix(s, ".yaml") || strings.HasSuffix(s, ".yml")
}

// Names returns the names of the built-in setups, sorted.
func Names(builtin fs.FS) ([]string, error) {
	if builtin == nil {
		return nil, nil
	}
	files, err := fs.Glob(builtin, "*.yaml")
	if err != nil {
		return nil, err
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = strings.TrimSuffix(path.Base(f), ".yaml")
	}
	sort.Strings(names)
	return names, nil
}

// List parses every built-in setup, sorted by name. A built-in that does
// not parse is an error: they are tested to.
func List(builtin fs.FS) ([]*Setup, error) {
	names, err := Names(builtin)
	if err != nil {
		return nil, err
	}
	out := make([]*Setup, 0, len(names))
	var errs []error
	for _, name := range names {
		s, err := Load(name, builtin, nil)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, s)
	}
	return out, errors.Join(errs...)
}
