// Package models holds the contract that every performance model in nasemu
// implements: a Device answers, for a Request issued at a simulated time,
// when that request completes.
//
// # Reservation, not events
//
// Models keep a "busy until" time per resource (a NAND die, a channel, an HDD
// head, a link direction, a CPU core) and compute a request's completion when
// it is submitted. Queue depth, parallelism and contention fall out of that:
// a request that finds its resource busy starts when the resource frees up.
// Composite devices (RAID, cache tiers, links, protocols) split a request and
// submit the parts to their children, possibly at future times (the write
// phase of a RAID 5 read-modify-write starts when its reads finish), so every
// model accepts submissions whose time lies after the time of a later
// submission. Models do not require submissions in time order.
//
// # Background work is lazy
//
// SLC-cache folding, write-back flushing and idle-time garbage collection are
// computed from the idle interval when the next request arrives. No model has
// timers or goroutines.
//
// # Determinism
//
// The same configuration and seed give bit-identical results. Each component
// owns its seeded PRNG; models never read the wall clock, sleep, or use
// math/rand's global source.
//
// # Observability
//
// A model reports its counters through the optional Observer interface and
// its sub-devices through Parent, so reports can walk a whole stack (see Walk
// and Sum).
//
// # Concurrency
//
// Devices are not safe for concurrent use; the emulator serialises calls to
// Submit.
package models
