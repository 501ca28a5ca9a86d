package iscsi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/iscsi/scsi"
	"github.com/nasemu/nasemu/models"
)

func TestReadWrite(t *testing.T) {
	const size = 64 << 20
	tt := startFreeTarget(t, size)
	for _, digests := range []bool{false, true} {
		t.Run(fmt.Sprintf("digests=%v", digests), func(t *testing.T) {
			s := tt.dial(t, SessionConfig{HeaderDigest: digests, DataDigest: digests})
			if s.p.HeaderDigest != digests || s.p.DataDigest != digests {
				t.Fatalf("negotiated digests %v/%v, want %v", s.p.HeaderDigest, s.p.DataDigest, digests)
			}
			ctx := ctxT(t, 20*time.Second)
			c, err := s.ReadCapacity16(ctx, 0)
			if err != nil || c.Blocks*uint64(c.BlockSize) != size || !c.Thin {
				t.Fatalf("capacity %+v, %v", c, err)
			}
			// Sizes around the immediate-data, burst and segment limits.
			rng := rand.New(rand.NewPCG(1, 2))
			lba := uint64(0)
			for _, n := range []int{512, 4096, 65536, 256 << 10, 256<<10 + 512, 1 << 20, 3<<20 + 4096} {
				buf := make([]byte, n)
				for i := range buf {
					buf[i] = byte(rng.Uint32())
				}
				if err := s.Write16(ctx, 0, lba, 512, buf); err != nil {
					t.Fatalf("write %d: %v", n, err)
				}
				got := make([]byte, n)
				if err := s.Read16(ctx, 0, lba, 512, got); err != nil {
					t.Fatalf("read %d: %v", n, err)
				}
				if !bytes.Equal(got, buf) {
					t.Fatalf("%d bytes at LBA %d read back differently", n, lba)
				}
				lba += uint64(n/512) + 8
			}
			if err := s.SyncCache(ctx, 0); err != nil {
				t.Fatal(err)
			}
			if err := s.Unmap(ctx, 0, 0, 8); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, 4096)
			if err := s.Read16(ctx, 0, 0, 512, got); err != nil || !isZero(got) {
				t.Errorf("unmapped blocks: %v, zero %v", err, isZero(got))
			}
			// Beyond the end: LBA OUT OF RANGE.
			err = s.Read16(ctx, 0, size/512-1, 512, make([]byte, 1024))
			var se *StatusError
			if !errors.As(err, &se) {
				t.Fatalf("read beyond the end: %v", err)
			}
			if k, asc, _ := se.Result.SenseKey(); k != scsi.KeyIllegalRequest || asc != 0x21 {
				t.Errorf("read beyond the end: sense %x/%x", k, asc)
			}
			if err := s.Ping(ctx); err != nil {
				t.Errorf("ping: %v", err)
			}
		})
	}
}

func isZero(b []byte) bool { return bytes.Count(b, []byte{0}) == len(b) }

