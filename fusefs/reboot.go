package fusefs

import (
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
)

// reboot makes a power loss a reboot of the NAS for the files and
// directories open across it. A client's handle does not outlive the
// server that issued it: after a power loss every handle opened before it
// is stale, and each call through it fails with EIO, so that no write or
// fsync through it is acknowledged after the loss has undone (or would
// undo) what it built on — a file whose create was lost, data that was
// never synced. What is opened after the loss works as ever.
//
// The calls that must not straddle a loss hold mu for reading: a write
// from the check of its handle to the end of its bytes' write and undo
// record, so that a loss either undoes the whole write (and the write
// then reports EIO) or comes after it; an fsync from its check through
// the backing fsync to its journal commit, so that a loss cannot undo
// what an fsync reports durable. A loss holds mu for writing and the
// journal's lock while it counts the boot up: a handle takes the boot
// under the journal's lock, the same one as its open or create, so its
// boot is the one its file's namespace belongs to.
type reboot struct {
	mu   sync.RWMutex
	boot atomic.Uint64 // the power losses so far

	openMu sync.Mutex
	open   map[*file]struct{} // the open files, whose pages a loss invalidates
}

// stale reports whether a handle opened in boot is stale.
func (r *reboot) stale(boot uint64) bool { return boot != r.boot.Load() }

// opened records an open file.
func (r *reboot) opened(h *file) {
	r.openMu.Lock()
	if r.open == nil {
		r.open = map[*file]struct{}{}
	}
	r.open[h] = struct{}{}
	r.openMu.Unlock()
}

// released forgets a released file.
func (r *reboot) released(h *file) {
	r.openMu.Lock()
	delete(r.open, h)
	r.openMu.Unlock()
}

// openInodes returns the nodes of the open files: after a loss the
// kernel's pages and attributes of them are dropped, so that reads and
// fstats through stale handles reach the share (and fail) rather than
// the kernel's cache.
func (r *reboot) openInodes() []*fs.Inode {
	r.openMu.Lock()
	defer r.openMu.Unlock()
	out := make([]*fs.Inode, 0, len(r.open))
	for h := range r.open {
		if h.inode != nil {
			out = append(out, h.inode)
		}
	}
	return out
}

// staleErrno is the error of a call through a stale handle.
const staleErrno = syscall.EIO
