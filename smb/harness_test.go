package smb

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// testPassword is the test server's password: distinctive, so that a test
// can look for it in every output.
const testPassword = "pw-Zq7vXk2Lr9"

// testServer is a Samba server started for one test.
type testServer struct {
	*Samba
	dir string // the shared directory
}

// startSamba starts a private smbd sharing a fresh directory and stops it
// at the test's end. Without smbd (or without root, which smbd needs) the
// test is skipped, except in CI (CI=true), where that is a failure: CI
// must install the samba and smbclient packages and run as root.
func startSamba(t *testing.T) *testServer {
	t.Helper()
	need := func(why string) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("Samba test server unavailable in CI: %s", why)
		}
		t.Skipf("Samba test server unavailable: %s", why)
	}
	if os.Geteuid() != 0 {
		need("smbd must run as root")
	}
	base := t.TempDir()
	share := filepath.Join(base, "share")
	if err := os.Mkdir(share, 0o777); err != nil {
		t.Fatal(err)
	}
	s, err := StartSamba(SambaConfig{Dir: filepath.Join(base, "samba"), Path: share, Password: testPassword})
	if errors.Is(err, ErrNoSamba) {
		need(err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("smbd's log:\n%s", s.logTail())
		}
	})
	return &testServer{Samba: s, dir: share}
}

// urlWithPassword returns the target address with the password inline.
func (s *testServer) urlWithPassword(dir string) string {
	return "smb://" + s.User() + ":" + testPassword + "@" + s.Addr() + "/" + s.Share() + dir
}
