package fusefs

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/hanwen/go-fuse/v2/splice"

	"github.com/nasemu/nasemu/emu"
)

// Errors of mounting, each with what to do about it in its message.
var (
	// ErrNoFuse: the kernel offers no FUSE device.
	ErrNoFuse = errors.New("no FUSE device (/dev/fuse): load the fuse module, or give the container the device")
	// ErrNoPermission: the FUSE device or the mount is not allowed to this user.
	ErrNoPermission = errors.New("not permitted to mount FUSE filesystems: run as root or install fusermount3 (Debian package fuse3)")
	// ErrMountpoint: the mountpoint is missing, not a directory, or busy.
	ErrMountpoint = errors.New("bad mountpoint")
	// ErrBackingPlacement: the backing directory is the mountpoint, lies
	// inside it (where the mount would hide it) or contains it (the share
	// would contain itself).
	ErrBackingPlacement = errors.New("the backing directory and the mountpoint must be separate (neither inside the other)")
)

// MountOptions returns the go-fuse options the share mounts with; the
// overhead benchmark mounts its reference loopback with the same ones.
//
// Throughput options, chosen with the overhead benchmark
// (docs/notes/fuse-mount.md): 1 MiB requests (MaxWrite, which also sets
// max_read and max_pages) cut the per-request cost of large sequential
// transfers against the 128 KiB default; readahead as large as a request
// keeps a sequential reader's queue full; asynchronous reads (the default)
// let readahead and application reads overlap; the kernel's background
// queue is raised so that readahead and writeback are not throttled at 12
// requests; a direct mount(2) avoids fusermount when running as root.
// Asynchronous direct I/O (CAP_ASYNC_DIO) lets a client's queue of O_DIRECT requests (libaio,
// io_uring: CrystalDiskMark's Q32) reach the filesystem together; without
// it the kernel sends them one at a time and a queue depth of 32 costs
// what a depth of 1 does. Splicing reads saves one of their two copies.
func MountOptions(name string, debug bool) *fs.Options {
	timeout := entryTimeout
	return &fs.Options{
		MountOptions: fuse.MountOptions{
			FsName:        name,
			Name:          "nasemu",
			MaxWrite:      1 << 20,
			MaxReadAhead:  1 << 20,
			MaxBackground: 64,
			// Reads are answered by splice where the kernel resizes pipes;
			// each read that fits the host's pipes (see splice.go).
			DisableSplice: !splice.Resizable(),
			// Not in go-fuse's default capabilities.
			ExtraCapabilities: fuse.CAP_ASYNC_DIO,
			DirectMount:       os.Geteuid() == 0,
			Debug:             debug,
		},
		EntryTimeout: &timeout,
		AttrTimeout:  &timeout,
	}
}

// smbMaxWrite is the largest write a share behind smbd asks the kernel
// for: an SMB WRITE's 1 MiB and one page more. smbd writes each SMB WRITE
// with one pwrite from its receive buffer, which is not page aligned, so
// 1 MiB of it spans 257 pages; a FUSE request of at most 256 pages would
// split it in two, and the share would charge two SMB requests, the first
// ending in the middle of a page, which the NAS model must read before it
// can merge it (docs/notes/nas-smb-charging.md).
// The kernel caps a request at fs.fuse.max_pages_limit pages (256 unless
// raised; go-fuse caps MaxWrite to match), so the one-request path needs
// that sysctl at 257 or more (SplitsSMBWrites).
const smbMaxWrite = 1<<20 + 4096

