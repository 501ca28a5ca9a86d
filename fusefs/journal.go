package fusefs

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"golang.org/x/sys/unix"
)

// HoldDir is the name, in the backing directory, of the directory where
// the files deleted (unlinked, or replaced by a rename) since the last
// journal commit wait for it: the commit deletes them, a power loss puts
// them back. The share does not show it, and it is gone after a clean
// unmount.
const HoldDir = ".nasemu-pending"

// DefaultJournalInterval is the default Options.JournalInterval: ext4's
// commit interval, nas.Config.JournalInterval's default.
const DefaultJournalInterval = 5 * time.Second

// maxTransaction is the number of namespace changes at which the running
// transaction commits early, as jbd2 commits a transaction that fills a
// quarter of the journal (the model's 128 MiB journal at 4 KiB per change
// holds 8192). It also bounds the work of one commit.
const maxTransaction = 8192

// changeKind is the kind of a namespace change.
type changeKind uint8

const (
	// created: the entry at path was created (a file, directory, node,
	// symbolic link or hard link). Undo: remove it.
	created changeKind = iota
	// held: the non-directory at path was deleted (unlinked, or replaced
	// by a rename); it waits in the holding directory as hold. Undo: move
	// it back; commit: delete it.
	held
	// removedDir: the empty directory at path was removed (by rmdir or by
	// a rename over it). Undo: make it again, with its mode, owner and
	// times.
	removedDir
	// renamed: the entry at from was renamed to path. Undo: rename back.
	renamed
	// exchanged: the entries at from and path were exchanged
	// (RENAME_EXCHANGE). Undo: exchange them again.
	exchanged
)

// change is one namespace change of the running transaction. Paths are
// relative to the backing directory, as they were right after the change:
// undone in reverse order, every later change is undone first, so they
// name the entries as they are again.
type change struct {
	kind       changeKind
	path, from string
	hold       string // held: the name in the holding directory
	ino        uint64 // held: the file's backing inode
	linked     bool   // held: by a hard link, the name staying (see hold)
	// removedDir: the directory's attributes.
	mode, uid, gid uint32
	atime, mtime   syscall.Timespec
}

// journal is the running transaction of namespace changes: what a NAS's
// filesystem journals and commits every JournalInterval and at every
// fsync, and what a power loss before the commit loses.
type journal struct {
	// mu orders the namespace changes, their commit and their undo. The
	// changes hold it for writing; lookups and opens for reading, so that
	// they never see the backing directory and go-fuse's tree of nodes in
	// the middle of an undo.
	mu       sync.RWMutex
	interval time.Duration // wall time; negative: every change commits at once
	opened   time.Time     // when the running transaction began; zero: none
	changes  []change
	seq      uint64 // names in the holding directory
	made     bool   // the holding directory exists
	// heldLinks counts each file's links in the holding directory; free
	// has the files all of whose links are there: their blocks are free
	// once the transaction commits.
	heldLinks map[uint64]uint32
	free      map[uint64]bool
	freeing   atomic.Bool // free is not empty (read without mu)
}

// journaling reports whether namespace changes wait for a commit.
func (f *FS) journaling() bool { return f.journal.interval >= 0 }

// abs returns the backing path of a path relative to the backing directory.
func (f *FS) abs(rel string) string { return filepath.Join(f.backing, rel) }

// lockJournal locks the journal for a namespace change, first committing
// the running transaction if it is due: its interval has passed since it
// began (the commit happened then; nothing needs a timer), or it is full.
func (f *FS) lockJournal() {
	f.journal.mu.Lock()
	f.expireLocked(time.Now())
}

func (f *FS) unlockJournal() { f.journal.mu.Unlock() }

// expireLocked commits the running transaction if it is due at now.
func (f *FS) expireLocked(now time.Time) {
	j := &f.journal
	if !j.opened.IsZero() && (now.Sub(j.opened) >= j.interval || len(j.changes) >= maxTransaction) {
		f.commitLocked()
	}
}

// beginLocked opens a transaction if none is: a change that is not a
// namespace change (a truncation) still commits with one.
func (f *FS) beginLocked() {
	j := &f.journal
	if j.opened.IsZero() {
		j.opened = time.Now()
	}
}

// recordLocked adds a change to the running transaction.
func (f *FS) recordLocked(c change) {
	j := &f.journal
	f.beginLocked()
	j.changes = append(j.changes, c)
}

