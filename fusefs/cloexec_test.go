package fusefs

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/nasemu/nasemu/emu"
)

// TestRobustChildrenDoNotHoldTheShare: a program started after a mount
// (smbd, for 'nasemu nas') inherits no descriptor of /dev/fuse, so that
// the share fails at once when the emulator dies instead of hanging on a
// connection the child keeps open.
func TestRobustChildrenDoNotHoldTheShare(t *testing.T) {
	mountShare(t, freeModel(t, 1<<30), &emu.VirtualClock{}, "", Options{})
	out, err := exec.Command("sh", "-c", `ls -l /proc/$$/fd/`).Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "/dev/fuse") {
		t.Errorf("a child process holds /dev/fuse:\n%s", out)
	}
}
