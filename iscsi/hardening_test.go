package iscsi

import (
	"bytes"
	"encoding/binary"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nasemu/nasemu/emu"
	"github.com/nasemu/nasemu/iscsi/pdu"
	"github.com/nasemu/nasemu/iscsi/scsi"
)

// memoryBound is the growth of the target's memory that
// TestRobustMemoryBounded allows while one initiator announces 16.5 GiB
// of writes and sends none of it: the session's buffer budget (64 MiB)
// and the bookkeeping of its commands, with room for the runtime.
const memoryBound = 256 << 20

// write16 is a WRITE(16) command PDU of n bytes at lba with no data.
func write16(itt, cmdSN uint32, lba uint64, n int, bs int, immediate bool) *pdu.PDU {
	p := pdu.New(pdu.OpSCSICmd)
	if immediate {
		p.SetImmediate()
	}
	p.Header[1] = pdu.FlagFinal | cmdWrite | 0x01
	p.SetU32(pdu.OffITT, itt)
	p.SetU32(pdu.OffTTT, uint32(n))
	p.SetU32(pdu.OffCmdSN, cmdSN)
	cdb := p.Header[32:48]
	cdb[0] = 0x8a
	binary.BigEndian.PutUint64(cdb[2:], lba)
	binary.BigEndian.PutUint32(cdb[10:], uint32(n/bs))
	return p
}

// heapAndRSS returns the live Go heap after a collection and the
// process's resident set.
func heapAndRSS(t *testing.T) (heap, rss int64) {
	t.Helper()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return int64(ms.HeapAlloc), 0
	}
	f := strings.Fields(string(b))
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return int64(ms.HeapAlloc), pages * int64(os.Getpagesize())
}

// One initiator announces 128 windowed and then 400 immediate WRITE(16)
// commands of 32 MiB and never sends their data. The target reserves
// buffers from a bounded budget before it solicits data, answers the
// commands that do not fit TASK SET FULL, holds immediate commands to the
// window, and its memory grows by less than memoryBound; another
// initiator's reads and writes still work meanwhile.
func TestRobustMemoryBounded(t *testing.T) {
	const size = 64 << 20
	tt := startFreeTarget(t, size)
	heap0, rss0 := heapAndRSS(t)

	nc, sn := rawLogin(t, tt.addr)
	defer nc.Close()
	const xfer = 32 << 20
	r2ts, busy := 0, 0
	send := func(from, to int, immediate bool) {
		for i := from; i < to; i++ {
			if err := pdu.Write(nc, write16(uint32(i+1), sn, 0, xfer, 512, immediate), pdu.Limits{}); err != nil {
				t.Fatal(err)
			}
			if !immediate {
				sn++
			}
		}
		// Each command is answered with an R2T (its data is wanted) or
		// with a status (no room).
		for range to - from {
			nc.SetReadDeadline(time.Now().Add(10 * time.Second))
			p, err := pdu.Read(nc, pdu.Limits{MaxData: 1 << 24})
			if err != nil {
				t.Fatalf("after %d commands: %v", to, err)
			}
			switch p.Opcode() {
			case pdu.OpR2T:
				r2ts++
			case pdu.OpSCSIResp:
				if st := p.Header[3]; st != scsi.StatusTaskSetFull && st != scsi.StatusBusy {
					t.Fatalf("WRITE(16) without data answered with status 0x%02x", st)
				}
				busy++
			default:
				t.Fatalf("unexpected %s", p.Opcode())
			}
		}
		heap, rss := heapAndRSS(t)
		if heap-heap0 > memoryBound || rss-rss0 > memoryBound {
			t.Fatalf("after %d commands of 32 MiB without data: heap +%d MiB, RSS +%d MiB (bound %d MiB)",
				to, (heap-heap0)>>20, (rss-rss0)>>20, memoryBound>>20)
		}
	}
	for i := 0; i < 128; i += 16 {
		send(i, i+16, false)
	}
	for i := 128; i < 528; i += 16 {
		send(i, i+16, true)
	}
	heap, rss := heapAndRSS(t)
	t.Logf("528 commands of 32 MiB without data: %d R2Ts, %d TASK SET FULL/BUSY; heap +%d MiB, RSS +%d MiB",
		r2ts, busy, (heap-heap0)>>20, (rss-rss0)>>20)
	if r2ts == 0 || r2ts > 2 {
		t.Errorf("%d commands had their data solicited; the session's budget holds 2", r2ts)
	}

	// Another initiator is served meanwhile.
	s := tt.dial(t, SessionConfig{})
	ctx := ctxT(t, 30*time.Second)
	buf := bytes.Repeat([]byte{0xa5}, 1<<20)
	if err := s.Write16(ctx, 0, 4096, 512, buf); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(buf))
	if err := s.Read16(ctx, 0, 4096, 512, got); err != nil || !bytes.Equal(got, buf) {
		t.Fatalf("read back: %v", err)
	}
}

// A command whose solicited data does not come within DataOutTimeout
// drops its connection, which gives its buffers back.
func TestRobustDataOutTimeout(t *testing.T) {
	const size = 64 << 20
	tt := startTarget(t, freeModel(t, size), emu.NewMemStore(size), TargetConfig{DataOutTimeout: 200 * time.Millisecond})
	nc, sn := rawLogin(t, tt.addr)
	defer nc.Close()
	if err := pdu.Write(nc, write16(1, sn, 0, 1<<20, 512, false), pdu.Limits{}); err != nil {
		t.Fatal(err)
	}
	expect(t, nc, pdu.OpR2T, "WRITE(16) of 1 MiB")
	start := time.Now()
	expectDrop(t, nc, "Data-Out never sent")
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("dropped after %v", d)
	}
}

