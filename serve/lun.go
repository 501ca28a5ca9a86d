package serve

import (
	"errors"
	"net"
	"time"

	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/iscsi"
	"github.com/nasemu/nasemu/models/setup"
)

// LUN is an iSCSI target serving one LU on a listener until Stop, that
// can lose power (PowerLoss).
type LUN struct {
	tg    *iscsi.Target
	l     net.Listener
	clock *iscsi.StopClock
	data  emu.PowerLosser // what a power loss takes; nil: nothing
	errc  chan error      // Serve's result
}

// NewLUN serves the target of cfg on l. clock is the clock under the
// LU's volume (its paced waits end when the LUN stops or loses power);
// data is the store (or volume) whose unsynced writes a power loss takes,
// nil when every write is durable when acknowledged. A bad configuration
// is an error wrapping models.ErrConfig, and l is then left open.
func NewLUN(cfg iscsi.TargetConfig, l net.Listener, clock *iscsi.StopClock, data emu.PowerLosser) (*LUN, error) {
	tg, err := iscsi.NewTarget(cfg)
	if err != nil {
		return nil, err
	}
	s := &LUN{tg: tg, l: l, clock: clock, data: data, errc: make(chan error, 1)}
	go func() { s.errc <- tg.Serve(l) }()
	return s, nil
}

// NewLUNStore returns the store of a LUN's bytes: base itself when the
// modelled NAS writes every write through to its storage before it
// acknowledges it (nothing to lose), else base behind an emu.UndoStore,
// whose unsynced writes a power loss undoes, as it takes the dirty pages
// of a file-backed LUN from a NAS's page cache. clock times its write-back.
func NewLUNStore(base emu.Store, writeThrough bool, clock emu.Clock) emu.Store {
	if writeThrough {
		return base
	}
	return emu.NewUndoStore(base, 0, clock)
}

// WritesThrough reports whether the setup's NAS writes each write to its
// storage before it acknowledges it (nas.Config.WriteThrough): a power
// loss then loses no acknowledged write. A setup without a NAS (a drive
// alone, the free setup) has a write cache.
func WritesThrough(s *setup.Setup) bool {
	return s != nil && s.NAS != nil && s.NAS.Config.WriteThrough
}

// Addr returns the address the target listens on.
func (s *LUN) Addr() string { return s.l.Addr().String() }

// IQN returns the target's name.
func (s *LUN) IQN() string { return s.tg.IQN() }

// Sessions returns the number of open connections.
func (s *LUN) Sessions() int { return s.tg.Sessions() }

// Failed receives Serve's error if the target stops serving by itself.
func (s *LUN) Failed() <-chan error { return s.errc }

// PowerLoss is a power loss of the NAS (iscsi.Target.PowerLoss): every
// session is dropped, the commands in flight are never answered, and the
// writes not made durable — by SYNCHRONIZE CACHE, FUA or a write-through
// NAS — are undone before any initiator can log in again. It returns the
// sessions dropped and the bytes of the writes undone.
func (s *LUN) PowerLoss() (sessions int, lost int64) {
	release := s.clock.Hold()
	defer release()
	sessions = s.tg.PowerLoss(func() {
		if s.data != nil {
			lost = s.data.PowerLoss()
		}
	})
	return sessions, lost
}

// Stop closes the listener and every session, cutting the paced waits of
// the commands in flight short, and waits at most 10 s for them to end.
func (s *LUN) Stop() error {
	s.clock.Stop()
	done := make(chan struct{})
	go func() { s.tg.Close(); close(done) }()
	select {
	case <-done:
		return nil
	case <-time.After(10 * time.Second):
		return errors.New("iSCSI sessions did not end within 10 s")
	}
}
