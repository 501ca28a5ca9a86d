package iscsi

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
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
		if err != nil {
			return nil, fmt.Errorf("%w: %w", bench.ErrTarget, err)
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
type LUN struct {
	name  string
	desc  string
	s     *Session
	lun   uint64
	cap   Capacity
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
	for off := int64(0); off < end; off += fillChunk {
		n := min(fillChunk, end-off)
		if err := t.s.Write16(ctx, t.lun, uint64((e.Base+off)/bs), int(bs), buf[:n]); err != nil {
			return err
		}
	}
	return t.s.SyncCache(ctx, t.lun)
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
		ctx := context.Background()
		for off := int64(0); off < e.Size; {
			n := min(e.Size-off, 1<<30) / bs * bs
			if n == 0 {
				break
			}
			if err := t.s.Unmap(ctx, t.lun, uint64((e.Base+off)/bs), uint32(n/bs)); err != nil {
				return t.clock.Now(), err
			}
			off += n
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
		err = t.s.Read16(ctx, t.lun, lba, int(bs), buf[:n])
	case models.Write:
		err = t.s.Write16(ctx, t.lun, lba, int(bs), buf[:n])
	case models.Trim:
		err = t.s.Unmap(ctx, t.lun, lba, uint32(n/bs))
	default:
		err = fmt.Errorf("%w: %v on an iSCSI LUN", models.ErrInvalid, op)
	}
	return t.clock.Now(), err
}

// Close implements bench.File.
func (f *lunFile) Close(time.Duration) (time.Duration, error) { return f.t.clock.Now(), nil }
