package emu

import (
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/fault"
)

// Volume is an emulated block volume: a Store for the bytes, a model for
// the timing, a Clock to pace answers. It is safe for concurrent use.
type Volume struct {
	store Store
	clock Clock
	log   *slog.Logger

	mu     sync.Mutex // serialises the model
	model  models.Device
	faults *fault.Device // wraps model: the faults injected at run time (faults.go)

	inFlight   atomic.Int64
	closedLoop time.Duration // as in Options
	lastDone   atomic.Int64  // latest completion time answered (model ns)
	stats      [models.Stat + 1]opStats
	late       lateness
}

type opStats struct {
	count, bytes, errors atomic.Int64
	modelNanos           atomic.Int64 // sum of modelled latencies
}

// Options are a Volume's optional settings. The zero value is valid.
type Options struct {
	// Clock paces the volume; nil means a real-time WallClock.
	Clock Clock
	// Logger receives errors worth a person's attention; nil is quiet.
	Logger *slog.Logger
	// ClosedLoop is the longest gap (model time) between one request's
	// completion and the next request that the model does not see. A
	// client waiting for each request before it issues the next (queue
	// depth 1) takes time of its own between them — its processing, the
	// system calls and, on an emulator, the kernel's and FUSE's handling
	// of both — which a simulated client does not: it issues the next
	// request at the completion of the last. A request that arrives while
	// nothing else is in flight, at most ClosedLoop after the latest
	// completion (or before it, when the answer went out early to make up
	// for that handling), is therefore charged at that completion, so the
	// model sees the request stream the simulated client submits and the
	// client's throughput is the model's, however noisy the host. A longer
	// gap is the client's own idle time and is kept. 0 charges every
	// request at its arrival.
	ClosedLoop time.Duration
}

