package nasemu

import (
	"os"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestComposeFile: contrib/container/compose.yaml parses and starts the
// image as README.md says a container must run: with /dev/fuse and
// SYS_ADMIN, the password from a secret, and only settings the entry
// point reads.
func TestComposeFile(t *testing.T) {
	b, err := os.ReadFile("contrib/container/compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Services map[string]struct {
			Build       struct{ Context string }
			Devices     []string
			CapAdd      []string          `yaml:"cap_add"`
			Environment map[string]string `yaml:"environment"`
			Secrets     []string
			Ports       []string
		}
		Secrets map[string]struct{ File string }
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	entry, err := os.ReadFile("contrib/container/entrypoint.sh")
	if err != nil {
		t.Fatal(err)
	}
	nas, ok := c.Services["nas"]
	switch {
	case !ok:
		t.Fatal("no service nas")
	case nas.Build.Context != "../..":
		t.Errorf("build context %q, want the repository's root", nas.Build.Context)
	case !slices.Contains(nas.Devices, "/dev/fuse") || !slices.Contains(nas.CapAdd, "SYS_ADMIN"):
		t.Errorf("devices %v, capabilities %v: FUSE needs /dev/fuse and SYS_ADMIN", nas.Devices, nas.CapAdd)
	case !slices.Contains(nas.Secrets, "nasemu_smb_password") || c.Secrets["nasemu_smb_password"].File == "":
		t.Errorf("secrets %v: the password must come from the secret nasemu_smb_password", nas.Secrets)
	}
	for k := range nas.Environment {
		if !strings.Contains(string(entry), "${"+k) {
			t.Errorf("environment %s: the entry point does not read it", k)
		}
	}
	if !slices.ContainsFunc(nas.Ports, func(p string) bool { return strings.HasSuffix(p, ":445") }) {
		t.Errorf("ports %v publish no SMB", nas.Ports)
	}
}
