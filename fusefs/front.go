package fusefs

import (
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/nasemu/nasemu/models"
)

// frontOpenFlags returns the FUSE open flags of a file a client opens
// with flags. Behind smbd (FrontSMB), every file is direct I/O with
// parallel writes, so that each SMB READ or WRITE of a client reaches the
// share as the one request the model charges: smbd opens without
// O_DIRECT, and through the host's page cache the kernel serialises the
// writes of one file (a client's queue depth of 32 reached the model as 1)
// and turns reads into readahead of its own sizes and times. That needs
// requests of 257 pages (see smbMaxWrite); where the kernel splits them
// (SplitsSMBWrites), read-only opens keep the page cache instead, as
// split direct reads would each be charged as an SMB request, which costs
// a sequential reader more than the kernel's readahead does.
func (f *FS) frontOpenFlags(flags uint32) uint32 {
	if f.front == FrontSMB && (flags&syscall.O_ACCMODE != syscall.O_RDONLY || !f.splitsSMB) {
		return fuse.FOPEN_DIRECT_IO | fuse.FOPEN_PARALLEL_DIRECT_WRITES
	}
	return openFlags(flags)
}

// closeAtFlush reports whether a file's Close is charged when its
// descriptor is closed (FUSE FLUSH, which close(2) waits for) instead of
// at RELEASE. The kernel sends RELEASE after close(2) has returned, so a
// Close charged there is never waited for: behind smbd a client's SMB
// CLOSE would return at once, where the model charges its round trip and
// server work (docs/notes/nas-smb-charging.md).
// Clients of a direct mount close as they like, and keep the charge at
// RELEASE (once per open, however many descriptors were duplicated).
func (f *FS) closeAtFlush() bool { return f.front == FrontSMB }

// chargeClose charges the Close of the file, with the file's range (see
// chargeFile).
func (h *file) chargeClose() syscall.Errno {
	var st syscall.Stat_t
	if err := syscall.Fstat(h.fd, &st); err == nil {
		return h.fs.chargeFile(models.Close, h.ino, st.Size)
	}
	return h.fs.charge(models.Close)
}

// releaseCharge is the charge of RELEASE: the Close, unless it was charged
// at FLUSH (closeAtFlush).
func (h *file) releaseCharge() syscall.Errno {
	if h.fs.closeAtFlush() || h.probe {
		return 0
	}
	return h.chargeClose()
}

// flushCharge is the charge of FLUSH: the Close when closeAtFlush.
func (h *file) flushCharge() syscall.Errno {
	if !h.fs.closeAtFlush() || h.probe {
		return 0
	}
	return h.chargeClose()
}
