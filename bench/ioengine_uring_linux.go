package bench

import (
	"cmp"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/nasemu/nasemu/models"
)

// io_uring's ABI (include/uapi/linux/io_uring.h), the part used here.
const (
	uringOffSQRing = 0
	uringOffSQEs   = 0x10000000

	uringSetupCoopTaskrun  = 1 << 8
	uringSetupSingleIssuer = 1 << 12
	uringSetupDeferTaskrun = 1 << 13

	uringFeatSingleMmap = 1 << 0
	uringFeatExtArg     = 1 << 8

	uringEnterGetEvents = 1 << 0
	uringEnterExtArg    = 1 << 3

	uringRegisterBuffers = 0
	uringRegisterFiles   = 2

	uringOpFsync      = 3
	uringOpReadFixed  = 4
	uringOpWriteFixed = 5
	uringOpTimeout    = 11
	uringOpRead       = 22
	uringOpWrite      = 23

	uringSQEFixedFile = 1 << 0

	// uringTimerData is the user data of the ring's timeout request (see
	// uring.wait); a slot's is its index.
	uringTimerData = ^uint64(0)
)

type uringSQOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

type uringCQOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

type uringParams struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFD uint32
	resv                                                                   [3]uint32
	sqOff                                                                  uringSQOffsets
	cqOff                                                                  uringCQOffsets
}

type uringSQE struct {
	opcode   uint8
	flags    uint8
	ioprio   uint16
	fd       int32
	off      uint64
	addr     uint64
	len      uint32
	rwFlags  uint32
	userData uint64
	bufIndex uint16
	_        uint16
	_        int32
	_        [2]uint64
}

type uringCQE struct {
	userData uint64
	res      int32
	flags    uint32
}

type uringGeteventsArg struct {
	sigmask   uint64
	sigmaskSz uint32
	minWait   uint32
	ts        uint64
}

// uring is an io_uring of one job instance: its files registered with
// registerfiles, so the kernel does not look a file up per operation, and
// its slots' buffers with fixedbufs, so it does not pin their pages per
// operation; neither by default, as in fio.
type uring struct {
	fd       int
	ringMem  []byte
	cqMem    []byte
	sqeMem   []byte
	sqHead   *uint32
	sqTail   *uint32
	sqMask   uint32
	sqArray  []uint32
	sqes     []uringSQE
	cqHead   *uint32
	cqTail   *uint32
	cqMask   uint32
	cqes     []uringCQE
	toSubmit uint32 // prepared, not yet in the ring's tail
	inRing   uint32 // in the ring's tail, not yet consumed by the kernel
	taken    uint64 // operations the kernel has consumed
	reaped   uint64 // completions handed out by reap
	timer    bool   // a timeout request is in the kernel (see wait)
	timers   uint64 // timeout requests the kernel has consumed
	fixedBuf bool
	fds      []int // the files' descriptors; nil when they are registered
	raw      bool  // wait without giving up the goroutine's P (see ioQueue)
	tid      int   // the submitting thread
	bufs     [][]byte
	// The wait's argument and timeout, read by the kernel: on the heap,
	// where nothing moves them while it does.
	arg uringGeteventsArg
	ts  unix.Timespec
	// The timeout request's time, read by the kernel when it takes it.
	timerTS unix.Timespec
}

var _ ioQueue = (*uring)(nil)

