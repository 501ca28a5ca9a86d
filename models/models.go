package models

import (
	"fmt"
	"time"
)

// Op is the kind of a Request.
type Op uint8

// Block operations address a byte range of a device. File operations are
// charged by the layers that model a filesystem or a file protocol (the NAS
// controller, SMB); block devices complete them at once, at no cost.
const (
	Read  Op = iota // read Length bytes at Offset
	Write           // write Length bytes at Offset
	Flush           // make every acknowledged write durable (volatile caches drain)
	Trim            // the range no longer holds data (TRIM, UNMAP, discard)

	Open   // open an existing file
	Create // create a file (and open it)
	Close  // close a file; SMB clients set info and close here
	Remove // delete a file
	Stat   // query a file's attributes
)

var opNames = [...]string{
	Read: "read", Write: "write", Flush: "flush", Trim: "trim",
	Open: "open", Create: "create", Close: "close", Remove: "remove", Stat: "stat",
}

// String returns the operation's lower-case name.
func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// IsFileOp reports whether o is a file-level operation rather than a block
// operation.
func (o Op) IsFileOp() bool { return o >= Open && o <= Stat }

// Request is one operation on a device's address space.
type Request struct {
	Op Op // Read, Write, Flush, Trim; file-level ops for protocol and filesystem layers

	// Direct: the issuer opened the file unbuffered (O_DIRECT,
	// FILE_FLAG_NO_BUFFERING): no cache of the machine that issues the
	// request holds its data. A client on the NAS itself bypasses the
	// NAS's page cache; a remote client's flag does not reach the server
	// (see package proto).
	Direct bool
	// WriteThrough: a write is on the storage before it completes
	// (FILE_FLAG_WRITE_THROUGH, SMB2_WRITEFLAG_WRITE_THROUGH, SCSI FUA);
	// a file server still caches the pages, clean.
	WriteThrough bool

	Offset int64 // bytes
	Length int64 // bytes

	// Flow identifies the client connection or stream that issued the
	// request (0 when there is only one). Links use it to hash flows onto
	// LACP members; protocols keep per-session state by it. Block devices
	// ignore it.
	Flow int
	// Thread identifies the client thread that issued the request (a
	// benchmark's job instance; 0 when there is only one). A client on the
	// NAS itself runs each request's system call — the OS's submit path
	// down to the driver — in that thread, one call at a time, so the
	// controller serialises a local request's CPU work per thread (package
	// nas). Layers that do not run client threads ignore it.
	Thread int
}

// End returns the offset just past the request's range.
func (r Request) End() int64 { return r.Offset + r.Length }

// String formats the request for error messages.
func (r Request) String() string {
	return fmt.Sprintf("%s [%d, +%d)", r.Op, r.Offset, r.Length)
}

// Device computes when a request issued at `at` completes (simulated time
// since start).
type Device interface {
	Submit(at time.Duration, r Request) (done time.Duration, err error)
	Capacity() int64
}

// Prefetcher is implemented by a device whose Submit reads tables too large
// for the CPU caches at a place that depends on the request (the NAS page
// cache's index). A layer above that holds such a device calls Prefetch
// with a request as soon as it knows it will pass it down, before its own
// work on it, so that the device's memory access overlaps that work.
// Prefetch is a hint about speed: it changes no state and no result, and
// the request need not follow.
type Prefetcher interface {
	Prefetch(r Request)
}

// CheckRange returns an error wrapping ErrOutOfRange or ErrInvalid when a
// block request does not fit a device of the given capacity. File ops and
// Flush always pass.
func CheckRange(r Request, capacity int64) error {
	// The common case, a block request that fits, in few enough
	// operations to be inlined into every Submit (each layer of a stack
	// checks every request); anything else takes checkRange.
	if r.Op > Write || r.Offset|r.Length < 0 || r.Length > capacity-r.Offset {
		return checkRange(r, capacity)
	}
	return nil
}

// checkRange is CheckRange past its common case.
func checkRange(r Request, capacity int64) error {
	if r.Op.IsFileOp() || r.Op == Flush {
		return nil
	}
	if r.Op > Stat {
		return fmt.Errorf("%w: unknown op %d", ErrInvalid, uint8(r.Op))
	}
	if r.Length < 0 {
		return fmt.Errorf("%w: %v has a negative length", ErrInvalid, r)
	}
	if r.Offset < 0 || r.End() > capacity || r.End() < r.Offset {
		return fmt.Errorf("%w: %v beyond capacity %d", ErrOutOfRange, r, capacity)
	}
	return nil
}
