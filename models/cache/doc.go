// Package cache models an SSD cache tier in front of a slower array, the way
// NAS vendors build it (Synology's SSD cache, flashcache, bcache, dm-cache).
//
// # Blocks and sectors
//
// The cache allocates space and keeps its LRU order per cache block (64 KiB
// by default: Synology sizes its cache metadata at about 416 KB of RAM per
// GB of SSD, which is some 26 bytes per 64 KiB block), and tracks which
// parts of a block hold data in sectors of max(4 KiB, Block/64). A 4 KiB
// random read miss therefore reads 4 KiB from the array and writes 4 KiB to
// the SSD, not a whole block, as real caches with sub-block validity do.
//
// # Modes
//
// read-only: a read miss is served from the array; the fill write to the
// SSD is issued when the miss completes and does not delay it. Writes go
// around the cache to the array and invalidate what the cache held. With
// several cache drives the blocks are striped over them (capacity adds up).
//
// read-write: writes land on the cache drives (mirrored on every cache
// drive when there are two or more) and are acknowledged from there; dirty
// blocks are flushed to the array in the background at the array's speed.
// Flushing is lazy: when a request arrives, the flusher issues the work it
// could have started since it last ran, on a few lanes (flush I/Os in
// flight), so flushes fill idle gaps and compete with foreground I/O on the
// array. Flushes walk the dirty blocks in address order (a sorted snapshot,
// as flashcache and Linux writeback do), which turns random dirty data into
// an elevator sweep. When DirtyLimit of the cache blocks are dirty, a
// write waits until flushes have made room: writes then run at the flush
// rate. A Flush request does not drain dirty data (the SSDs are
// non-volatile): it flushes the cache drives, and the array only when
// writes went to it directly since its last flush.
//
// # Sequential bypass
//
// Large sequential I/O goes straight to the array (Synology's "skip
// sequential I/O", flashcache's skip_seq_thresh): a small table of streams
// follows where recent requests ended; once a stream has run for
// SequentialBypass bytes (or a single request is that large) its requests
// bypass the cache. A bypassed write invalidates the cached copy; a
// bypassed read that would meet dirty data goes through the cache instead.
//
// # Memory
//
// The block table (keys, sector bitmaps, LRU links, an open-addressing
// index) grows as blocks are first used, up to the cache's capacity, so a
// large cache costs memory only for what a run touches. Submit allocates
// only while the table grows; in steady state it allocates nothing.
package cache
