package iscsi

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nasemu/nasemu/bench"
	"github.com/nasemu/nasemu/models"
)

// ChapSecretEnv names the environment variable that holds the CHAP secret
// of an iscsi:// bench target whose address names a user but no secret,
// so that secrets stay out of command lines.
const ChapSecretEnv = "NASEMU_ISCSI_CHAP_SECRET"

// BenchFactory returns the factory of "iscsi://HOST:PORT/IQN/LUN" targets
// for nasemu bench: any iSCSI LUN, emulated or real, through this
// package's initiator (no kernel initiator needed).
func BenchFactory() bench.Factory {
	return bench.Factory{Scheme: "iscsi", Usage: "iscsi://[USER@]HOST[:PORT]/IQN/LUN", Open: func(addr, rest string, opts bench.OpenOptions) (bench.Target, error) {
		cfg, lun, err := ParseURL(addr)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", bench.ErrTarget, err)
		}
		t, err := OpenLUN(context.Background(), addr, cfg, lun)
		if errors.Is(err, ErrLogin) || errors.Is(err, ErrLUNotSupported) {
			// A wrong name, secret or LUN: bad input. A portal that
			// cannot be reached or fails is an error while running
			// (ErrSession, wrapping the network error).
			return nil, fmt.Errorf("%w: %w", bench.ErrTarget, err)
		}
		if err != nil {
			return nil, err
		}
		return t, nil
	}}
}

// ParseURL parses iscsi://[USER[%SECRET]@]HOST[:PORT]/IQN/LUN (libiscsi's
// form). A user without a secret takes the secret from ChapSecretEnv.
func ParseURL(s string) (SessionConfig, uint64, error) {
	var cfg SessionConfig
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "iscsi" || u.Host == "" {
		return cfg, 0, fmt.Errorf("%q: want iscsi://HOST[:PORT]/IQN/LUN", s)
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) != 2 || parts[0] == "" {
		return cfg, 0, fmt.Errorf("%q: want iscsi://HOST[:PORT]/IQN/LUN", s)
	}
	lun, err := strconv.ParseUint(parts[1], 10, 14)
	if err != nil {
		return cfg, 0, fmt.Errorf("%q: LUN %q is not a number below 16384", s, parts[1])
	}
	host := u.Host
	if u.Port() == "" {
		host = net.JoinHostPort(strings.Trim(u.Hostname(), "[]"), "3260")
	}
	cfg.Addr, cfg.Target = host, parts[0]
	if u.User != nil {
		user, secret, _ := strings.Cut(u.User.Username(), "%")
		if p, ok := u.User.Password(); ok {
			secret = p
		}
		if secret == "" {
			secret = os.Getenv(ChapSecretEnv)
		}
		if secret == "" {
			return cfg, 0, fmt.Errorf("%q names CHAP user %q but no secret (set %s)", s, user, ChapSecretEnv)
		}
		cfg.CHAP = &CHAP{User: user, Secret: secret}
	}
	return cfg, lun, nil
}

// LUN is a bench target on a raw iSCSI LUN. The LUN is one device: a job
// without a size uses all of it; files of jobs with a size get LBA ranges
// from a first-fit allocator (aligned to 4 KiB and the block size), in
// the order they are laid out, so several files share the LUN without
// overlapping. Remove unmaps a file's range (as deleting a file on a thin
// LUN does) and returns it to the allocator. Offsets and lengths must be
// whole blocks.
//
// Commands honour the LUN's Block Limits VPD page: a READ or WRITE larger
// than its maximum transfer length (or 32 MiB when it reports none) is
// split, a deallocation is cut into UNMAPs of at most its maximum unmap
// LBA count — or WRITE SAME(16) with UNMAP within its maximum WRITE SAME
// length, where the Logical Block Provisioning page offers only that.
// Each command's data moves in the bursts and segments the session
// negotiated (MaxBurstLength, the target's MaxRecvDataSegmentLength).
type LUN struct {
	name  string
	desc  string
	s     *Session
	lun   uint64
	cap   Capacity
	lim   BlockLimits
	clock *bench.WallClock

	mu    sync.Mutex
	space *bench.Space // set once the LUN's capacity is known
}

var (
	_ bench.Target    = (*LUN)(nil)
	_ bench.Describer = (*LUN)(nil)
)