// commit commits the running transaction, as any fsync does.
func (f *FS) commit() {
	f.journal.mu.Lock()
	f.commitLocked()
	f.journal.mu.Unlock()
}

// commitLocked makes the running transaction durable: the held files are
// deleted and their blocks freed, and the truncations in the undo log are
// no longer undone.
func (f *FS) commitLocked() {
	j := &f.journal
	for _, c := range j.changes {
		if c.kind == held {
			f.reap(filepath.Join(HoldDir, c.hold))
		}
	}
	f.undo.commitCuts()
	j.reset()
}

// reset empties the running transaction (after its commit or its undo).
func (j *journal) reset() {
	if cap(j.changes) > 1024 {
		j.changes = nil
	} else {
		clear(j.changes)
		j.changes = j.changes[:0]
	}
	clear(j.heldLinks)
	clear(j.free)
	j.freeing.Store(false)
	j.opened = time.Time{}
}

// reap deletes a non-directory for good (rel is relative to the backing
// directory), freeing the file's blocks with its last link.
func (f *FS) reap(rel string) {
	p := f.abs(rel)
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		f.log.Error("journal commit: a held file is gone", "path", rel, "err", err)
		return
	}
	if err := syscall.Unlink(p); err != nil {
		f.log.Error("journal commit: deleting a held file", "path", rel, "err", err)
		return
	}
	if lastLink(st) {
		f.remove(st.Ino)
	}
}

// pendingFree returns the bytes allocated to files that wait in the
// holding directory with all their links: free space as statfs reports
// it, as ext4 counts the blocks of the running transaction's deletes as
// free, but not yet reusable (see retryAlloc).
func (f *FS) pendingFree() int64 {
	var n int64
	for ino := range f.journal.free {
		n += f.alloc.Allocated(ino)
	}
	return n
}

// retryAlloc commits the running transaction when a write does not fit
// and the transaction holds the blocks of deleted files, so that they can
// be reused, as ext4 forces a commit and retries an allocation that fails
// while blocks are freed in the running transaction. It reports whether it
// committed. The caller must not hold f.mu.
func (f *FS) retryAlloc() bool {
	if !f.journal.freeing.Load() {
		return false
	}
	f.commit()
	return true
}

// hold takes the non-directory at rel (with attributes st) out of the
// namespace into the holding directory, where it keeps its data and
// blocks until the commit, and returns the change that records it. With
// link, it is hard-linked there and stays at rel (a rename about to
// replace it removes the name atomically); otherwise, or if it cannot be
// linked, it is moved there. A file that cannot be held (a mount inside
// the backing directory puts it on another filesystem than the holding
// directory) is not: ok is false, and without link it is deleted at
// once.
func (f *FS) hold(rel string, st syscall.Stat_t, link bool) (c change, ok bool, errno syscall.Errno) {
	j := &f.journal
	if !j.made {
		if err := os.Mkdir(f.abs(HoldDir), 0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return c, false, toErrno(err)
		}
		j.made = true
	}
	name := strconv.FormatUint(j.seq, 10)
	j.seq++
	src, dst := f.abs(rel), f.abs(filepath.Join(HoldDir, name))
	var err error
	if link {
		if err = syscall.Link(src, dst); err == nil {
			return change{kind: held, path: rel, hold: name, ino: st.Ino, linked: true}, true, 0
		}
	}
	if err = syscall.Rename(src, dst); err == nil {
		return change{kind: held, path: rel, hold: name, ino: st.Ino}, true, 0
	}
	if !errors.Is(err, syscall.EXDEV) {
		return c, false, toErrno(err)
	}
	f.log.Warn("deleting a file at once: it is on another filesystem than the journal's holding directory", "path", rel)
	if link {
		return c, false, 0 // the rename deletes it
	}
	if err := syscall.Unlink(src); err != nil {
		return c, false, toErrno(err)
	}
	if lastLink(st) {
		f.remove(st.Ino)
	}
	return c, false, 0
}

// unhold reverses hold when the operation it prepared failed.
func (f *FS) unhold(c change) {
	p := f.abs(filepath.Join(HoldDir, c.hold))
	var err error
	if c.linked {
		err = syscall.Unlink(p)
	} else {
		err = syscall.Rename(p, f.abs(c.path))
	}
	if err != nil {
		f.log.Error("journal: taking a file back from the holding directory", "path", c.path, "err", err)
	}
}

