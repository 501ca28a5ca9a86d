// Package nas models a NAS controller — or a server acting as one — in
// front of its storage (an array or an SSD cache tier): the CPU that runs
// the filesystem, the network stack and the encryption of encrypted
// folders; the RAM page cache; the filesystem's metadata and journal; and
// the internal buses the drives hang on.
//
// # CPU
//
// Each core is a calendar (timeline.Core) that fills its idle stretches
// with waiting work and holds the post-I/O work of every request in
// flight; work takes the core that can start it first. A request costs PerRequest (plus NetPerRequest unless the
// clients are local), each storage I/O PerIO, and the data path costs per
// byte: copies (CopyRate), the network stack (NetRate), data checksums
// (ChecksumRate) and, for an encrypted share, AES. AES runs in software at
// AESRate per core (a low-power ARM core manages tens of MB/s), with
// AES-NI at OffloadAESRate per core (GB/s), or on a crypto engine shared
// by all cores (CryptoEngine: hundreds of MB/s, with CryptoPerOp of core
// time per extent to drive it). Layers above (SMB, iSCSI) charge their own
// work on the same cores through the Computer interface.
//
// # Page cache
//
// RAM less OSReserved is page cache, in pages of PageSize (4 KiB by
// default), with CLOCK replacement over fixed arrays and an
// open-addressing index that grow only as pages are first used. Reads of
// cached pages cost CPU only; misses read from the storage, with
// read-ahead for sequential streams, and the data is checksummed and
// decrypted on arrival (cached pages hold plaintext, so hits never pay for
// AES). Writes are copied into the cache and acknowledged; dirty pages are
// written back lazily (see below). This is why a 4 GiB test file on a NAS
// with enough RAM reads at thousands of IOPS from an HDD array: the reads
// never reach the disks. With 2 GB of RAM (a DS1817 as shipped) only about
// a third of such a file fits, and most random reads go to the disks.
//
// With an encrypted share on a stacked filesystem (CryptoDoubleCache,
// eCryptfs on Synology) both the ciphertext and plaintext copies are
// cached, which halves the cache.
//
// With CryptoWriteThrough (DSM's encrypted folders, per review 003) a
// write to an encrypted share goes to the storage at once and is followed
// by a flush before it is acknowledged.
//
// A request with Direct (a client on the NAS itself that opened its file
// unbuffered: fio direct=1, ezFIO's runs on review 002's server) bypasses
// the page cache, and one with WriteThrough is written to the storage
// before it completes; DirectIO and WriteThrough in the configuration do
// the same for every request. WriteThrough is what a file
// server does for a remote client's unbuffered, write-through I/O: reads
// still go through the server's page cache, writes reach the storage
// before they are acknowledged. With SparseFiles the controller tracks
// which parts of the storage data was ever written to and serves reads of
// the rest as holes, without the storage (how ext4 and Btrfs read sparse
// or preallocated files, a file-backed iSCSI LUN among them).
//
// # Writeback
//
// Like Linux: above DirtyBackgroundRatio of the cache (or when dirty data
// has waited DirtyExpire), dirty pages are written back in the background
// on WritebackDepth lanes. Writers are throttled as Linux's IO-less
// balance_dirty_pages does it (throttle.go): pages under writeback count
// as dirty until the storage has them; up to the freerun point, halfway
// between the background ratio and DirtyRatio, writes run at RAM speed;
// past it every writer sleeps a little, so that together they dirty pages
// at the estimated writeback bandwidth, slower the closer the dirty pages
// are to DirtyRatio. A long write burst is absorbed at RAM speed and then
// runs at the storage's speed, each write waiting about as long as the
// others. Writeback
// walks the dirty pages in address order (a sorted snapshot per pass, as
// Linux writes an inode's pages in index order) and merges contiguous
// pages into I/Os of up to WritebackMax, ended on the stripe boundaries of
// a striped array (writebackPages), so that a sequential run reaches a
// parity array in whole stripes. Checksums and encryption are
// computed at writeback. Background work is lazy: when a request arrives,
// the writeback that could have started since the last one is issued at
// the times it would have started, so it fills idle gaps and competes with
// foreground I/O on the storage.
//
// # File operations
//
// Open, Stat, Create, Remove and Close cost PerFileOp of CPU. They touch
// the file's inode page (in a metadata area at the end of the storage) in
// the page cache: a miss reads it from the storage. Create and Remove
// dirty it and add a journal record; the journal is committed every
// JournalInterval (ext4's 5 s) as one sequential write, or at a Flush.
// Flush writes back everything dirty and commits the journal, then
// flushes the storage.
//
// # Buses
//
// A Bus caps the bandwidth several drives share (an HBA's PCIe uplink, a
// chipset's DMI link, a PCIe slot) and optionally each port's link and the
// controller's per-command time. The setup wraps each drive in a Port of
// its bus before building the array: the controller only sees the array.
package nas
