package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	smb2 "github.com/hirochachacha/go-smb2"
	"github.com/nasemu/nasemu/fusefs"
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

// TestRobustNasPowerLoss is issue 20's first point behind smbd: an SMB
// client writes 1 MiB to a new file, the NAS loses power, and the client
// writes 1 MiB more through the same handle and flushes. smbd's
// descriptor of the file is stale, so the write or the flush fails — none
// is acknowledged while the file is gone — and a file opened after the
// loss is written and flushed as ever.
func TestRobustNasPowerLoss(t *testing.T) {
	needSamba(t)
	addr := freePort(t)
	info := startNas(t, nasArgs(t, "ds1817-raid5-hdd-smb-1g", addr))
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	d := &smb2.Dialer{Initiator: &smb2.NTLMInitiator{User: "root", Password: testSMBPassword}}
	sess, err := d.Dial(conn)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Logoff()
	share, err := sess.Mount("nas")
	if err != nil {
		t.Fatal(err)
	}
	defer share.Umount()

	fh, err := share.Create("f")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	mib := bytes.Repeat([]byte("x"), 1<<20)
	if _, err := fh.Write(mib); err != nil {
		t.Fatal(err)
	}
	if resp := info.FS.Control(fusefs.ControlRequest{Cmd: "power-loss"}); !resp.OK {
		t.Fatalf("power-loss: %s", resp.Error)
	}
	_, werr := fh.Write(mib)
	serr := fh.Sync()
	_, statErr := share.Stat("f")
	if werr == nil && serr == nil {
		t.Errorf("after a power loss, a write and a flush through an SMB handle opened before it succeeded (the file: %v)", statErr)
	}
	if serr == nil && statErr != nil {
		t.Errorf("a flush acknowledged after the power loss, and the file is gone: %v", statErr)
	}
	if !errors.Is(statErr, os.ErrNotExist) {
		t.Errorf("a file created and never flushed before the power loss: %v, want it gone", statErr)
	}

	g, err := share.Create("g")
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := g.Write(mib); err != nil {
		t.Fatalf("a write through a handle opened after the power loss: %v", err)
	}
	if err := g.Sync(); err != nil {
		t.Fatalf("a flush through a handle opened after the power loss: %v", err)
	}
}