// newURing sets up a ring of depth slots as fio's io_uring engine sets
// its own up: a single issuer whose completions wait for it to ask
// (DEFER_TASKRUN, 6.1), so that the kernel neither interrupts it nor
// wakes it for each completion of a batch; without those, cooperative
// task running (5.19); without that, a plain ring. SQPOLL is not used:
// it costs a kernel thread spinning on one of this host's two cores.
func newURing(depth int, fds []int, bufs [][]byte, o queueOpts) (ioQueue, error) {
	entries := uint32(1) << bits.Len32(uint32(depth-1))
	var p uringParams
	var fd int
	var err error
	for _, flags := range []uint32{uringSetupCoopTaskrun | uringSetupSingleIssuer | uringSetupDeferTaskrun, uringSetupCoopTaskrun, 0} {
		p = uringParams{flags: flags}
		if fd, err = uringSetup(entries, &p); !errors.Is(err, syscall.EINVAL) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("io_uring_setup: %w", err)
	}
	r := &uring{fd: fd, bufs: bufs, raw: o.raw, tid: unix.Gettid()}
	if err := r.mmap(&p); err != nil {
		r.close()
		return nil, err
	}
	if p.features&uringFeatExtArg == 0 {
		r.close()
		return nil, fmt.Errorf("io_uring: the kernel lacks IORING_FEAT_EXT_ARG (5.11)")
	}
	if !o.registerFiles {
		r.fds = fds
	} else if err := uringRegister(fd, uringRegisterFiles, unsafe.Pointer(unsafe.SliceData(int32s(fds))), uint32(len(fds))); err != nil {
		r.close()
		return nil, fmt.Errorf("io_uring: registering files: %w", err)
	}
	iov := make([]unix.Iovec, len(bufs))
	for i, b := range bufs {
		iov[i].Base = unsafe.SliceData(b)
		iov[i].SetLen(len(b))
	}
	// Registering pins the buffers; without the memlock allowance the
	// ring still works with plain reads and writes.
	r.fixedBuf = len(iov) > 0 && uringRegister(fd, uringRegisterBuffers, unsafe.Pointer(unsafe.SliceData(iov)), uint32(len(iov))) == nil
	return r, nil
}

func int32s(v []int) []int32 {
	out := make([]int32, len(v))
	for i, x := range v {
		out[i] = int32(x)
	}
	return out
}

func (r *uring) mmap(p *uringParams) error {
	sqSize := int(p.sqOff.array + p.sqEntries*4)
	cqSize := int(p.cqOff.cqes + p.cqEntries*uint32(unsafe.Sizeof(uringCQE{})))
	single := p.features&uringFeatSingleMmap != 0
	if single {
		sqSize = max(sqSize, cqSize)
	}
	var err error
	r.ringMem, err = unix.Mmap(r.fd, uringOffSQRing, sqSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE)
	if err != nil {
		return fmt.Errorf("io_uring: mapping the rings: %w", err)
	}
	cq := r.ringMem
	if !single {
		const offCQRing = 0x8000000
		if r.cqMem, err = unix.Mmap(r.fd, offCQRing, cqSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
			return fmt.Errorf("io_uring: mapping the completion ring: %w", err)
		}
		cq = r.cqMem
	}
	sqeSize := int(p.sqEntries) * int(unsafe.Sizeof(uringSQE{}))
	if r.sqeMem, err = unix.Mmap(r.fd, uringOffSQEs, sqeSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED|unix.MAP_POPULATE); err != nil {
		return fmt.Errorf("io_uring: mapping the submission entries: %w", err)
	}
	sq := r.ringMem
	r.sqHead = (*uint32)(unsafe.Pointer(&sq[p.sqOff.head]))
	r.sqTail = (*uint32)(unsafe.Pointer(&sq[p.sqOff.tail]))
	r.sqMask = *(*uint32)(unsafe.Pointer(&sq[p.sqOff.ringMask]))
	r.sqArray = unsafe.Slice((*uint32)(unsafe.Pointer(&sq[p.sqOff.array])), p.sqEntries)
	r.sqes = unsafe.Slice((*uringSQE)(unsafe.Pointer(&r.sqeMem[0])), p.sqEntries)
	r.cqHead = (*uint32)(unsafe.Pointer(&cq[p.cqOff.head]))
	r.cqTail = (*uint32)(unsafe.Pointer(&cq[p.cqOff.tail]))
	r.cqMask = *(*uint32)(unsafe.Pointer(&cq[p.cqOff.ringMask]))
	r.cqes = unsafe.Slice((*uringCQE)(unsafe.Pointer(&cq[p.cqOff.cqes])), p.cqEntries)
	return nil
}

