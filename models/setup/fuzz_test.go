package setup

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds Parse mutations of the built-in and malformed setups. It
// must never panic, and whatever it accepts must expand to a form that
// parses back to the same setup.
func FuzzParse(f *testing.F) {
	for _, pattern := range []string{"../../testdata/setups/*.yaml", "../../testdata/setups-bad/*.yaml", "testdata/*.yaml"} {
		files, _ := filepath.Glob(pattern)
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data)
		if err != nil {
			return
		}
		y, err := s.YAML()
		if err != nil {
			t.Fatalf("accepted setup does not render: %v", err)
		}
		back, err := Parse("fuzz.yaml", y)
		if err != nil {
			t.Fatalf("expanded form does not parse: %v\n%s", err, y)
		}
		y2, err := back.YAML()
		if err != nil || !bytes.Equal(y, y2) {
			t.Fatalf("expanded form changes: %v\n%s\n---\n%s", err, y, y2)
		}
	})
}
