package bench

import (
	"fmt"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/nasemu/nasemu/models"
)

// Linux native AIO's ABI (include/uapi/linux/aio_abi.h).
const (
	iocbCmdPread  = 0
	iocbCmdPwrite = 1
	iocbCmdFsync  = 2
)

type iocb struct {
	data      uint64
	key       uint32
	rwFlags   uint32
	opcode    uint16
	reqprio   int16
	fildes    uint32
	buf       uint64
	nbytes    uint64
	offset    int64
	reserved2 uint64
	flags     uint32
	resfd     uint32
}

type ioEvent struct {
	data, obj uint64
	res, res2 int64
}

// aio is a native AIO context of one job instance (fio's libaio engine):
// io_submit queues the slots' operations, io_getevents reaps them. It
// is asynchronous for direct I/O; for buffered I/O io_submit does the
// transfer before it returns, as it does under fio.
type aio struct {
	ctx     uintptr
	fds     []int
	cbs     []iocb
	queued  []*iocb
	events  []ioEvent
	pending int    // events[:pending] are ready, not yet handed out by reap
	taken   uint64 // operations the kernel has taken (or refused)
	reaped  uint64 // completions handed out by reap
	raw     bool   // wait without giving up the goroutine's P (see ioQueue)
	timeout unix.Timespec
}

var _ ioQueue = (*aio)(nil)

func newAIO(depth int, fds []int, _ [][]byte, o queueOpts) (ioQueue, error) {
	var ctx uintptr
	if _, _, errno := unix.Syscall(unix.SYS_IO_SETUP, uintptr(depth), uintptr(unsafe.Pointer(&ctx)), 0); errno != 0 {
		return nil, fmt.Errorf("io_setup: %w", errno)
	}
	return &aio{ctx: ctx, fds: fds, cbs: make([]iocb, depth), queued: make([]*iocb, 0, depth), events: make([]ioEvent, depth), raw: o.raw}, nil
}

func (a *aio) prep(i, fi int, op models.Op, off int64, buf []byte) {
	cb := &a.cbs[i]
	*cb = iocb{data: uint64(i), fildes: uint32(a.fds[fi]), offset: off}
	switch op {
	case models.Read, models.Write:
		cb.opcode = iocbCmdPread
		if op == models.Write {
			cb.opcode = iocbCmdPwrite
		}
		cb.buf = uint64(uintptr(unsafe.Pointer(unsafe.SliceData(buf))))
		cb.nbytes = uint64(len(buf))
	default:
		cb.opcode = iocbCmdFsync
	}
	a.queued = append(a.queued, cb)
}

func (a *aio) submit() (int, error) {
	q := a.queued
	defer func() { a.queued = a.queued[:0] }() // the same array: no allocation per batch
	var retrying time.Time
	for len(q) > 0 {
		n, _, errno := unix.Syscall(unix.SYS_IO_SUBMIT, a.ctx, uintptr(len(q)), uintptr(unsafe.Pointer(&q[0])))
		switch {
		case errno == unix.EINTR || errno == unix.EAGAIN:
			// A signal, or the kernel short of memory for a moment.
			if retrying.IsZero() {
				retrying = time.Now()
			} else if time.Since(retrying) > waitSlice {
				done := len(a.queued) - len(q)
				a.taken += uint64(done)
				return done, fmt.Errorf("io_submit: %w for %v: %s", errno, waitSlice, a.state())
			}
		case errno != 0:
			// The first operation was refused (most file systems have
			// no asynchronous fsync): it completes with the error.
			a.events[a.pending] = ioEvent{data: q[0].data, res: -int64(errno)}
			a.pending++
			a.taken++
			q = q[1:]
		case n == 0 || int(n) > len(q):
			done := len(a.queued) - len(q)
			a.taken += uint64(done)
			return done, fmt.Errorf("io_submit took %d of %d operations: %s", n, len(q), a.state())
		default:
			a.taken += uint64(n)
			q = q[n:]
		}
	}
	return len(a.queued), nil
}

func (a *aio) wait(timeout time.Duration) (int64, error) {
	if a.pending > 0 {
		return 0, nil
	}
	limited := timeout >= 0
	if !limited {
		timeout = waitSlice
	}
	a.timeout = unix.NsecToTimespec(int64(timeout))
	signalled := false
	var until int64 // after a signal: when the wait gives up (CLOCK_MONOTONIC ns)
	for {
		// No call here can be preempted after a signal (see ioQueue.wait).
		var n uintptr
		var errno syscall.Errno
		if a.raw {
			n, _, errno = unix.RawSyscall6(unix.SYS_IO_GETEVENTS, a.ctx, 1, uintptr(len(a.events)), uintptr(unsafe.Pointer(&a.events[0])), uintptr(unsafe.Pointer(&a.timeout)), 0)
		} else {
			n, _, errno = unix.Syscall6(unix.SYS_IO_GETEVENTS, a.ctx, 1, uintptr(len(a.events)), uintptr(unsafe.Pointer(&a.events[0])), uintptr(unsafe.Pointer(&a.timeout)), 0)
		}
		switch {
		case errno == 0:
			a.pending = int(n)
			if signalled && n > 0 {
				return monotonicNow(), nil
			}
			return 0, nil // completions, or the time is up
		case errno == unix.EINTR && a.raw && !limited:
			// The runtime preempting: finish the wait first, for
			// deferPreemption from the first signal at most, however
			// often the runtime signals again (see uring.wait).
			now := monotonicNow()
			if !signalled {
				signalled, until = true, now+int64(deferPreemption)
			}
			if now >= until {
				return 0, nil
			}
			a.timeout = unix.NsecToTimespec(until - now)
		case errno == unix.EINTR:
			// Back to the caller, which waits again (and, after a
			// signal, lets the runtime preempt the goroutine).
			return 0, nil
		default:
			return 0, fmt.Errorf("io_getevents: %w", errno)
		}
	}
}

func (a *aio) reap(max int, fn func(i int, res int64)) {
	n := a.pending
	if max > 0 {
		n = min(n, max)
	}
	a.reaped += uint64(n)
	for _, e := range a.events[:n] {
		fn(int(e.data), e.res)
	}
	// Those left over move to the front, where the next reap (and a
	// refused submission's event) expects them.
	a.pending = copy(a.events, a.events[n:a.pending])
}

func (a *aio) state() string {
	return fmt.Sprintf("libaio: %d operations taken by the kernel, %d completions reaped, %d ready", a.taken, a.reaped, a.pending)
}

func (a *aio) close() {
	unix.Syscall(unix.SYS_IO_DESTROY, a.ctx, 0, 0)
}