// NewVolume returns a volume that stores its bytes in store and answers when
// model says. The store must hold at least the model's capacity.
func NewVolume(model models.Device, store Store, opts Options) (*Volume, error) {
	if store.Size() < model.Capacity() {
		return nil, fmt.Errorf("%w: store holds %d bytes, the model %d", ErrShortStore, store.Size(), model.Capacity())
	}
	if opts.Clock == nil {
		opts.Clock = NewWallClock(1, -1)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	inj, err := fault.New(model, faultSeed)
	if err != nil {
		return nil, err
	}
	return &Volume{store: store, clock: opts.Clock, log: opts.Logger, model: model, faults: inj, closedLoop: max(0, opts.ClosedLoop)}, nil
}

// Capacity returns the volume's size in bytes: the model's capacity.
func (v *Volume) Capacity() int64 { return v.model.Capacity() }

// Clock returns the volume's clock.
func (v *Volume) Clock() Clock { return v.clock }

// Store returns the volume's store.
func (v *Volume) Store() Store { return v.store }

// WithModel calls fn with the model while no request is being charged: the
// way to read counters or inject a fault without racing the data path.
func (v *Volume) WithModel(fn func(m models.Device, now time.Duration)) {
	v.mu.Lock()
	defer v.mu.Unlock()
	fn(v.model, v.clock.Now())
}

// arrival returns the model time at which a request arriving now is
// charged (see Options.ClosedLoop). The caller holds mu and has counted
// the request in inFlight.
func (v *Volume) arrival() time.Duration {
	now := v.clock.Now()
	if v.closedLoop > 0 && v.inFlight.Load() == 1 {
		if last := time.Duration(v.lastDone.Load()); last > 0 && now-last <= v.closedLoop {
			return last
		}
	}
	return now
}

// completed records that a request completing at done has been answered.
func (v *Volume) completed(done time.Duration) {
	for {
		last := v.lastDone.Load()
		if int64(done) <= last || v.lastDone.CompareAndSwap(last, int64(done)) {
			return
		}
	}
}

// charge submits r to the model at its arrival time and returns that time
// and the completion time.
func (v *Volume) charge(r models.Request) (at, done time.Duration, err error) {
	v.mu.Lock()
	at = v.arrival()
	done, err = v.faults.Submit(at, r)
	v.mu.Unlock()
	if err != nil {
		err = fmt.Errorf("%v: %w", r, err)
	}
	return at, done, err
}

// finish waits until done and accounts the request.
func (v *Volume) finish(op models.Op, n int64, at, done time.Duration, err error) {
	if err == nil {
		v.checkLate(done)
		v.clock.SleepUntil(done)
		v.completed(done)
	}
	s := &v.stats[op]
	s.count.Add(1)
	if err != nil {
		s.errors.Add(1)
		return
	}
	s.bytes.Add(n)
	s.modelNanos.Add(int64(done - at))
}

// do charges r, runs the data operation (if the model accepted r), waits
// for the model's completion time and accounts the request.
func (v *Volume) do(r models.Request, data func() error) error {
	v.inFlight.Add(1)
	defer v.inFlight.Add(-1)
	at, done, err := v.charge(r)
	if err == nil && data != nil {
		err = data()
	}
	v.finish(r.Op, r.Length, at, done, err)
	return err
}

// Access serves one client request that reaches the volume as several
// block requests — the extents of a fragmented file, which a filesystem
// issues together — and whose bytes the caller moves itself. The requests
// are charged at the same model time (in order, so the model sees them as
// the client submitted them); then data, if not nil, moves the bytes while
// the modelled time runs, as the hardware transfers while it works; Access
// returns when the last of them completes. When the model fails a request,
// data is not run and Access returns the error at once.
func (v *Volume) Access(rs []models.Request, data func() error) error {
	return v.AccessEarly(rs, 0, data)
}

// AccessEarly is Access answering early (model time) before the last
// completion, but never before the requests arrived: the part of the
// request's time that its front spends outside the model, such as moving
// its bytes between the client and the share (see fusefs.FS.SetTransferEarly).
// The model's times and the volume's counters are those of Access.
func (v *Volume) AccessEarly(rs []models.Request, early time.Duration, data func() error) error {
	if len(rs) == 0 {
		if data != nil {
			return data()
		}
		return nil
	}
	v.inFlight.Add(1)
	defer v.inFlight.Add(-1)
	var buf [8]time.Duration
	dones := buf[:0]
	v.mu.Lock()
	at := v.arrival()
	var err error
	for _, r := range rs {
		var done time.Duration
		if done, err = v.faults.Submit(at, r); err != nil {
			err = fmt.Errorf("%v: %w", r, err)
			break
		}
		dones = append(dones, done)
	}
	v.mu.Unlock()
	if err == nil && data != nil {
		err = data()
	}
	last := at
	for _, d := range dones {
		last = max(last, d)
	}
	if err == nil {
		v.checkLate(last)
		v.clock.SleepUntil(max(at, last-early))
		v.completed(last)
	}
	// Every part the model saw is counted: as served, or, when the model
	// failed a part or the data could not be moved, as an error (the
	// client request failed as a whole).
	for i, done := range dones {
		s := &v.stats[rs[i].Op]
		s.count.Add(1)
		if err != nil {
			s.errors.Add(1)
			continue
		}
		s.bytes.Add(rs[i].Length)
		s.modelNanos.Add(int64(done - at))
	}
	if len(dones) < len(rs) {
		s := &v.stats[rs[len(dones)].Op]
		s.count.Add(1)
		s.errors.Add(1)
	}
	return err
}

// ReadAt reads len(p) bytes at off.
func (v *Volume) ReadAt(p []byte, off int64) (int, error) {
	err := v.do(models.Request{Op: models.Read, Offset: off, Length: int64(len(p))}, func() error {
		_, err := v.store.ReadAt(p, off)
		return err
	})
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// WriteAt writes p at off. The write is acknowledged when the model says;
// it is durable once a later Sync returns.
func (v *Volume) WriteAt(p []byte, off int64) (int, error) {
	err := v.do(models.Request{Op: models.Write, Offset: off, Length: int64(len(p))}, func() error {
		_, err := v.store.WriteAt(p, off)
		return err
	})
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// Sync makes every acknowledged write durable: a Flush through the model
// and a sync of the store.
func (v *Volume) Sync() error {
	return v.do(models.Request{Op: models.Flush}, v.store.Sync)
}

// Trim tells the volume that [off, off+n) holds no data any more; later
// reads of it return zeros.
func (v *Volume) Trim(off, n int64) error {
	return v.do(models.Request{Op: models.Trim, Offset: off, Length: n}, func() error {
		return trimOrZero(v.store, off, n)
	})
}

// Charge submits a request that moves no data through the volume — a file
// operation (models.Create, models.Remove, ...) of a filesystem or protocol
// layer — and returns when the model says it completes.
func (v *Volume) Charge(r models.Request) error {
	return v.ChargeEarly(r, 0)
}

// ChargeEarly is Charge answering early (model time) before the model's
// completion, but never before the request arrived (see AccessEarly).
func (v *Volume) ChargeEarly(r models.Request, early time.Duration) error {
	if !r.Op.IsFileOp() {
		return fmt.Errorf("%w: Charge takes file operations, not %v", models.ErrInvalid, r.Op)
	}
	if early <= 0 {
		return v.do(r, nil)
	}
	return v.AccessEarly([]models.Request{r}, early, nil)
}

// PowerLoss simulates a power loss: a store that keeps unsynced writes
// where a power loss takes them (a PowerLosser: VolatileStore, UndoStore)
// loses them. It returns the bytes lost; 0 when the store keeps every
// write.
func (v *Volume) PowerLoss() int64 {
	if vs, ok := v.store.(PowerLosser); ok {
		lost := vs.PowerLoss()
		v.log.Warn("simulated power loss", "lost_bytes", lost)
		return lost
	}
	return 0
}

// Close closes the store. Requests after Close fail with ErrClosed.
func (v *Volume) Close() error { return v.store.Close() }

// Stats is a snapshot of a volume's activity.
type Stats struct {
	InFlight int64
	Ops      []OpStats // one per op that was used
}

// OpStats is the activity of one kind of request.
type OpStats struct {
	Op               models.Op
	Count, Errors    int64
	Bytes            int64
	MeanModelLatency time.Duration
}

// Stats returns a snapshot of the volume's activity.
func (v *Volume) Stats() Stats {
	st := Stats{InFlight: v.inFlight.Load()}
	for op := range v.stats {
		s := &v.stats[op]
		n := s.count.Load()
		if n == 0 {
			continue
		}
		o := OpStats{Op: models.Op(op), Count: n, Errors: s.errors.Load(), Bytes: s.bytes.Load()}
		if ok := n - o.Errors; ok > 0 {
			o.MeanModelLatency = time.Duration(s.modelNanos.Load() / ok)
		}
		st.Ops = append(st.Ops, o)
	}
	return st
}

// Size returns the volume's capacity, so that a Volume is itself a Store.
func (v *Volume) Size() int64 { return v.model.Capacity() }

var _ Store = (*Volume)(nil)
