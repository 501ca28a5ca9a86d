package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRobustLUNInUse is issue 20's fifth point for LUN files: while
// 'nasemu iscsi' serves a LUN file, neither a second 'nasemu iscsi' nor
// 'nasemu nas --lun' of the same file starts; each says who holds it.
func TestRobustLUNInUse(t *testing.T) {
	lun := filepath.Join(t.TempDir(), "lun.img")
	startISCSI(t, "--setup", "free", "--size", "64MiB", "--backing", lun)
	holder := fmt.Sprintf("in use by this process (PID %d)", os.Getpid())
	for _, args := range [][]string{
		{"iscsi", "--setup", "free", "--size", "64MiB", "--backing", lun, "--listen", "127.0.0.1:0"},
		{"nas", "--setup", "ds1817-raid5-hdd-smb-1g", "--iscsi", "127.0.0.1:0", "--lun", lun, "--lun-size", "64MiB"},
	} {
		var out bytes.Buffer
		if code := run(args, &out, &out); code == 0 || !strings.Contains(out.String(), holder) {
			t.Errorf("nasemu %s of a LUN file another emulator serves: exit %d, output %q; want a failure naming the holder (%s)", args[0], code, out.String(), holder)
		}
	}
}
