package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/iscsi"
	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/proto"
)

// This file holds what 'nasemu iscsi' and 'nasemu nas --iscsi' share: the
// iSCSI server of one LU, CHAP from flags, and the one-array model of a NAS
// that serves a share and a LUN at once.

// readCHAP returns the CHAP credentials of --chap-user and
// --chap-secret-file (nil when neither is given).
func readCHAP(user, file string) (*iscsi.CHAP, error) {
	if (user == "") != (file == "") {
		return nil, usagef("--chap-user and --chap-secret-file go together")
	}
	if user == "" {
		return nil, nil
	}
	secret, err := os.ReadFile(file)
	if err != nil {
		return nil, usagef("--chap-secret-file: %v", err)
	}
	return &iscsi.CHAP{User: user, Secret: strings.TrimRight(string(secret), "\r\n")}, nil
}

// lunServer is an iSCSI target serving on a listener until Stop.
type lunServer struct {
	tg   *iscsi.Target
	l    net.Listener
	errc chan error // Serve's result
}

// startLUNServer listens on addr and serves the target there. A bad
// target configuration or an address that cannot be listened on is bad
// usage.
func startLUNServer(cfg iscsi.TargetConfig, addr, flag string) (*lunServer, error) {
	tg, err := iscsi.NewTarget(cfg)
	if err != nil {
		return nil, usageError{err}
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, usagef("%s %s: %v", flag, addr, err)
	}
	s := &lunServer{tg: tg, l: l, errc: make(chan error, 1)}
	go func() { s.errc <- tg.Serve(l) }()
	return s, nil
}

// Addr returns the address the target listens on.
func (s *lunServer) Addr() string { return s.l.Addr().String() }

// Failed receives Serve's error if the target stops serving by itself.
func (s *lunServer) Failed() <-chan error { return s.errc }

// Stop closes the listener and every session, waiting at most 10 s for the
// sessions' commands to end.
func (s *lunServer) Stop() error {
	done := make(chan struct{})
	go func() { s.tg.Close(); close(done) }()
	select {
	case <-done:
		return nil
	case <-time.After(10 * time.Second):
		return errors.New("iSCSI sessions did not end within 10 s")
	}
}

// nasArray is the model of a NAS that serves an SMB share and an iSCSI LUN
// from one array, as a NAS does: the setup's protocol front (SMB) and an
// iSCSI front sit side by side over the same link (one port) and the same
// NAS device (CPU, page cache, array). The NAS device's address space is
// split: the share's volume is [0, lunBase), the LUN the lunSize bytes at
// lunBase (the end of the array, aligned), so the two never store into
// each other's blocks, and both contend for the same drives, cache, CPU
// and wire.
//
// As a models.Device it is the share's volume: Capacity is the share's
// part and Submit charges the share's requests through the SMB front;
// SubmitLUN charges a LUN request through the iSCSI front. Both fronts keep
// per-connection state of their own. It is not safe for concurrent use:
// the volume that holds it serialises both (see lunBackend).
type nasArray struct {
	share   models.Device // the setup's front
	lun     *proto.Device // iSCSI over the same link and NAS device
	lunBase int64
	lunSize int64
}

var (
	_ models.Device   = (*nasArray)(nil)
	_ models.Parent   = (*nasArray)(nil)
	_ models.Observer = (*nasArray)(nil)
)

// lunAlign aligns the LUN's region in the array (a whole number of RAID
// chunks and of 4 KiB blocks for any usual chunk size).
const lunAlign = 1 << 20

// newNASArray puts an iSCSI front beside front (a setup's built model,
// whose outermost device is its protocol) and carves a LUN of lunSize
// bytes from the end of the array.
func newNASArray(front models.Device, lunSize int64) (*nasArray, error) {
	pd, ok := front.(*proto.Device)
	if !ok {
		return nil, fmt.Errorf("%w: the setup's model has no protocol front to put iSCSI beside", models.ErrConfig)
	}
	below := pd.Children()[0]
	capacity := below.Capacity()
	lunSize = lunSize / lunAlign * lunAlign
	base := (capacity - lunSize) / lunAlign * lunAlign
	if lunSize <= 0 || base < lunAlign {
		return nil, fmt.Errorf("%w: a LUN of %s does not fit beside a share in %s (want at least 1 MiB for each, in whole MiB)", models.ErrConfig, models.Bytes(lunSize).Human(), models.Bytes(capacity).Human())
	}
	lun, err := proto.New(proto.Config{Protocol: proto.ISCSI}, pd.Link(), below)
	if err != nil {
		return nil, err
	}
	return &nasArray{share: front, lun: lun, lunBase: base, lunSize: lunSize}, nil
}