// recordHeldLocked records a held file, counting its blocks as free
// (pendingFree) when all its links are held.
func (f *FS) recordHeldLocked(c change, st syscall.Stat_t) {
	j := &f.journal
	f.recordLocked(c)
	j.heldLinks[c.ino]++
	if st.Mode&syscall.S_IFMT == syscall.S_IFREG && uint64(j.heldLinks[c.ino]) >= uint64(st.Nlink) {
		j.free[c.ino] = true
		j.freeing.Store(true)
	}
}

// removedDirChange returns the change that records the removal of the
// directory at rel with attributes st.
func removedDirChange(rel string, st syscall.Stat_t) change {
	return change{kind: removedDir, path: rel, mode: st.Mode & 0o7777, uid: st.Uid, gid: st.Gid, atime: st.Atim, mtime: st.Mtim}
}

// emptyDir reports whether the directory at p has no entries.
func emptyDir(p string) (bool, error) {
	d, err := os.Open(p)
	if err != nil {
		return false, err
	}
	defer d.Close()
	_, err = d.Readdirnames(1)
	if err == io.EOF {
		return true, nil
	}
	return false, err
}

// notice is a change of the namespace the kernel must learn of after an
// undo: the entry name of parent is invalidated, and the attributes of a
// file child whose link it was (its link count changed). A removed
// directory child is deleted instead, which marks it dead: nothing can be
// created in it through a descriptor or working directory left open.
type notice struct {
	parent, child *fs.Inode
	name          string
}

func (n notice) send() {
	switch {
	case n.child != nil && n.child.IsDir():
		n.parent.NotifyDelete(n.name, n.child)
	case n.child != nil:
		n.parent.NotifyEntry(n.name)
		n.child.NotifyContent(-1, 0) // attributes only
	default:
		n.parent.NotifyEntry(n.name)
	}
}

// treeNode returns the node at rel (relative to the backing directory) in
// go-fuse's tree, or nil when the tree has none: then the kernel has no
// entry cached there either, as it holds a reference to every node it has
// an entry for.
func (f *FS) treeNode(rel string) *fs.Inode {
	in := f.root
	if in == nil || rel == "." || rel == "" {
		return in
	}
	for _, name := range strings.Split(rel, "/") {
		if in = in.GetChild(name); in == nil {
			return nil
		}
	}
	return in
}

// splitRel returns the parent directory and the name of rel.
func splitRel(rel string) (dir, name string) {
	dir, name = filepath.Split(rel)
	return filepath.Clean(dir), name
}

// rollbackLocked undoes the running transaction, newest change first, and
// returns the number of changes undone and what the kernel must be told
// once the journal is unlocked. go-fuse's tree of nodes is kept in step
// with the backing directory, as the nodes' paths come from it.
func (f *FS) rollbackLocked() (int, []notice) {
	j := &f.journal
	var notes []notice
	// entry records that the kernel's entry for rel is stale; removed,
	// that the entry's node is gone.
	entry := func(rel string, removed bool) {
		dir, name := splitRel(rel)
		parent := f.treeNode(dir)
		if parent == nil {
			return
		}
		var child *fs.Inode
		if removed {
			child = parent.GetChild(name)
			parent.RmChild(name)
			if child != nil {
				if nd, ok := child.Operations().(*node); ok {
					nd.undone.Store(true)
				}
			}
		}
		notes = append(notes, notice{parent: parent, child: child, name: name})
	}
	n := len(j.changes)
	for i := n - 1; i >= 0; i-- {
		c := j.changes[i]
		p := f.abs(c.path)
		var err error
		switch c.kind {
		case created:
			var st syscall.Stat_t
			if err = syscall.Lstat(p, &st); err != nil {
				break
			}
			if st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
				err = syscall.Rmdir(p)
			} else {
				err = syscall.Unlink(p)
			}
			if err == nil {
				if lastLink(st) {
					f.remove(st.Ino)
				}
				entry(c.path, true)
			}
		case held:
			if err = syscall.Rename(f.abs(filepath.Join(HoldDir, c.hold)), p); err == nil {
				entry(c.path, false)
			}
		case removedDir:
			if err = syscall.Mkdir(p, 0o700); err == nil {
				syscall.Lchown(p, int(c.uid), int(c.gid))
				syscall.Chmod(p, c.mode)
				unix.UtimesNanoAt(unix.AT_FDCWD, p, []unix.Timespec{unix.Timespec(c.atime), unix.Timespec(c.mtime)}, unix.AT_SYMLINK_NOFOLLOW)
				entry(c.path, false)
			}
		case renamed:
			if err = syscall.Rename(p, f.abs(c.from)); err == nil {
				f.moveInTree(c.path, c.from)
				entry(c.path, false)
				entry(c.from, false)
			}
		case exchanged:
			if err = unix.Renameat2(unix.AT_FDCWD, p, unix.AT_FDCWD, f.abs(c.from), unix.RENAME_EXCHANGE); err == nil {
				f.exchangeInTree(c.path, c.from)
				entry(c.path, false)
				entry(c.from, false)
			}
		}
		if err != nil {
			f.log.Error("power loss: undoing a namespace change", "change", c.String(), "err", err)
		}
	}
	j.reset()
	return n, notes
}