// Many outstanding commands on one session, more than the CmdSN window.
func TestManyOutstanding(t *testing.T) {
	const size = 16 << 20
	tt := startTarget(t, freeModel(t, size), emu.NewMemStore(size), TargetConfig{QueueDepth: 8})
	s := tt.dial(t, SessionConfig{})
	ctx := ctxT(t, 20*time.Second)
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for w := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := bytes.Repeat([]byte{byte(w + 1)}, 8192)
			for i := range 20 {
				lba := uint64(w*20+i) * 16
				if err := s.Write16(ctx, 0, lba, 512, buf); err != nil {
					errs <- err
					return
				}
				got := make([]byte, 8192)
				if err := s.Read16(ctx, 0, lba, 512, got); err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(got, buf) {
					errs <- fmt.Errorf("worker %d: data mismatch at LBA %d", w, lba)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Integrity: 8 sessions write distinct regions at once, the target is
// restarted on the same backing file, and every byte is verified. The
// load lasts 2 s, or NASEMU_ISCSI_SOAK (a duration; scripts/iscsi-soak.sh
// sets 60s).
func TestIntegrityAcrossRestart(t *testing.T) {
	soak := 2 * time.Second
	if v := os.Getenv("NASEMU_ISCSI_SOAK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("NASEMU_ISCSI_SOAK=%q: %v", v, err)
		}
		soak = d
	}
	const size = 32 << 20
	path := filepath.Join(t.TempDir(), "lun.img")
	const sessions, region = 8, 2 << 20
	pattern := func(sess, i int) []byte {
		rng := rand.New(rand.NewPCG(uint64(sess), uint64(i)))
		b := make([]byte, 64<<10)
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		return b
	}
	run := func(verify bool) {
		store, err := emu.OpenFileStore(path, size)
		if err != nil {
			t.Fatal(err)
		}
		tt := startTarget(t, freeModel(t, size), store, TargetConfig{})
		var wg sync.WaitGroup
		errs := make(chan error, sessions)
		deadline := time.Now().Add(soak)
		for sess := range sessions {
			s := tt.dial(t, SessionConfig{ISID: uint32(sess + 1)})
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx := context.Background()
				base := uint64(sess * region / 512)
				for i := 0; i < region/(64<<10); i++ {
					lba := base + uint64(i*(64<<10)/512)
					want := pattern(sess, i)
					if !verify {
						if err := s.Write16(ctx, 0, lba, 512, want); err != nil {
							errs <- err
							return
						}
						continue
					}
					got := make([]byte, len(want))
					if err := s.Read16(ctx, 0, lba, 512, got); err != nil {
						errs <- err
						return
					}
					if !bytes.Equal(got, want) {
						errs <- fmt.Errorf("session %d block %d: data differs after restart", sess, i)
						return
					}
				}
				if !verify {
					// Keep rewriting the same data until the deadline: a few
					// seconds of concurrent load.
					for time.Now().Before(deadline) {
						i := rand.IntN(region / (64 << 10))
						if err := s.Write16(ctx, 0, base+uint64(i*(64<<10)/512), 512, pattern(sess, i)); err != nil {
							errs <- err
							return
						}
					}
					if err := s.SyncCache(ctx, 0); err != nil {
						errs <- err
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		if !verify {
			var writes int64
			for _, o := range tt.vol.Stats().Ops {
				if o.Op == models.Write {
					writes = o.Count
				}
			}
			t.Logf("%d sessions wrote for %v: %d writes of 64 KiB", sessions, soak, writes)
		}
		tt.tg.Close()
		tt.vol.Close()
	}
	run(false)
	run(true)
}

func TestCHAP(t *testing.T) {
	const size = 1 << 20
	const secret = "correct-horse-battery"
	tt := startTarget(t, freeModel(t, size), emu.NewMemStore(size), TargetConfig{CHAP: &CHAP{User: "bench", Secret: secret}})
	ctx := ctxT(t, 10*time.Second)
	s, err := Dial(ctx, SessionConfig{Addr: tt.addr, Target: testIQN, CHAP: &CHAP{User: "bench", Secret: secret}})
	if err != nil {
		t.Fatalf("right secret refused: %v", err)
	}
	if err := s.TestUnitReady(ctx, 0); err != nil {
		t.Error(err)
	}
	s.Close()
	const wrong = "wrong-secret-123456"
	for _, cfg := range []SessionConfig{
		{CHAP: &CHAP{User: "bench", Secret: wrong}},
		{CHAP: &CHAP{User: "intruder", Secret: secret}},
		{}, // no credentials at all
	} {
		cfg.Addr, cfg.Target = tt.addr, testIQN
		if _, err := Dial(ctx, cfg); !errors.Is(err, ErrLogin) {
			t.Errorf("login with %v: %v, want ErrLogin", cfg.CHAP, err)
		}
	}
	log := tt.log.String()
	if !strings.Contains(log, "login refused") || !strings.Contains(log, "CHAP authentication") {
		t.Errorf("refusals not logged:\n%s", log)
	}
	if strings.Contains(log, wrong) || strings.Contains(log, secret) {
		t.Errorf("a secret appears in the log:\n%s", log)
	}
	if st := tt.tg.Stats(); st.Refused != 3 {
		t.Errorf("refused logins %d, want 3", st.Refused)
	}
}

func TestDiscovery(t *testing.T) {
	const size = 1 << 20
	tt := startFreeTarget(t, size)
	s, err := Dial(ctxT(t, 5*time.Second), SessionConfig{Addr: tt.addr})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	names, err := s.SendTargets(ctxT(t, 5*time.Second))
	if err != nil || len(names) != 1 || names[0] != testIQN {
		t.Errorf("SendTargets: %v, %v", names, err)
	}
	// A wrong target name is refused.
	if _, err := Dial(ctxT(t, 5*time.Second), SessionConfig{Addr: tt.addr, Target: "iqn.2026-01.org.nasemu:nope"}); !errors.Is(err, ErrLogin) {
		t.Errorf("unknown target: %v", err)
	}
}

// A model failure reaches the initiator as sense data, not as GOOD.
func TestModelErrorsAreSense(t *testing.T) {
	const size = 1 << 20
	tt := startTarget(t, injected(t, freeModel(t, size), "read write fail"), emu.NewMemStore(size), TargetConfig{})
	s := tt.dial(t, SessionConfig{})
	err := s.Write16(ctxT(t, 5*time.Second), 0, 0, 512, make([]byte, 512))
	var se *StatusError
	if !errors.As(err, &se) {
		t.Fatalf("write to a failed device: %v", err)
	}
	if k, asc, _ := se.Result.SenseKey(); k != scsi.KeyMediumError || asc != 0x0c {
		t.Errorf("sense %x/%x, want MEDIUM ERROR / WRITE ERROR", k, asc)
	}
}
