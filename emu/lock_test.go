package emu_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nasemu/nasemu/emu"
)

// TestRobustFileStoreLock: a LUN file is served by one store at a time (issue
// 20, fifth point). A second open, in this process or while another
// process holds the file, is refused with an error naming the holder;
// after Close, or the holder's end, the file is free again.
func TestRobustFileStoreLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "lun.img")
	s, err := emu.OpenFileStore(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	_, err = emu.OpenFileStore(path, 1<<20)
	var inUse *emu.InUseError
	if !errors.As(err, &inUse) || !errors.Is(err, emu.ErrInUse) || inUse.PID != os.Getpid() {
		t.Fatalf("a second store of an open file: %v, want an in-use error naming this process", err)
	}
	s.Close()
	if s, err = emu.OpenFileStore(path, 1<<20); err != nil {
		t.Fatalf("a store of the file after the first closed: %v", err)
	}
	s.Close()

	// Another process holds it (flock(1), as another emulator would).
	if _, err := exec.LookPath("flock"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no flock(1) (Debian package util-linux) on this CI host")
		}
		t.Skip("no flock(1) (Debian package util-linux) to hold the file from another process")
	}
	holder := exec.Command("flock", "--exclusive", path, "sh", "-c", "echo locked; exec sleep 60")
	holder.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // flock and its sleep, killed together
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	kill := func() { syscall.Kill(-holder.Process.Pid, syscall.SIGKILL); holder.Wait() }
	t.Cleanup(kill)
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "locked\n" {
		t.Fatalf("flock: %q", line)
	}
	_, err = emu.OpenFileStore(path, 1<<20)
	if want := fmt.Sprintf("process %d (flock", holder.Process.Pid); !errors.As(err, &inUse) || !strings.Contains(err.Error(), want) {
		t.Fatalf("a store of a file another process holds: %v, want an in-use error naming %s...)", err, want)
	}
	kill()
	// Its sleep, which holds the lock too, may outlive it by a moment.
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if s, err = emu.OpenFileStore(path, 1<<20); !errors.Is(err, emu.ErrInUse) {
			break
		}
	}
	if err != nil {
		t.Fatalf("a store of the file after its holder ended: %v", err)
	}
	s.Close()
}
