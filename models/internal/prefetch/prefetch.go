// Package prefetch asks the CPU to start loading a cache line that will be
// read soon, without waiting for it.
//
// A model's large tables (the NAS page cache's index: megabytes, read at a
// random place per request) do not fit the CPU caches, so their first read
// in a request waits for main memory, about 100 ns, a tenth of what the
// whole stack of models spends on a request. When a layer above knows the
// request before it does its own work on it, a prefetch started then
// overlaps that wait with the work. Prefetching changes no result.
package prefetch
