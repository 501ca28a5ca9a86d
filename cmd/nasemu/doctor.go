package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/nasemu/nasemu/fusefs"
	"github.com/nasemu/nasemu/models"
)

// finding is the result of one of doctor's checks.
type finding struct {
	check  string
	status string // "ok", "warn" (works, less faithfully) or "fail"
	detail string // what was found
	fix    string // how to fix it ("" when ok)
}

func runDoctor(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("doctor", "[--smb HOST:PORT] [--iscsi HOST:PORT] [--metrics HOST:PORT]", stderr)
	var ports [3]*string
	for i, name := range []string{"smb", "iscsi", "metrics"} {
		ports[i] = fs.String(name, "", "also check that HOST:PORT is free to listen on, as 'nasemu nas/mount --"+name+"' will")
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected arguments %q", fs.Args())
	}
	found := []finding{checkFuseDevice(), checkFusermount(), checkMaxPages(readSysctl("/proc/sys/fs/fuse/max_pages_limit")), checkPipeMaxSize(readSysctl("/proc/sys/fs/pipe-max-size")), checkSamba(), checkLibiscsi()}
	for i, name := range []string{"--smb", "--iscsi", "--metrics"} {
		if *ports[i] != "" {
			found = append(found, checkPort(name, *ports[i]))
		}
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tSTATUS\tFOUND")
	failed := 0
	for _, f := range found {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", f.check, f.status, f.detail)
		if f.fix != "" {
			fmt.Fprintf(tw, "\t\tfix: %s\n", f.fix)
		}
		if f.status == "fail" {
			failed++
		}
	}
	tw.Flush()
	if failed > 0 {
		return fmt.Errorf("%d of %d checks failed (see fix: above)", failed, len(found))
	}
	return nil
}

// checkFuseDevice: every mount needs the kernel's FUSE device.
func checkFuseDevice() finding {
	f := finding{check: "FUSE device"}
	fh, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	switch {
	case err == nil:
		fh.Close()
		f.status, f.detail = "ok", "/dev/fuse opens for reading and writing"
	case os.IsNotExist(err):
		f.status, f.detail = "fail", "no /dev/fuse: mount and nas cannot serve a share"
		f.fix = "load the module (modprobe fuse); in a container, pass the device and the capability (--device /dev/fuse --cap-add SYS_ADMIN)"
	default:
		f.status, f.detail = "fail", err.Error()
		f.fix = "run as root, or give this user access to /dev/fuse"
	}
	return f
}

// checkFusermount: a user other than root mounts through fusermount3.
func checkFusermount() finding {
	f := finding{check: "fusermount3"}
	p, err := exec.LookPath("fusermount3")
	switch {
	case err == nil:
		f.status, f.detail = "ok", p
	case os.Geteuid() == 0:
		f.status, f.detail = "ok", "not installed; not needed as root (mounts directly)"
	default:
		f.status, f.detail = "fail", "not installed: a user other than root cannot mount"
		f.fix = "apt-get install fuse3, or run as root"
	}
	return f
}

// readSysctl reads an integer from /proc/sys; -1 when it is not there.
func readSysctl(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return -1
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return -1
	}
	return n
}

// checkMaxPages: an SMB client's 1 MiB request reaches a 'nasemu nas'
// share as one request only with FUSE requests of 257 pages or more
// (fusefs.SplitsSMBWrites).
func checkMaxPages(pages int) finding {
	f := finding{check: "fs.fuse.max_pages_limit"}
	const need = 257
	fix := "sysctl fs.fuse.max_pages_limit=1024 (to keep it: echo fs.fuse.max_pages_limit=1024 > /etc/sysctl.d/90-nasemu.conf)"
	switch {
	case pages < 0:
		f.status, f.detail = "warn", "not offered by this kernel: FUSE requests of 256 pages at most, so 'nasemu nas' charges an SMB client's 1 MiB request as two"
		f.fix = "a kernel that has the sysctl (Linux 6.13 and later)"
	case pages*os.Getpagesize() < 1<<20+4096:
		f.status, f.detail = "warn", fmt.Sprintf("%d pages: 'nasemu nas' charges an SMB client's 1 MiB request as two (needs %d)", pages, need)
		f.fix = fix
	default:
		f.status, f.detail = "ok", fmt.Sprintf("%d pages (an SMB 1 MiB request needs %d)", pages, need)
	}
	return f
}

// checkPipeMaxSize: a share answers reads by splice (one copy, not two)
// only as large as the host's pipes allow (fusefs.SplicesReads); an SMB
// client's 1 MiB reads need 2 MiB pipes.
func checkPipeMaxSize(size int) finding {
	f := finding{check: "fs.pipe-max-size"}
	need := fusefs.PipeSizeFor(fusefs.SMBMaxRead)
	switch {
	case size < 0:
		f.status, f.detail = "warn", "not readable: the share may copy its reads twice"
		f.fix = fmt.Sprintf("sysctl fs.pipe-max-size=%d", need)
	case size < need:
		f.status, f.detail = "warn", fmt.Sprintf("%s: a 'nasemu nas' share copies an SMB client's 1 MiB reads twice, not once by splice (needs %s)", models.Bytes(size).Human(), models.Bytes(need).Human())
		f.fix = fmt.Sprintf("sysctl fs.pipe-max-size=%d (to keep it: echo fs.pipe-max-size=%d > /etc/sysctl.d/90-nasemu.conf)", need, need)
	default:
		f.status, f.detail = "ok", fmt.Sprintf("%s (an SMB 1 MiB read by splice needs %s)", models.Bytes(size).Human(), models.Bytes(need).Human())
	}
	return f
}

// lookSystemTool finds a program in PATH or the sbin directories.
func lookSystemTool(name string) (string, bool) {
	if p, err := exec.LookPath(name); err == nil {
		return p, true
	}
	for _, dir := range []string{"/usr/sbin", "/sbin", "/usr/local/sbin"} {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}

// checkSamba: 'nasemu nas --smb' runs a private smbd.
func checkSamba() finding {
	f := finding{check: "Samba (nas --smb)"}
	var missing, have []string
	for _, tool := range []string{"smbd", "smbpasswd"} {
		if p, ok := lookSystemTool(tool); ok {
			have = append(have, p)
		} else {
			missing = append(missing, tool)
		}
	}
	if len(missing) > 0 {
		f.status, f.detail = "fail", "no "+strings.Join(missing, ", ")+": 'nasemu nas --smb' cannot serve the share"
		f.fix = "apt-get install samba (and smbclient to try the share)"
		return f
	}
	f.status, f.detail = "ok", strings.Join(have, ", ")
	return f
}

// checkLibiscsi: libiscsi's tools are the iSCSI initiators that try a
// LUN without the kernel's initiator (iscsi-inq, iscsi-perf).
func checkLibiscsi() finding {
	f := finding{check: "libiscsi tools"}
	p, ok := lookSystemTool("iscsi-inq")
	if !ok {
		f.status, f.detail = "warn", "no iscsi-inq: nasemu serves iSCSI without them, but they are the quickest way to try a LUN"
		f.fix = "apt-get install libiscsi-bin"
		return f
	}
	f.status, f.detail = "ok", p
	return f
}

// checkPort tries to listen where a command will.
func checkPort(flag, addr string) finding {
	f := finding{check: flag + " " + addr}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		f.status, f.detail = "fail", err.Error()
		f.fix = "stop what listens there ('ss -ltnp' shows it) or choose another port"
		return f
	}
	l.Close()
	f.status, f.detail = "ok", "free"
	return f
}