func (r *uring) prep(i, fi int, op models.Op, off int64, buf []byte) {
	tail := atomic.LoadUint32(r.sqTail) + r.toSubmit
	idx := tail & r.sqMask
	e := &r.sqes[idx]
	*e = uringSQE{fd: int32(fi), flags: uringSQEFixedFile, off: uint64(off), userData: uint64(i)}
	if r.fds != nil {
		e.fd, e.flags = int32(r.fds[fi]), 0
	}
	switch op {
	case models.Read, models.Write:
		switch {
		case r.fixedBuf && op == models.Read:
			e.opcode, e.bufIndex = uringOpReadFixed, uint16(i)
		case r.fixedBuf:
			e.opcode, e.bufIndex = uringOpWriteFixed, uint16(i)
		case op == models.Read:
			e.opcode = uringOpRead
		default:
			e.opcode = uringOpWrite
		}
		e.addr = uint64(uintptr(unsafe.Pointer(unsafe.SliceData(buf))))
		e.len = uint32(len(buf))
	default: // Flush
		e.opcode = uringOpFsync
	}
	r.sqArray[idx] = idx
	r.toSubmit++
}

func (r *uring) submit() (int, error) {
	n, err := r.flush()
	r.taken += uint64(n)
	return n, err
}

// flush hands the prepared entries to the kernel, as submit.
func (r *uring) flush() (int, error) {
	// The entries are written before the tail moves (a release store).
	atomic.StoreUint32(r.sqTail, atomic.LoadUint32(r.sqTail)+r.toSubmit)
	r.inRing += r.toSubmit
	r.toSubmit = 0
	done := 0
	var retrying time.Time
	for r.inRing > 0 {
		// GETEVENTS without a minimum, as fio submits: the kernel also
		// posts completions it deferred (DEFER_TASKRUN) to the ring.
		// The kernel consumes entries before it looks at completions and
		// reports an error only when it consumed none, so an error never
		// hides entries it took.
		got, err := r.enter(r.inRing, 0, uringEnterGetEvents, nil, 0)
		switch {
		case err == unix.EINTR || err == unix.EAGAIN || err == unix.EBUSY:
			// A signal, or the kernel short of memory for a moment.
			if retrying.IsZero() {
				retrying = time.Now()
			} else if time.Since(retrying) > waitSlice {
				return done, fmt.Errorf("io_uring_enter: %w for %v: %s", err, waitSlice, r.state())
			}
			continue
		case err != nil:
			return done, fmt.Errorf("io_uring_enter: %w", err)
		case got == 0 || uint32(got) > r.inRing:
			// The kernel found other entries than this queue counts in
			// the ring: its count is wrong, and waiting for the
			// operations would never end.
			return done, fmt.Errorf("io_uring_enter took %d of the %d entries counted in the ring: %s", got, r.inRing, r.state())
		}
		r.inRing -= uint32(got)
		done += int(got)
	}
	return done, nil
}