// 500 TCP connections that never log in do not keep an initiator that
// does out: the longest-waiting of them make room for newer ones, and
// none takes a session's slot. A CHAP login succeeds meanwhile.
func TestRobustIdleConnections(t *testing.T) {
	const size = 1 << 20
	chap := &CHAP{User: "alice", Secret: "robust-chap-secret"}
	tt := startTarget(t, freeModel(t, size), emu.NewMemStore(size), TargetConfig{CHAP: chap})
	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for range 500 {
		c, err := net.Dial("tcp", tt.addr)
		if err != nil {
			t.Fatalf("after %d idle connections: %v", len(idle), err)
		}
		idle = append(idle, c)
	}
	ctx := ctxT(t, 20*time.Second)
	s, err := Dial(ctx, SessionConfig{Addr: tt.addr, Target: testIQN, CHAP: chap})
	if err != nil {
		t.Fatalf("CHAP login beside 500 idle connections: %v", err)
	}
	defer s.Close()
	if err := s.TestUnitReady(ctx, 0); err != nil {
		t.Fatal(err)
	}
	// An evicted connection is closed at once; its handler leaves the
	// count as it returns, so the count is read once those have run.
	n := tt.tg.Sessions()
	for deadline := time.Now().Add(2 * time.Second); n > defaultMaxWaiting+1 && time.Now().Before(deadline); n = tt.tg.Sessions() {
		time.Sleep(10 * time.Millisecond)
	}
	st := tt.tg.Stats()
	if n > defaultMaxWaiting+1 {
		t.Errorf("the target holds %d connections; at most %d waiting and the session", n, defaultMaxWaiting)
	}
	if st.Evicted < 500-defaultMaxWaiting {
		t.Errorf("%d idle connections evicted, want %d", st.Evicted, 500-defaultMaxWaiting)
	}
	if l := tt.log.String(); strings.Count(l, "\n") > 5 {
		t.Errorf("idle connections fill the log:\n%.2000s", l)
	}
}

// A logged-in session that goes silent is pinged with a NOP-In and
// dropped when it does not answer; the initiator's own session answers
// the pings and lives on.
func TestRobustNopInReaping(t *testing.T) {
	const size = 1 << 20
	tt := startTarget(t, freeModel(t, size), emu.NewMemStore(size),
		TargetConfig{NopInInterval: 100 * time.Millisecond, NopInTimeout: 200 * time.Millisecond})
	s := tt.dial(t, SessionConfig{})
	nc, _ := rawLogin(t, tt.addr)
	defer nc.Close()
	p := expect(t, nc, pdu.OpNopIn, "silent session")
	if p.ITT() != pdu.Reserved || p.U32(pdu.OffTTT) == pdu.Reserved {
		t.Errorf("NOP-In ping with ITT 0x%x, TTT 0x%x", p.ITT(), p.U32(pdu.OffTTT))
	}
	start := time.Now()
	expectDrop(t, nc, "a session that does not answer NOP-In")
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("dropped %v after the ping; NopInTimeout is 200 ms", d)
	}
	time.Sleep(500 * time.Millisecond)
	if err := s.TestUnitReady(ctxT(t, 5*time.Second), 0); err != nil {
		t.Errorf("a session that answers the pings: %v", err)
	}
}

// Failed CHAP responses slow their address down: after a failure, the
// next responses are checked one at a time, each after a backoff that
// doubles, and logged once per address and interval; the right secret
// still logs in.
func TestRobustCHAPBackoff(t *testing.T) {
	const size = 1 << 20
	chap := &CHAP{User: "alice", Secret: "robust-chap-secret"}
	tt := startTarget(t, freeModel(t, size), emu.NewMemStore(size), TargetConfig{CHAP: chap})
	wrong := SessionConfig{Addr: tt.addr, Target: testIQN, CHAP: &CHAP{User: "alice", Secret: "a-wrong-guess-0"}}
	ctx := ctxT(t, 30*time.Second)
	// The first failure books the next check chapBackoffMin after the
	// target refused it, which is before this Dial returns: time from
	// before it.
	start := time.Now()
	if _, err := Dial(ctx, wrong); err == nil {
		t.Fatal("a wrong secret logged in")
	}
	const guesses = 5
	errs := make(chan error, guesses)
	for range guesses {
		go func() {
			_, err := Dial(ctx, wrong)
			errs <- err
		}()
	}
	for range guesses {
		if err := <-errs; err == nil {
			t.Fatal("a wrong secret logged in")
		}
	}
	// One check per backoff of at least chapBackoffMin.
	if d := time.Since(start); d < guesses*chapBackoffMin {
		t.Errorf("%d concurrent wrong guesses answered in %v; want at least %v", guesses, d, guesses*chapBackoffMin)
	}
	if n := strings.Count(tt.log.String(), "login refused"); n != 1 {
		t.Errorf("%d log lines for %d failures; want 1 per %v", n, guesses+1, failLogEvery)
	}
	s, err := Dial(ctx, SessionConfig{Addr: tt.addr, Target: testIQN, CHAP: chap})
	if err != nil {
		t.Fatalf("the right secret after failures: %v", err)
	}
	s.Close()
}
