// Package nasemu ships the built-in setups: the YAML files under
// testdata/setups, embedded so that the nasemu command and tests can name
// them (sim:ds1817-raid5-hdd-smb-1g) without the source tree.
package nasemu

import (
	"embed"
	"io"
	"io/fs"
	"os"

	"github.com/nasemu/nasemu/models/setup"
)

//go:embed testdata/setups/*.yaml
var setupFiles embed.FS

// Setups holds the built-in setup files, NAME.yaml at its root.
var Setups fs.FS = func() fs.FS {
	sub, err := fs.Sub(setupFiles, "testdata/setups")
	if err != nil {
		panic(err) // the directory is embedded above
	}
	return sub
}()

// LoadSetup returns a built-in setup by name, or parses the YAML file at a
// path (anything with a '/' or a .yaml suffix).
func LoadSetup(nameOrPath string) (*setup.Setup, error) {
	return setup.Load(nameOrPath, Setups, readSetup)
}

// readSetup reads a setup file, stopping one byte past
// setup.MaxFileSize: Parse refuses a file that long, which need not be
// read whole (nor a FIFO or device file read to its end) to know it.
func readSetup(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, setup.MaxFileSize+1))
}
