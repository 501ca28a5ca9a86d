package fusefs

import (
	"os"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/hanwen/go-fuse/v2/splice"
)

// Reads are answered by splice where the host allows it: the backing
// file's pages go into a pipe by reference and from the pipe into the
// kernel's reply with one copy, where a pread into a buffer and a write of
// the buffer to /dev/fuse cost two. go-fuse writes a reply's header and
// data into one pipe of its own, which it can grow only up to the host's
// fs.pipe-max-size: a request of n bytes needs n plus a header and a page.
// A request that does not fit is read with pread (and no splice is tried).

// SMBMaxRead is the largest read a share behind smbd gets from the kernel
// (its max_read is the mount's largest write, smbMaxWrite).
const SMBMaxRead = smbMaxWrite

// replyHeader is the size of a FUSE reply's header (struct fuse_out_header).
const replyHeader = 16

// spliceFits reports whether go-fuse can splice a read of n bytes into
// its reply on this host.
func spliceFits(n int) bool {
	return splice.Resizable() && replyHeader+n+os.Getpagesize() <= splice.MaxPipeSize()
}

// SplicesReads reports whether a share's largest reads (of maxRead bytes)
// are answered by splice on this host; if not, fs.pipe-max-size is below
// PipeSizeFor(maxRead).
func SplicesReads(maxRead int) bool { return spliceFits(maxRead) }

// PipeSizeFor is the fs.pipe-max-size that reads of maxRead bytes need to
// be answered by splice (a power of two, as the kernel rounds pipe sizes).
func PipeSizeFor(maxRead int) int {
	n := os.Getpagesize()
	for n < replyHeader+maxRead+os.Getpagesize() {
		n *= 2
	}
	return n
}

// loadPipe splices up to size bytes of fd at off into a pipe from
// go-fuse's pool and returns the pipe and the bytes it holds (fewer at the
// end of the file). A nil pipe means the host gave no pipe of that size or
// the splice failed: the caller reads otherwise (and meets the error, if
// the file has one).
func loadPipe(fd, size int, off int64) (*splice.Pair, int) {
	pair, err := splice.Get()
	if err != nil {
		return nil, 0
	}
	// A page more than size: a range that does not start on a page
	// boundary takes one pipe buffer more than its pages.
	if err := pair.Grow(size + os.Getpagesize()); err != nil {
		splice.Drop(pair)
		return nil, 0
	}
	n := 0
	for n < size {
		k, err := pair.LoadFromAt(uintptr(fd), size-n, off+int64(n))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			splice.Done(pair)
			return nil, 0
		}
		if k == 0 {
			break // the end of the file
		}
		n += k
	}
	return pair, n
}

// splicedRead is a read's answer held in a pipe. go-fuse splices it into
// the reply (it is a "stateful" result: Stateful names the pipe) and then
// calls Done, which returns the pipe and calls release: the read holds
// off a power loss until its reply is written (see file.Read).
type splicedRead struct {
	pair    *splice.Pair
	size    int
	release func()
}

func (r *splicedRead) Size() int { return r.size }

// Stateful is what go-fuse splices the reply from.
func (r *splicedRead) Stateful() (fd uintptr, sz int) { return r.pair.ReadFd(), r.size }

// Bytes reads the pipe into buf (go-fuse's fallback when a splice to
// /dev/fuse fails).
func (r *splicedRead) Bytes(buf []byte) ([]byte, fuse.Status) {
	if cap(buf) < r.size {
		buf = make([]byte, r.size)
	}
	buf = buf[:r.size]
	n := 0
	for n < r.size {
		k, err := r.pair.Read(buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, fuse.ToStatus(err)
		}
		if k <= 0 {
			return nil, fuse.EIO
		}
		n += k
	}
	return buf, fuse.OK
}

// Done returns the pipe to the pool and releases the read; go-fuse calls
// it once, after the reply.
func (r *splicedRead) Done() {
	if r.pair == nil {
		return
	}
	splice.Done(r.pair)
	r.pair = nil
	r.release()
}