// SplitsSMBWrites reports whether this host's kernel splits an SMB
// client's 1 MiB write in two on its way from smbd to a share (see
// smbMaxWrite): fs.fuse.max_pages_limit is below 257.
func SplitsSMBWrites() bool {
	b, err := os.ReadFile("/proc/sys/fs/fuse/max_pages_limit")
	if err != nil {
		return true // older kernels: 256 pages at most
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return err != nil || n*os.Getpagesize() < smbMaxWrite
}

// Mount mounts the share at mountpoint and serves it until Unmount (or an
// external umount). A share is mounted once. It checks the mountpoint first and reports problems
// with the errors above.
func (f *FS) Mount(mountpoint string) error {
	if f.server != nil {
		return fmt.Errorf("%w: this share is already mounted at %s", ErrMountpoint, f.mountpoint)
	}
	abs, err := CheckMount(mountpoint, f.backing)
	if err != nil {
		return err
	}
	lr, err := fs.NewLoopbackRoot(f.backing)
	if err != nil {
		return fmt.Errorf("backing directory: %w", err)
	}
	root := &node{LoopbackNode: lr.(*fs.LoopbackNode), fs: f}
	opts := MountOptions("nasemu:"+filepath.Base(f.backing), f.debug)
	if f.front == FrontSMB {
		opts.MaxWrite = smbMaxWrite
		// smbd reaches the share as the account a client logs in with, not
		// as the mounting user; the kernel then checks each access against
		// the backing files' owners and modes (which the loopback keeps:
		// files created through the share belong to their creator).
		opts.AllowOther = true
		opts.Options = append(opts.Options, "default_permissions")
	}
	f.spliceReads = !opts.DisableSplice
	server, err := fs.Mount(abs, root, opts)
	if err != nil {
		return classifyMountError(err)
	}
	closeFuseOnExec()
	f.server, f.mountpoint, f.root = server, abs, root.EmbeddedInode()
	switch {
	case f.compensation > 0:
		f.early.set(emu.FlatEarly(f.compensation))
	case f.compensation == 0:
		f.early.set(f.measureCompensation(abs))
	}
	f.log.Info("mounted", "mountpoint", abs, "backing", f.backing, "compensation", f.Compensation())
	return nil
}

// Wait returns when the share has been unmounted (by Unmount or by an
// external umount).
func (f *FS) Wait() {
	if f.server != nil {
		f.server.Wait()
	}
}

// Unmount unmounts the share, retrying for a few seconds while it is busy,
// then commits the journal (a clean unmount is a commit: the held files
// are deleted and the holding directory removed), writes the undo log back,
// saves the allocator's state and releases the backing directory's lock.
// It may be called more than once, and on a share that was never mounted.
func (f *FS) Unmount() error {
	f.unmount.Do(func() {
		if f.server != nil {
			var err error
			for i := 0; i < 50; i++ {
				if err = f.server.Unmount(); err == nil || !errors.Is(err, syscall.EBUSY) {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			if err != nil && mounted(f.mountpoint) {
				f.unmountErr = fmt.Errorf("unmounting %s: %w", f.mountpoint, err)
				return
			}
			f.server.Wait()
		}
		f.vol.LogLate()
		f.commit()
		f.removeHoldDir()
		f.undo.mu.Lock()
		f.undo.syncAllLocked()
		f.undo.mu.Unlock()
		f.unmountErr = errors.Join(f.saveState(), f.saveArrays())
		if f.lock != nil {
			f.lock.Close() // the backing directory is free for another share
		}
	})
	return f.unmountErr
}

// CheckMount verifies that a share can be mounted at mountpoint with its
// data in backing, and returns the mountpoint's absolute path.
func CheckMount(mountpoint, backing string) (string, error) {
	abs, err := filepath.Abs(mountpoint)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("%w: %s does not exist", ErrMountpoint, mountpoint)
	case err != nil:
		return "", fmt.Errorf("%w: %v", ErrMountpoint, err)
	case !st.IsDir():
		return "", fmt.Errorf("%w: %s is not a directory", ErrMountpoint, mountpoint)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	if mounted(abs) {
		return "", fmt.Errorf("%w: %s is busy: something is mounted there (a running emulator: nasemu umount it; another filesystem: umount it)", ErrMountpoint, mountpoint)
	}
	b, err := filepath.Abs(backing)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(b); err == nil {
		b = real
	}
	if within(b, abs) || within(abs, b) {
		return "", fmt.Errorf("%w: backing %s, mountpoint %s", ErrBackingPlacement, backing, mountpoint)
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return "", ErrNoFuse
	}
	if os.Geteuid() != 0 {
		if _, err := exec.LookPath("fusermount3"); err != nil {
			return "", ErrNoPermission
		}
	}
	return abs, nil
}

// within reports whether path is dir or lies inside it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// classifyMountError turns go-fuse's mount errors into ours.
func classifyMountError(err error) error {
	switch {
	case errors.Is(err, syscall.EPERM), errors.Is(err, syscall.EACCES):
		return fmt.Errorf("%w: %v", ErrNoPermission, err)
	case errors.Is(err, syscall.ENOENT), errors.Is(err, syscall.ENODEV):
		return fmt.Errorf("%w: %v", ErrNoFuse, err)
	case errors.Is(err, syscall.EBUSY):
		return fmt.Errorf("%w: %v", ErrMountpoint, err)
	}
	return fmt.Errorf("mounting: %w", err)
}

// Mounted reports whether something is mounted at path (an absolute path
// without symlinks), from the kernel's mount table.
func Mounted(path string) bool { return mounted(path) }

func mounted(path string) bool {
	fh, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		// Field 5 is the mount point, with spaces and such octal-escaped.
		fields := strings.Fields(sc.Text())
		if len(fields) > 4 && unescapeMount(fields[4]) == path {
			return true
		}
	}
	return false
}

// unescapeMount decodes the octal escapes (\040 for a space) of a path in
// the mount table.
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			var v byte
			ok := true
			for _, c := range []byte(s[i+1 : i+4]) {
				if c < '0' || c > '7' {
					ok = false
					break
				}
				v = v*8 + (c - '0')
			}
			if ok {
				b.WriteByte(v)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
