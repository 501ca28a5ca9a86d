// Package ssd models a NAND flash SSD: host interface, controller, write
// buffer, page-mapped FTL with garbage collection and a dynamic SLC cache,
// and the NAND dies and channels whose busy times make up its performance.
//
// # Geometry
//
// A drive has Channels x DiesPerChannel dies; a die has Planes planes; a
// (multi-plane) block spans one block of every plane and holds
// PagesPerBlock pages per plane of PageSize bytes in TLC mode. The unit of
// programming is a page group — one page on every plane, programmed at
// once — and the unit of mapping is 4 KiB (a slot). Raw capacity over user
// capacity is the factory over-provisioning; Config.Overprovision withholds
// more from the user (the NAS "SSD over-provisioning" setting).
//
// # Time
//
// Each die, each channel and each direction of the host link (one shared
// direction for SATA) has a reservation calendar (models/timeline); the
// controller admits commands at ControllerIOPS and adds CommandOverhead of
// latency.
// A read senses the page groups holding its slots (tR of the block's mode
// and of the page type, plus any read-retry steps: readtime.go)
// on their dies, moves the slots over the channels, then over the link. A
// write moves its data over the link into the DRAM write buffer and is
// acknowledged there; full page groups are programmed (channel transfer,
// then tPROG) on the die that frees up first, so queue depth turns into
// die parallelism. When the buffer is full a write waits for the earliest
// program in flight. Flush programs the partial page group (padded) and
// waits for every program. A host read goes ahead of the programs, erases
// and garbage-collection work queued on its die (read priority, as flash
// controllers schedule): it waits for the array operation in progress (a
// program's whole word line) and pushes the die's later work back by its
// own time, and if the die suspends that operation (Config.ProgramSuspend,
// EraseSuspend) it waits only the suspend latency (suspend.go). Completion times follow from these reservations
// at submission; requests may be submitted with times earlier than earlier
// submissions'.
//
// # Mapping and its invariants
//
// The forward map (LPN -> PPN+1, 0 = unmapped) and the reverse map (PPN ->
// LPN) are bit-packed arrays of ceil(log2) bits per entry, allocated in
// chunks as they are written, so a full 4 TB drive's mapping costs about
// 8 bytes per 4 KiB user page and a fresh one almost nothing. There is no
// validity bitmap: physical slot p holds live data iff fwd[rev[p]] == p+1.
// A block's valid count is the number of such slots; full blocks sit in
// per-die buckets by valid count for greedy garbage collection.
//
// A DRAM-less drive (Config.MapCache) caches only part of its map; a read
// whose map page is not cached reads it from NAND first (mapcache.go).
//
// # Background work
//
// Garbage collection is paced with host writes (see gc.go); SLC-cache
// folding runs lazily in the idle gap before a request (see slc.go).
// Nothing runs on a timer.
//
// # Not modelled
//
// Read disturb, retention (read retries grow with wear only), wear
// levelling beyond erase counting, thermal throttling, power states, mapping-table persistence
// (drives with DRAM journal it at negligible cost), hot/cold separation.
//
// The model is deterministic: its one random choice, how many read-retry
// steps a NAND read needs (readtime.go), comes from the drive's own
// generator seeded by New's seed.
package ssd