// wait waits for a completion. A wait without the caller's limit is
// bounded by the ring's timeout request: one in the kernel at a time,
// for waitSlice, whose completion ends the wait as an operation's would
// (reap skips it) and which the next such wait renews. A timeout given
// to each wait instead (IORING_ENTER_EXT_ARG) would make the kernel arm
// and cancel a timer per I/O, as fio does not (it waits without one):
// in a profile of 4 KiB random writes at QD1 on tmpfs, about 2% of the
// process's CPU time went to copying the timeout in and setting up and
// cancelling its timer. A wait with a limit (and the rest of one that a
// signal interrupted) passes its timeout with the wait.
func (r *uring) wait(timeout time.Duration) (int64, error) {
	if atomic.LoadUint32(r.cqTail) != atomic.LoadUint32(r.cqHead) {
		return 0, nil // completions are waiting already
	}
	limited := timeout >= 0
	if !limited && !r.timer {
		if err := r.armTimer(); err != nil {
			return 0, err
		}
	}
	flags, arg, argSz := uintptr(uringEnterGetEvents), uintptr(0), uintptr(0)
	if limited {
		r.ts = unix.NsecToTimespec(int64(timeout))
		r.arg = uringGeteventsArg{ts: uint64(uintptr(unsafe.Pointer(&r.ts)))}
		flags, arg, argSz = uringEnterGetEvents|uringEnterExtArg, uintptr(unsafe.Pointer(&r.arg)), unsafe.Sizeof(r.arg)
	}
	signalled := false
	var until int64 // after a signal: when the wait gives up (CLOCK_MONOTONIC ns)
	for {
		// Not through r.enter: after a signal this loop must call
		// nothing that can be preempted (see ioQueue.wait).
		var errno syscall.Errno
		if r.raw {
			_, _, errno = unix.RawSyscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), 0, 1, flags, arg, argSz)
		} else {
			_, _, errno = unix.Syscall6(unix.SYS_IO_URING_ENTER, uintptr(r.fd), 0, 1, flags, arg, argSz)
		}
		switch {
		case errno == unix.EINTR && r.raw && !limited:
			// The runtime preempting: finish the wait first, for
			// deferPreemption from the first signal at most. The
			// runtime signals again every 100 µs or so while it waits
			// to stop the world: a wait renewed at each signal would
			// hold up a garbage collection, and every goroutine with it,
			// until the I/O completed (forever, for a pipe whose writer
			// is one of them).
			now := monotonicNow()
			if !signalled {
				signalled, until = true, now+int64(deferPreemption)
			}
			if now >= until {
				return 0, nil
			}
			r.ts = unix.NsecToTimespec(until - now)
			r.arg = uringGeteventsArg{ts: uint64(uintptr(unsafe.Pointer(&r.ts)))}
			flags, arg, argSz = uringEnterGetEvents|uringEnterExtArg, uintptr(unsafe.Pointer(&r.arg)), unsafe.Sizeof(r.arg)
		case errno == 0 && signalled:
			// The timeout request's completion is no operation's: past
			// it, the wait goes on as it would have (until its deferral
			// ends at most), and says when it saw an operation's.
			head, tail := atomic.LoadUint32(r.cqHead), atomic.LoadUint32(r.cqTail)
			for head != tail && r.cqes[head&r.cqMask].userData == uringTimerData {
				head++
				r.timer = false
			}
			atomic.StoreUint32(r.cqHead, head)
			if head == tail {
				now := monotonicNow()
				if now >= until {
					return 0, nil
				}
				r.ts = unix.NsecToTimespec(until - now)
				continue
			}
			return monotonicNow(), nil
		case errno == 0 || errno == unix.ETIME || errno == unix.EINTR || errno == unix.EAGAIN || errno == unix.EBUSY:
			// Back to the caller, which reaps what there is and waits
			// again, or tells a stall (and, after a signal, lets the
			// runtime preempt the goroutine).
			return 0, nil
		default:
			return 0, fmt.Errorf("io_uring_enter: %w", errno)
		}
	}
}

// armTimer puts a timeout request of waitSlice in the ring: its
// completion (res -ETIME) comes after that time unless the ring is
// closed first. Nothing else is prepared or left in the ring then
// (submit hands all over), so it goes in alone.
func (r *uring) armTimer() error {
	if r.toSubmit != 0 || r.inRing != 0 {
		return fmt.Errorf("io_uring: a timeout request with other entries pending: %s", r.state())
	}
	r.timerTS = unix.NsecToTimespec(int64(waitSlice))
	idx := atomic.LoadUint32(r.sqTail) & r.sqMask
	r.sqes[idx] = uringSQE{opcode: uringOpTimeout, fd: -1, addr: uint64(uintptr(unsafe.Pointer(&r.timerTS))), len: 1, userData: uringTimerData}
	r.sqArray[idx] = idx
	r.toSubmit = 1
	n, err := r.flush()
	if n != 1 {
		return fmt.Errorf("io_uring: a timeout request: %w", err)
	}
	r.timer = true
	r.timers++
	return nil
}

// enter is io_uring_enter(2), in a raw system call when r.raw.
func (r *uring) enter(toSubmit, minComplete, flags uint32, arg unsafe.Pointer, argSz uintptr) (uintptr, error) {
	enter := unix.Syscall6
	if r.raw {
		enter = unix.RawSyscall6
	}
	got, _, errno := enter(unix.SYS_IO_URING_ENTER, uintptr(r.fd), uintptr(toSubmit), uintptr(minComplete), uintptr(flags), uintptr(arg), argSz)
	if errno != 0 {
		return got, errno
	}
	return got, nil
}

