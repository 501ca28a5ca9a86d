package proto

import (
	"time"

	"github.com/nasemu/nasemu/models"
)

// The client filesystem on an iSCSI LUN is NTFS-like: 4 KiB clusters,
// 1 KiB file records in a master file table, directory indexes of 4 KiB
// blocks, and a redo/undo log. The client caches all of it and its lazy
// writer writes dirty metadata back about once a second, coalesced, while
// file data is written behind as files are closed.
const (
	cluster       = 4 << 10 // NTFS default cluster and index block size
	fileRecord    = 1 << 10 // NTFS MFT file record
	indexEntry    = 104     // directory index entry with a 30-character name
	logPerCreate  = 1 << 10 // log records of a create: record init, index insert, bitmaps
	logPerUpdate  = 256     // log records of a size/time update or a delete
	lazyPeriod    = time.Second
	writeBehind   = 32 // data writes in flight before the writer is throttled
	recordsPerMFT = cluster / fileRecord
)

// clientFS is the state of the client's filesystem, shared by all flows
// (one volume).
type clientFS struct {
	mftBase, indexBase, logBase, region int64 // on-LUN regions

	nextRecord   int64 // file records allocated so far
	firstDirty   int64 // first dirty record (allocation is sequential)
	dirtyRecords int64
	dirtyIndex   int64 // index entries changed
	dirtyLog     int64 // log bytes not yet written
	logHead      int64
	lastWrite    time.Duration // last lazy writeback

	reads int64 // file records looked up (open, stat)
}

// newClientFS lays the metadata out on a LUN of the given capacity: the MFT
// a quarter in (NTFS reserves an MFT zone early on the volume), directory
// indexes after it, and the log in the middle. Where exactly only matters
// to the seek distances of a disk model.
func newClientFS(capacity int64) clientFS {
	region := max(capacity/16/cluster*cluster, cluster)
	return clientFS{
		mftBase:   capacity / 4 / cluster * cluster,
		indexBase: (capacity/4 + capacity/16) / cluster * cluster,
		logBase:   capacity / 2 / cluster * cluster,
		region:    region,
	}
}

// clusters rounds a file's data request out to whole clusters, as the
// cache manager reads and writes pages, within the LUN's capacity.
func (fs *clientFS) clusters(r models.Request, capacity int64) models.Request {
	start := r.Offset / cluster * cluster
	end := min((r.End()+cluster-1)/cluster*cluster, capacity)
	r.Offset, r.Length = start, end-start
	return r
}

// at returns an offset inside a metadata region.
func (fs *clientFS) at(base, off int64) int64 { return base + off%fs.region/cluster*cluster }

// fileOp runs a file operation in the client's filesystem: the client's
// own CPU work, cached metadata changes, and at most one synchronous read
// of a file record that is not cached yet.
func (fs *clientFS) fileOp(d *Device, at time.Duration, s *session, r models.Request) (time.Duration, error) {
	t := at + max(d.cfg.ClientOp, 0)
	switch r.Op {
	case models.Create:
		s.inFile, s.written = true, false
		if fs.dirtyRecords == 0 {
			fs.firstDirty = fs.nextRecord
		}
		fs.nextRecord++
		fs.dirtyRecords++
		fs.dirtyIndex++
		fs.dirtyLog += logPerCreate
	case models.Open, models.Stat:
		if r.Op == models.Open {
			s.inFile, s.written = true, false
		}
		// A file record that is not cached is read with the three
		// beside it (one cluster of the MFT).
		if fs.reads%recordsPerMFT == 0 {
			off := fs.at(fs.mftBase, fs.reads*fileRecord)
			var err error
			t, err = d.iscsiCommand(t, s, r.Flow, models.Request{Op: models.Read, Offset: off, Length: cluster, Flow: r.Flow}, 0, cluster)
			if err != nil {
				return t, err
			}
		}
		fs.reads++
	case models.Close:
		if s.written {
			fs.dirtyLog += logPerUpdate // new size and times: the record is dirty already
		}
		s.inFile, s.written = false, false
	case models.Remove:
		fs.dirtyIndex++
		fs.dirtyLog += logPerUpdate
	}
	if t-fs.lastWrite >= lazyPeriod {
		fs.writeback(d, t, s, r.Flow)
	}
	return t, nil
}

// writeBehind puts a file's data in the client cache and has it written
// behind: the write is issued now and the writer goes on, unless
// writeBehind writes are already in flight.
func (d *Device) writeBehind(at time.Duration, s *session, r models.Request) (time.Duration, error) {
	s.written = true
	r = d.fs.clusters(r, d.nas.Capacity())
	t := s.behind.take(at, 1)
	done, err := d.iscsiIO(t, s, r)
	s.behind.give(done, 1)
	s.lazyDone = max(s.lazyDone, done)
	return t, err
}

// writeback issues the dirty metadata as coalesced writes (the MFT records
// as one run, the touched index blocks, the log sequentially) at t without
// waiting for them, and returns t.
func (fs *clientFS) writeback(d *Device, t time.Duration, s *session, flow int) time.Duration {
	fs.lastWrite = t
	issue := func(off, n int64) {
		done, err := d.iscsiIO(t, s, models.Request{Op: models.Write, Offset: off, Length: n, Flow: flow})
		if err == nil {
			s.lazyDone = max(s.lazyDone, done)
		}
	}
	if fs.dirtyRecords > 0 {
		first := fs.firstDirty / recordsPerMFT
		last := (fs.firstDirty + fs.dirtyRecords - 1) / recordsPerMFT
		off := fs.at(fs.mftBase, first*cluster)
		n := min((last-first+1)*cluster, fs.mftBase+fs.region-off)
		issue(off, n)
		fs.dirtyRecords = 0
	}
	if fs.dirtyIndex > 0 {
		blocks := (fs.dirtyIndex*indexEntry + cluster - 1) / cluster
		off := fs.at(fs.indexBase, fs.nextRecord*indexEntry)
		issue(off, min(blocks*cluster, fs.indexBase+fs.region-off))
		fs.dirtyIndex = 0
	}
	if fs.dirtyLog > 0 {
		n := (fs.dirtyLog + cluster - 1) / cluster * cluster
		off := fs.at(fs.logBase, fs.logHead)
		issue(off, min(n, fs.logBase+fs.region-off))
		fs.logHead += n
		fs.dirtyLog = 0
	}
	return t
}
