package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nasemu/nasemu/fusefs"
)

// readmeCommands returns the shell commands of README.md's sh blocks, one
// per logical line (continuations joined, comments dropped).
func readmeCommands(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cmds []string
	in, cont := false, ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "```sh"):
			in = true
			continue
		case strings.HasPrefix(l, "```"):
			in = false
			continue
		case !in:
			continue
		}
		if i := strings.Index(l, " #"); i >= 0 {
			l = l[:i]
		}
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "#") {
			continue
		}
		if strings.HasSuffix(l, "\\") {
			cont += strings.TrimSuffix(l, "\\") + " "
			continue
		}
		if l = strings.TrimSpace(cont + l); l != "" {
			cmds = append(cmds, l)
		}
		cont = ""
	}
	return cmds
}

// TestREADMECommands runs the README's commands for an emulated share,
// a whole NAS and an iSCSI target as written: 'mount', 'ctl status',
// 'umount', 'nas' with the password exported as shown, 'bench' against
// its share and LUN, 'iscsi' and 'bench' against it. What the test
// changes: the paths (/srv, /mnt) are in a directory of its own, the
// ports are free ones, 'go run ./cmd/nasemu' is this binary, and the
// bench runs are shortened (--runtime, --size).
func TestREADMECommands(t *testing.T) {
	requireFuse(t)
	needSamba(t)
	needLibiscsi(t)
	root := t.TempDir()
	for _, d := range []string{"srv/share", "mnt/nas"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	smbPort, iscsiPort := portOf(t), portOf(t)
	env := map[string]string{}
	// args turns a README line into this binary's arguments, or nil for
	// a line this test does not run.
	args := func(line string) []string {
		line = strings.NewReplacer("/srv/", root+"/srv/", "/mnt/", root+"/mnt/",
			"127.0.0.1:4450", "127.0.0.1:"+smbPort, "127.0.0.1:3260", "127.0.0.1:"+iscsiPort).Replace(line)
		f := strings.Fields(line)
		for len(f) > 0 && (f[0] == "sudo" || f[0] == "-E") {
			f = f[1:]
		}
		for len(f) > 0 && strings.Contains(f[0], "=") {
			f = f[1:] // VAR=value before the command: set by export in the README too
		}
		if len(f) < 4 || f[0] != "go" || f[1] != "run" || f[2] != "./cmd/nasemu" {
			return nil
		}
		return f[3:]
	}
	find := func(prefix string, contains ...string) []string {
		t.Helper()
	next:
		for _, c := range readmeCommands(t) {
			a := args(c)
			if a == nil || !strings.HasPrefix(strings.Join(a, " "), prefix) {
				continue
			}
			for _, s := range contains {
				if !strings.Contains(c, s) {
					continue next
				}
			}
			return a
		}
		t.Fatalf("README.md shows no 'nasemu %s' command (with %q)", prefix, contains)
		return nil
	}
	for _, c := range readmeCommands(t) {
		if k, v, ok := strings.Cut(strings.TrimPrefix(c, "export "), "="); ok && strings.HasPrefix(c, "export NASEMU_") {
			env[k] = v
		}
	}
	if env["NASEMU_SMB_PASSWORD"] == "" {
		t.Fatal("README.md exports no NASEMU_SMB_PASSWORD before its nas command")
	}
	runtimeDir := t.TempDir()
	start := func(a []string) (*exec.Cmd, *syncBuffer) {
		t.Helper()
		cmd, out := startNasemu(t, runtimeDir, a...)
		return cmd, out
	}
	short := []string{"--runtime", "200ms", "--size", "16MiB"}
	oneShot := func(a []string, extra ...string) {
		t.Helper()
		c := exec.Command(os.Args[0], append(a, extra...)...)
		c.Env = append(os.Environ(), mainEnv+"=1", "XDG_RUNTIME_DIR="+runtimeDir)
		for k, v := range env {
			c.Env = append(c.Env, k+"="+v)
		}
		out, err := c.CombinedOutput()
		t.Logf("nasemu %s:\n%s", strings.Join(a, " "), out)
		if err != nil {
			t.Fatalf("nasemu %s: %v", strings.Join(a, " "), err)
		}
	}
	stop := func(cmd *exec.Cmd, out *syncBuffer) {
		t.Helper()
		if cmd.ProcessState == nil {
			cmd.Process.Signal(os.Interrupt)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("nasemu %s: %v\n%s", strings.Join(cmd.Args[1:], " "), err, out)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("nasemu %s does not stop", strings.Join(cmd.Args[1:], " "))
			}
		}
	}

	// The emulated share: mount, ctl status, umount.
	mountArgs := find("mount ")
	mnt := mountArgs[len(mountArgs)-1]
	cmd, out := start(mountArgs)
	// Up once it says so (after the mount it measures the host's FUSE
	// round trip through the share, which holds a file open on it).
	waitFor(t, fmt.Sprintf("the share at %s", mnt), out, func() bool {
		return fusefs.Mounted(mnt) && strings.Contains(out.String(), " mounted at "+mnt)
	})
	oneShot(find("ctl status"))
	oneShot(find("umount "))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil || fusefs.Mounted(mnt) {
			t.Errorf("mount after umount: %v, mounted %v\n%s", err, fusefs.Mounted(mnt), out)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("mount does not exit after umount")
	}

	// The whole NAS and its clients.
	nasCmd := exec.Command(os.Args[0], find("nas ")...)
	nasCmd.Env = append(os.Environ(), mainEnv+"=1", "XDG_RUNTIME_DIR="+runtimeDir, "NASEMU_SMB_PASSWORD="+env["NASEMU_SMB_PASSWORD"])
	var nasOut syncBuffer
	nasCmd.Stdout, nasCmd.Stderr = &nasOut, &nasOut
	if err := nasCmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if nasCmd.ProcessState == nil {
			nasCmd.Process.Kill()
			nasCmd.Wait()
		}
	})
	waitFor(t, "nas's SMB and iSCSI ports", &nasOut, func() bool { return listening(smbPort) && listening(iscsiPort) })
	oneShot(find("bench --target smb://"), short...)
	oneShot(find("bench --target iscsi://"), short...)
	stop(nasCmd, &nasOut)

	// The iSCSI target alone.
	cmd, out = start(find("iscsi "))
	waitFor(t, "the iSCSI target's port", out, func() bool { return listening(iscsiPort) })
	oneShot(find("bench --target iscsi://"), short...)
	stop(cmd, out)
}

// portOf returns a free loopback port.
func portOf(t *testing.T) string {
	_, p, _ := net.SplitHostPort(freePort(t))
	return p
}

// listening reports whether something accepts connections on the
// loopback port.
func listening(port string) bool {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+port, 200*time.Millisecond)
	if err == nil {
		c.Close()
	}
	return err == nil
}

// waitFor waits up to 30 s for cond.
func waitFor(t *testing.T, what string, out *syncBuffer, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("no %s after 30 s:\n%s", what, out.String())
}