// moveInTree moves the node at from to to in go-fuse's tree, after the
// backing entry moved. Without a node for to's directory, the node leaves
// the tree: the kernel looks it up again.
func (f *FS) moveInTree(from, to string) {
	fromDir, fromName := splitRel(from)
	toDir, toName := splitRel(to)
	fp := f.treeNode(fromDir)
	if fp == nil || fp.GetChild(fromName) == nil {
		return
	}
	if tp := f.treeNode(toDir); tp != nil {
		fp.MvChild(fromName, tp, toName, true)
	} else {
		fp.RmChild(fromName)
	}
}

// exchangeInTree exchanges the nodes at a and b in go-fuse's tree.
func (f *FS) exchangeInTree(a, b string) {
	aDir, aName := splitRel(a)
	bDir, bName := splitRel(b)
	ap, bp := f.treeNode(aDir), f.treeNode(bDir)
	switch {
	case ap != nil && bp != nil:
		ap.ExchangeChild(aName, bp, bName)
	case ap != nil:
		ap.RmChild(aName)
	case bp != nil:
		bp.RmChild(bName)
	}
}

// String describes a change for the log.
func (c change) String() string {
	switch c.kind {
	case created:
		return "create " + c.path
	case held:
		return "delete " + c.path + " (held as " + c.hold + ")"
	case removedDir:
		return "rmdir " + c.path
	case renamed:
		return "rename " + c.from + " to " + c.path
	case exchanged:
		return "exchange " + c.from + " and " + c.path
	}
	return fmt.Sprintf("change %d of %s", c.kind, c.path)
}

// recoverHeld commits, at mount, the deletions a crashed or killed
// emulator left in the holding directory. The journal is not kept on disk,
// so a restart cannot undo the transaction that was running: it finds the
// state in which every change was committed just before the crash, which
// the hardware can also show, and deletes the held files (data that was
// deleted, never that of a live file: a file is held only once its name is
// gone, or as a second link while a rename replaces it). Anything there
// that the journal does not make — a directory, a name that is not a
// number — is not touched, and the mount fails: the name is reserved.
func recoverHeld(backing string, log *slog.Logger) error {
	p := filepath.Join(backing, HoldDir)
	st, err := os.Lstat(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("journal holding directory: %w", err)
	case !st.IsDir():
		return fmt.Errorf("backing directory: %s is not a directory: the name is reserved for the journal's holding directory", p)
	}
	ents, err := os.ReadDir(p)
	if err != nil {
		return fmt.Errorf("journal holding directory: %w", err)
	}
	for _, e := range ents {
		if _, err := strconv.ParseUint(e.Name(), 10, 64); err != nil || e.IsDir() {
			return fmt.Errorf("backing directory: %s holds %s, which the journal does not make: the name %s is reserved; move it away", p, e.Name(), HoldDir)
		}
	}
	for _, e := range ents {
		if err := os.Remove(filepath.Join(p, e.Name())); err != nil {
			return fmt.Errorf("journal holding directory: %w", err)
		}
	}
	if len(ents) > 0 {
		log.Info("committed the deletions an unclean stop left pending", "files", len(ents))
	}
	return os.Remove(p)
}

// removeHoldDir removes the (empty) holding directory at unmount.
func (f *FS) removeHoldDir() {
	if err := os.Remove(f.abs(HoldDir)); err != nil && !errors.Is(err, os.ErrNotExist) {
		f.log.Warn("removing the journal's holding directory", "err", err)
	}
	f.journal.made = false
}

// PendingChanges returns the number of namespace changes (truncated files
// counting one each) since the last journal commit: what a power loss now
// would undo.
func (f *FS) PendingChanges() int {
	f.lockJournal()
	defer f.unlockJournal()
	return len(f.journal.changes) + f.undo.cuts()
}