// OpenLUN logs in and returns the bench target of one LUN; name is how
// reports show it.
func OpenLUN(ctx context.Context, name string, cfg SessionConfig, lun uint64) (*LUN, error) {
	s, err := Dial(ctx, cfg)
	if err != nil {
		return nil, err
	}
	t := &LUN{name: name, s: s, lun: lun, clock: bench.NewWallClock()}
	if err = s.TestUnitReady(ctx, lun); err != nil {
		s.Close()
		return nil, err
	}
	if t.cap, err = s.ReadCapacity16(ctx, lun); err != nil {
		s.Close()
		return nil, err
	}
	if t.lim, err = s.BlockLimits(ctx, lun); err != nil {
		s.Close()
		return nil, err
	}
	// Files are placed in units of 4 KiB or the block size, if larger.
	t.space = bench.NewSpace(name, t.size(), max(4096, int64(t.cap.BlockSize)))
	vendor, product, _ := s.Inquiry(ctx, lun)
	t.desc = fmt.Sprintf("iSCSI LUN %d of %s at %s: %s %s, %s in %d-byte blocks",
		lun, cfg.Target, cfg.Addr, vendor, product, models.Bytes(t.size()).Human(), t.cap.BlockSize)
	return t, nil
}

func (t *LUN) size() int64 { return int64(t.cap.Blocks) * int64(t.cap.BlockSize) }

// Name implements bench.Target.
func (t *LUN) Name() string { return t.name }

// Description implements bench.Describer.
func (t *LUN) Description() string { return t.desc }

// Mode implements bench.Target.
func (t *LUN) Mode() bench.Mode { return bench.Real }

// Clock implements bench.Target.
func (t *LUN) Clock() bench.Clock { return t.clock }

// Close implements bench.Target: it syncs and logs out.
func (t *LUN) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := t.s.SyncCache(ctx, t.lun)
	t.s.Close()
	return err
}

// Session returns the target's session.
func (t *LUN) Session() *Session { return t.s }

const fillChunk = 1 << 20

// Layout implements bench.Target. Filling writes pseudo-random data in
// 1 MiB writes, then synchronizes the cache.
func (t *LUN) Layout(name string, size int64, fill bool) (int64, error) {
	t.mu.Lock()
	e := t.space.File(name)
	switch {
	case size == 0 && e == nil:
		e = t.space.Whole(name)
	case size == 0:
	case e == nil || e.Size < size:
		var err error
		if e, err = t.space.Allocate(name, size); err != nil {
			t.mu.Unlock()
			return 0, err
		}
	}
	t.mu.Unlock()
	if fill && !e.Filled && !e.Whole {
		if err := t.fill(e); err != nil {
			return 0, fmt.Errorf("laying out %s: %w", name, err)
		}
		e.Filled = true
	}
	return e.Size, nil
}

func (t *LUN) fill(e *bench.Extent) error {
	ctx := context.Background()
	bs := int64(t.cap.BlockSize)
	rng := rand.New(rand.NewPCG(uint64(e.Base), 0x1a7))
	buf := make([]byte, fillChunk)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	end := (e.Size + bs - 1) / bs * bs
	// fillDepth writes in flight, as a copy tool lays a file out: one at
	// a time would leave the link and the target idle between them.
	var next atomic.Int64
	errs := make(chan error, fillDepth)
	for range fillDepth {
		go func() {
			for {
				off := next.Add(fillChunk) - fillChunk
				if off >= end {
					errs <- nil
					return
				}
				n := min(fillChunk, end-off)
				if err := t.transfer(ctx, true, uint64((e.Base+off)/bs), buf[:n]); err != nil {
					next.Store(end) // the others stop too
					errs <- err
					return
				}
			}
		}()
	}
	var err error
	for range fillDepth {
		err = errors.Join(err, <-errs)
	}
	if err != nil {
		return err
	}
	return t.s.SyncCache(ctx, t.lun)
}

// fillDepth is the number of writes Layout keeps in flight.
const fillDepth = 8