func (r *uring) reap(max int, fn func(i int, res int64)) {
	head := atomic.LoadUint32(r.cqHead)
	tail := atomic.LoadUint32(r.cqTail)
	for n := 0; head != tail && (max <= 0 || n < max); head++ {
		c := r.cqes[head&r.cqMask]
		if c.userData == uringTimerData { // the wait's timeout (see wait)
			r.timer = false
			continue
		}
		r.reaped++
		n++
		fn(int(c.userData), int64(c.res))
	}
	atomic.StoreUint32(r.cqHead, head)
}

func (r *uring) state() string {
	return fmt.Sprintf("io_uring: %d operations taken by the kernel, %d completions reaped (and %d timeout requests, one in the kernel: %v); submission ring head %d, tail %d, %d entries prepared, %d not taken; completion ring head %d, tail %d; %s",
		r.taken, r.reaped, r.timers, r.timer, atomic.LoadUint32(r.sqHead), atomic.LoadUint32(r.sqTail), r.toSubmit, r.inRing, atomic.LoadUint32(r.cqHead), atomic.LoadUint32(r.cqTail), ioWorkers(r.tid))
}

// ioWorkers describes the kernel's worker threads for the thread tid's
// rings (named iou-wrk-TID), which carry the operations that would block
// (a buffered write, a read of an uncached page), and what each is doing:
// when a queue stalls, whether it has workers at all and where they wait.
func ioWorkers(tid int) string {
	name := fmt.Sprintf("iou-wrk-%d", tid)
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return fmt.Sprintf("io workers unknown: %v", err)
	}
	var found []string
	for _, t := range tasks {
		comm, err := os.ReadFile("/proc/self/task/" + t.Name() + "/comm")
		if err != nil || strings.TrimSpace(string(comm)) != name {
			continue
		}
		wchan, _ := os.ReadFile("/proc/self/task/" + t.Name() + "/wchan")
		stat, _ := os.ReadFile("/proc/self/task/" + t.Name() + "/stat")
		state := "?"
		if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) {
			state = string(stat[i+2])
		}
		found = append(found, fmt.Sprintf("%s state %s in %s", t.Name(), state, cmp.Or(string(wchan), "?")))
	}
	if len(found) == 0 {
		return "no io worker threads"
	}
	return fmt.Sprintf("%d io worker threads (%s)", len(found), strings.Join(found, ", "))
}

func (r *uring) close() {
	for _, m := range [][]byte{r.sqeMem, r.cqMem, r.ringMem} {
		if m != nil {
			unix.Munmap(m)
		}
	}
	unix.Close(r.fd)
}

func uringSetup(entries uint32, p *uringParams) (int, error) {
	fd, _, errno := unix.Syscall(unix.SYS_IO_URING_SETUP, uintptr(entries), uintptr(unsafe.Pointer(p)), 0)
	if errno != 0 {
		return -1, errno
	}
	return int(fd), nil
}

func uringRegister(fd int, op uint32, arg unsafe.Pointer, n uint32) error {
	_, _, errno := unix.Syscall6(unix.SYS_IO_URING_REGISTER, uintptr(fd), uintptr(op), uintptr(arg), uintptr(n), 0, 0)
	if errno != 0 {
		return errno
	}
	return nil
}

// monotonicNow reads CLOCK_MONOTONIC, the clock of the runtime's
// monotonic time, in a raw system call: where the goroutine must not be
// preempted (see ioQueue.wait).
//
//go:nosplit
func monotonicNow() int64 {
	var ts unix.Timespec
	unix.RawSyscall6(unix.SYS_CLOCK_GETTIME, unix.CLOCK_MONOTONIC, uintptr(unsafe.Pointer(&ts)), 0, 0, 0, 0)
	return int64(ts.Sec)*1e9 + int64(ts.Nsec)
}

// errnoErr turns a negated result into its error.
func errnoErr(e int64) error { return syscall.Errno(e) }