// Capacity implements models.Device: the share's part of the array.
func (a *nasArray) Capacity() int64 { return a.lunBase }

// Submit implements models.Device: a request of the share, through the
// setup's front.
func (a *nasArray) Submit(at time.Duration, r models.Request) (time.Duration, error) {
	if err := models.CheckRange(r, a.lunBase); err != nil {
		return at, err
	}
	return a.share.Submit(at, r)
}

// SubmitLUN charges a request of the LUN (offsets within the LUN) through
// the iSCSI front, at the LUN's place in the array.
func (a *nasArray) SubmitLUN(at time.Duration, r models.Request) (time.Duration, error) {
	if err := models.CheckRange(r, a.lunSize); err != nil {
		return at, err
	}
	if r.Op == models.Read || r.Op == models.Write || r.Op == models.Trim {
		r.Offset += a.lunBase
	}
	return a.lun.Submit(at, r)
}

// Children implements models.Parent: the setup's stack, once. The iSCSI
// front's own stack below is the same NAS device and would be counted
// twice; its protocol counters are the array's own (Counters).
func (a *nasArray) Children() []models.Device { return []models.Device{a.share} }

// Counters implements models.Observer: the iSCSI front's protocol counters
// with a lun_ prefix (the link's are the SMB front's, shared).
func (a *nasArray) Counters() []models.Counter {
	var out []models.Counter
	for _, c := range a.lun.Counters() {
		switch c.Name {
		case "round_trips", "iscsi_commands", "iscsi_r2ts":
			out = append(out, models.Counter{Name: "lun_" + c.Name, Value: c.Value})
		}
	}
	return out
}

// lunBackend is the LUN of a nasArray as the SCSI layer's backend: its
// bytes live in a file of their own, its time is charged to the array
// through the volume that serialises the array (the share's, when there is
// one), and answers are paced by clock. The share's FUSE compensation is
// not applied: LUN requests do not pass through FUSE.
type lunBackend struct {
	vol   *emu.Volume // holds arr; its lock serialises the array
	arr   *nasArray
	clock emu.Clock
	data  *emu.FileStore
}

// do charges r, moves the data, and waits until the model's completion.
func (b *lunBackend) do(r models.Request, data func() error) error {
	var done time.Duration
	var err error
	b.vol.WithModel(func(_ models.Device, now time.Duration) { done, err = b.arr.SubmitLUN(now, r) })
	if err != nil {
		return fmt.Errorf("%v: %w", r, err)
	}
	if err := data(); err != nil {
		return err
	}
	b.clock.SleepUntil(done)
	return nil
}

// ReadAt implements scsi.Backend.
func (b *lunBackend) ReadAt(p []byte, off int64) (int, error) {
	err := b.do(models.Request{Op: models.Read, Offset: off, Length: int64(len(p))}, func() error {
		_, err := b.data.ReadAt(p, off)
		return err
	})
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// WriteAt implements scsi.Backend.
func (b *lunBackend) WriteAt(p []byte, off int64) (int, error) {
	err := b.do(models.Request{Op: models.Write, Offset: off, Length: int64(len(p))}, func() error {
		_, err := b.data.WriteAt(p, off)
		return err
	})
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

// Sync implements scsi.Backend: a flush through the array, then the file.
func (b *lunBackend) Sync() error {
	return b.do(models.Request{Op: models.Flush}, b.data.Sync)
}

// Trim implements scsi.Backend: the range is trimmed in the array and
// punched out of the file (zeros where the filesystem cannot punch).
func (b *lunBackend) Trim(off, n int64) error {
	return b.do(models.Request{Op: models.Trim, Offset: off, Length: n}, func() error { return b.data.Trim(off, n) })
}

// Size implements scsi.Backend.
func (b *lunBackend) Size() int64 { return b.arr.lunSize }
