package nasemu

import (
	"io/fs"
	"os"
	"testing"
)

// TestSetupsEmbedded checks that the embedded built-ins are exactly the
// files in testdata/setups and that a name and a path both load.
func TestSetupsEmbedded(t *testing.T) {
	embedded, err := fs.Glob(Setups, "*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	onDisk, err := fs.Glob(os.DirFS("testdata/setups"), "*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(embedded) == 0 || len(embedded) != len(onDisk) {
		t.Fatalf("%d embedded setups, %d on disk", len(embedded), len(onDisk))
	}
	for i := range embedded {
		if embedded[i] != onDisk[i] {
			t.Errorf("embedded %s, on disk %s", embedded[i], onDisk[i])
		}
	}
	if s, err := LoadSetup("ds1817-raid5-hdd-smb-1g"); err != nil || s.Name != "ds1817-raid5-hdd-smb-1g" {
		t.Errorf("by name: %v", err)
	}
	if s, err := LoadSetup("testdata/setups/rst001-raid5-wdse-local.yaml"); err != nil || s.Name != "rst001-raid5-wdse-local" {
		t.Errorf("by path: %v", err)
	}
}

// TestReferenceEmbedded checks that the embedded reference data is the
// source tree's, file for file and byte for byte.
func TestReferenceEmbedded(t *testing.T) {
	onDisk := os.DirFS("testdata/reference")
	want, err := fs.Glob(onDisk, "*")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, name := range want {
		if name == "README.md" {
			continue // documentation, not data
		}
		n++
		disk, err := fs.ReadFile(onDisk, name)
		if err != nil {
			t.Fatal(err)
		}
		emb, err := fs.ReadFile(Reference, name)
		if err != nil {
			t.Errorf("%s is not embedded: %v", name, err)
			continue
		}
		if string(emb) != string(disk) {
			t.Errorf("embedded %s differs from the source tree's", name)
		}
	}
	got, _ := fs.Glob(Reference, "*")
	if n == 0 || len(got) != n {
		t.Errorf("embedded %v, want the %d data files of testdata/reference", got, n)
	}
	if _, err := fs.Stat(Reference, ReferenceCases); err != nil {
		t.Error(err)
	}
}