// transfer reads or writes buf at block lba in commands within the LUN's
// maximum transfer length.
func (t *LUN) transfer(ctx context.Context, write bool, lba uint64, buf []byte) error {
	bs := int64(t.cap.BlockSize)
	for len(buf) > 0 {
		n := t.lim.transferChunk(int64(len(buf)), bs)
		var err error
		if write {
			err = t.s.Write16(ctx, t.lun, lba, int(bs), buf[:n])
		} else {
			err = t.s.Read16(ctx, t.lun, lba, int(bs), buf[:n])
		}
		if err != nil {
			return err
		}
		buf = buf[n:]
		lba += uint64(n / bs)
	}
	return nil
}

// errNoDeallocate: the LUN takes neither UNMAP nor WRITE SAME with UNMAP.
var errNoDeallocate = errors.New("the LUN offers no way to deallocate blocks (no UNMAP, no WRITE SAME with UNMAP)")

// deallocate unmaps n blocks at lba in commands within the LUN's limits.
func (t *LUN) deallocate(ctx context.Context, lba, n uint64) error {
	var zero []byte
	for n > 0 {
		var k uint64
		var err error
		if k = t.lim.unmapChunk(n); k > 0 {
			err = t.s.Unmap(ctx, t.lun, lba, uint32(k))
		} else if t.lim.WriteSameUnmap {
			if zero == nil {
				zero = make([]byte, t.cap.BlockSize)
			}
			k = t.lim.writeSameChunk(n)
			err = t.s.WriteSame16(ctx, t.lun, lba, uint32(k), zero, true)
		} else {
			return errNoDeallocate
		}
		if err != nil {
			return err
		}
		lba += k
		n -= k
	}
	return nil
}

// Open implements bench.Target.
func (t *LUN) Open(at time.Duration, name string, size int64, flags bench.OpenFlags) (bench.File, time.Duration, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.space.File(name)
	if flags.Create && (e == nil || (!e.Whole && e.Size < size)) {
		var err error
		if e, err = t.space.Allocate(name, size); err != nil {
			return nil, at, err
		}
	}
	if e == nil {
		return nil, at, fmt.Errorf("%w: %s: no file %s", bench.ErrTarget, t.name, name)
	}
	return &lunFile{t: t, e: e}, t.clock.Now(), nil
}

// Remove implements bench.Target.
func (t *LUN) Remove(at time.Duration, name string) (time.Duration, error) {
	t.mu.Lock()
	e := t.space.File(name)
	t.space.Release(name)
	t.mu.Unlock()
	if e == nil {
		return at, fmt.Errorf("%w: %s: no file %s", bench.ErrTarget, t.name, name)
	}
	if !e.Whole && t.cap.Thin && e.Size > 0 {
		bs := int64(t.cap.BlockSize)
		err := t.deallocate(context.Background(), uint64(e.Base/bs), uint64(e.Size/bs))
		if err != nil && !errors.Is(err, errNoDeallocate) {
			return t.clock.Now(), err
		}
	}
	return t.clock.Now(), nil
}

type lunFile struct {
	t *LUN
	e *bench.Extent
}

// Do implements bench.File.
func (f *lunFile) Do(_ time.Duration, op models.Op, off, n int64, buf []byte) (time.Duration, error) {
	t := f.t
	bs := int64(t.cap.BlockSize)
	ctx := context.Background()
	if op == models.Flush {
		err := t.s.SyncCache(ctx, t.lun)
		return t.clock.Now(), err
	}
	if off%bs != 0 || n%bs != 0 {
		return t.clock.Now(), fmt.Errorf("%w: %v [%d, +%d) on %s: iSCSI moves whole %d-byte blocks", bench.ErrJob, op, off, n, t.name, bs)
	}
	if off < 0 || off+n > f.e.Size {
		return t.clock.Now(), fmt.Errorf("%w: %v [%d, +%d) beyond the file's %d bytes", models.ErrOutOfRange, op, off, n, f.e.Size)
	}
	lba := uint64((f.e.Base + off) / bs)
	var err error
	switch op {
	case models.Read:
		err = t.transfer(ctx, false, lba, buf[:n])
	case models.Write:
		err = t.transfer(ctx, true, lba, buf[:n])
	case models.Trim:
		err = t.deallocate(ctx, lba, uint64(n/bs))
	default:
		err = fmt.Errorf("%w: %v on an iSCSI LUN", models.ErrInvalid, op)
	}
	return t.clock.Now(), err
}

// Close implements bench.File.
func (f *lunFile) Close(time.Duration) (time.Duration, error) { return f.t.clock.Now(), nil }
