package validate_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/nasemu/nasemu"
	"github.com/nasemu/nasemu/validate"
)

// TestCalibrations holds the registry to its contract: every calibration
// names a review of the reference data and rows of that review, the code
// that defines it says "calibrated: NAME" (so that grep finds it), and
// switching it off changes the setup of at least one of its rows (a
// leave-out run would otherwise predict with the fitted value).
func TestCalibrations(t *testing.T) {
	cases := loadReference(t)
	var src strings.Builder
	err := filepath.WalkDir(filepath.Join("..", "models"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		b, err := os.ReadFile(p)
		src.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range validate.Calibrations() {
		if seen[c.Name] {
			t.Errorf("%s: registered twice", c.Name)
		}
		seen[c.Name] = true
		if c.Class == "" || c.Fitted == "" || c.Default == "" || c.Off == nil {
			t.Errorf("%s: class, fitted and default value and Off are all needed: %+v", c.Name, c)
		}
		if !strings.Contains(src.String(), "calibrated: "+c.Name) {
			t.Errorf("%s: no \"calibrated: %s\" comment in models", c.Name, c.Name)
		}
		if !slices.Contains(validate.Reviews(cases), c.Review) {
			t.Errorf("%s: review %q is not in the reference data", c.Name, c.Review)
		}
		var rows []validate.Case
		for _, k := range cases {
			if c.Matches(k.ID) && k.Modelled() {
				if k.Review() != c.Review {
					t.Errorf("%s: row %s is not review %s's", c.Name, k.ID, c.Review)
				}
				rows = append(rows, k)
			}
		}
		if len(rows) == 0 {
			t.Errorf("%s: its rows %v match no modelled case", c.Name, c.Rows)
			continue
		}
		changed := false
		for _, k := range rows {
			name, _, _ := strings.Cut(k.Setup, "@")
			s, err := nasemu.LoadSetup(name)
			if err != nil {
				t.Fatal(err)
			}
			before, _ := nasemu.LoadSetup(name)
			c.Off(s)
			if !reflect.DeepEqual(s, before) {
				changed = true
				break
			}
		}
		if !changed {
			t.Errorf("%s: switching it off changes the setup of none of its rows", c.Name)
		}
	}
}
