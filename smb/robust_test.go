package smb

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRobustSambaStateDir holds issue 20's symlink attack on the Samba
// harness: a state directory someone prepared (with smb.conf a symlink to
// a file of root's), or one in a directory another user owns, is refused
// before smbd starts, and the symlink's target is untouched.
func TestRobustSambaStateDir(t *testing.T) {
	if os.Geteuid() != 0 && os.Getenv("CI") != "true" {
		t.Skip("chown to another user needs root")
	}
	target := filepath.Join(t.TempDir(), "victim")
	const content = "root's file\n"
	if err := os.WriteFile(target, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	share := t.TempDir()

	prepared := filepath.Join(t.TempDir(), "samba")
	if err := os.Mkdir(prepared, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(prepared, "smb.conf")); err != nil {
		t.Fatal(err)
	}
	others := t.TempDir()
	if err := os.Chown(others, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	linked := t.TempDir()
	if err := os.Symlink(prepared, filepath.Join(linked, "samba")); err != nil {
		t.Fatal(err)
	}
	for name, dir := range map[string]string{
		"prepared":           prepared,
		"in another's dir":   filepath.Join(others, "samba"),
		"symlink to a dir":   filepath.Join(linked, "samba"),
		"symlinked smb.conf": filepath.Join(prepared, "smb.conf"),
	} {
		s, err := StartSamba(SambaConfig{Dir: dir, Path: share, Password: testPassword})
		if errors.Is(err, ErrNoSamba) {
			if os.Getenv("CI") == "true" {
				t.Fatal(err)
			}
			t.Skip(err)
		}
		if err == nil {
			s.Stop()
			t.Errorf("%s: StartSamba accepted %s", name, dir)
			continue
		}
		t.Logf("%s: %v", name, err)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != content {
		t.Errorf("the symlink's target was changed: %q, %v", b, err)
	}
}

// TestRobustSambaConfXattrs: DOS attributes, EAs and NT ACLs are turned
// off only for a share that keeps no xattrs.
func TestRobustSambaConfXattrs(t *testing.T) {
	off := []string{"store dos attributes = no\n", "ea support = no\n", "nt acl support = no\n"}
	with := SambaConf(SambaConfig{Dir: "/run/x", Path: "/srv/share", Password: "p"}, "127.0.0.1:4450")
	without := SambaConf(SambaConfig{Dir: "/run/x", Path: "/srv/share", Password: "p", NoXattrs: true}, "127.0.0.1:4450")
	for _, line := range off {
		if strings.Contains(with, line) {
			t.Errorf("smb.conf of a share with xattrs has %q", line)
		}
		if !strings.Contains(without, line) {
			t.Errorf("smb.conf of a share without xattrs lacks %q", line)
		}
	}
	if !hasXattrs(t.TempDir()) {
		t.Log("this host's temporary directory keeps no user xattrs")
	}
}
