package iscsi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nasemu/nasemu/iscsi/pdu"
)

// rawLogin logs in on a bare connection (no security stage, no digests)
// and returns the connection and the next CmdSN.
func rawLogin(t *testing.T, addr string) (net.Conn, uint32) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	p := pdu.New(pdu.OpLoginReq)
	p.SetImmediate()
	p.Header[1] = 0x80 | 1<<2 | 3 // T, CSG operational, NSG full feature
	p.Header[8] = 0x80
	p.SetU32(pdu.OffCmdSN, 1)
	p.Data = pdu.Text{{Key: "InitiatorName", Value: "iqn.2026-01.org.nasemu:raw"}, {Key: "TargetName", Value: testIQN}, {Key: "SessionType", Value: "Normal"}}.Encode()
	if err := pdu.Write(nc, p, pdu.Limits{}); err != nil {
		t.Fatal(err)
	}
	r, err := pdu.Read(nc, pdu.Limits{})
	if err != nil || r.Opcode() != pdu.OpLoginResp || r.Header[36] != 0 || r.Flags()&0x80 == 0 {
		t.Fatalf("raw login: %v %v", r, err)
	}
	return nc, 1
}

// expectDrop waits for the target to close nc, skipping any PDUs (a
// reject, a login response) it sends first.
func expectDrop(t *testing.T, nc net.Conn, what string) {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		_, err := pdu.Read(nc, pdu.Limits{MaxData: 1 << 24})
		if err == nil {
			continue
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Errorf("%s: the connection stayed open", what)
		}
		return
	}
}

// expect reads the next PDU and checks its opcode.
func expect(t *testing.T, nc net.Conn, op pdu.Opcode, what string) *pdu.PDU {
	t.Helper()
	nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	p, err := pdu.Read(nc, pdu.Limits{MaxData: 1 << 24})
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if p.Opcode() != op {
		t.Fatalf("%s: got %s, want %s", what, p.Opcode(), op)
	}
	return p
}

func nop(itt, cmdSN uint32, immediate bool) *pdu.PDU {
	p := pdu.New(pdu.OpNopOut)
	if immediate {
		p.SetImmediate()
	}
	p.SetU32(pdu.OffITT, itt)
	p.SetU32(pdu.OffTTT, pdu.Reserved)
	p.SetU32(pdu.OffCmdSN, cmdSN)
	return p
}

func TestMalformedPDUs(t *testing.T) {
	const size = 8 << 20
	tt := startFreeTarget(t, size)

	// A well-behaved session keeps working throughout.
	good := tt.dial(t, SessionConfig{})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var goodErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		ctx := context.Background()
		buf := bytes.Repeat([]byte{0x5a}, 4096)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			lba := uint64(i%64) * 8
			if err := good.Write16(ctx, 0, lba, 512, buf); err != nil {
				goodErr = err
				return
			}
			got := make([]byte, 4096)
			if err := good.Read16(ctx, 0, lba, 512, got); err != nil || !bytes.Equal(got, buf) {
				goodErr = errors.Join(err, errors.New("data differs"))
				return
			}
		}
	}()

	t.Run("random-bytes", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 7))
		for i := range 20 {
			nc, err := net.Dial("tcp", tt.addr)
			if err != nil {
				t.Fatal(err)
			}
			b := make([]byte, 48+rng.IntN(4096))
			for j := range b {
				b[j] = byte(rng.Uint32())
			}
			if i%2 == 0 {
				b[0] = byte(pdu.OpLoginReq) // get past the opcode check
			}
			nc.Write(b)
			// Half of the time the stream ends mid-PDU; otherwise the
			// target must decide on what it has (a PDU may still be
			// incomplete: then the end of the stream decides).
			if i%4 < 2 {
				nc.(*net.TCPConn).CloseWrite()
			} else {
				time.AfterFunc(500*time.Millisecond, func() { nc.(*net.TCPConn).CloseWrite() })
			}
			expectDrop(t, nc, "random bytes")
			nc.Close()
		}
	})
	t.Run("random-pdus-after-login", func(t *testing.T) {
		// Well-framed PDUs with random opcodes, flags and fields in the
		// full-feature phase: the target answers, rejects or drops, and
		// never hangs or panics.
		rng := rand.New(rand.NewPCG(11, 13))
		ops := []byte{0x00, 0x01, 0x02, 0x04, 0x05, 0x06, 0x10, 0x1c, 0x3f, 0x03}
		for round := range 30 {
			nc, sn := rawLogin(t, tt.addr)
			drained := make(chan struct{})
			go func() {
				defer close(drained)
				nc.SetReadDeadline(time.Now().Add(10 * time.Second))
				io.Copy(io.Discard, nc)
			}()
			for i := range 20 {
				p := pdu.New(pdu.Opcode(ops[rng.IntN(len(ops))]))
				for j := 1; j < pdu.HeaderLen; j++ {
					if j == pdu.OffAHSLen || (j >= pdu.OffDataLen && j < pdu.OffDataLen+3) {
						continue
					}
					p.Header[j] = byte(rng.Uint32())
				}
				if rng.IntN(2) == 0 {
					p.SetU32(pdu.OffCmdSN, sn+uint32(i))
				}
				if rng.IntN(4) == 0 {
					p.Header[32] = []byte{0x28, 0x2a, 0x88, 0x8a, 0x12, 0x00, 0x5f, 0x89}[rng.IntN(8)]
				}
				p.Data = make([]byte, rng.IntN(2048))
				for j := range p.Data {
					p.Data[j] = byte(rng.Uint32())
				}
				if pdu.Write(nc, p, pdu.Limits{}) != nil {
					break // dropped
				}
			}
			nc.(*net.TCPConn).CloseWrite()
			select {
			case <-drained:
			case <-time.After(15 * time.Second):
				t.Fatalf("round %d: the target neither answered nor dropped the connection", round)
			}
			nc.Close()
		}
	})
	t.Run("command-before-login", func(t *testing.T) {
		nc, _ := net.Dial("tcp", tt.addr)
		defer nc.Close()
		pdu.Write(nc, nop(1, 0, true), pdu.Limits{})
		expectDrop(t, nc, "NOP-Out before login")
	})
	t.Run("login-wrong-stage", func(t *testing.T) {
		nc, _ := net.Dial("tcp", tt.addr)
		defer nc.Close()
		p := pdu.New(pdu.OpLoginReq)
		p.Header[1] = 0x80 | 3<<2 | 3 // CSG full feature: no such login stage
		p.Data = pdu.Text{{Key: "InitiatorName", Value: "iqn.x"}}.Encode()
		pdu.Write(nc, p, pdu.Limits{})
		r := expect(t, nc, pdu.OpLoginResp, "login in stage 3")
		if r.Header[36] == 0 {
			t.Error("login in stage 3 accepted")
		}
		expectDrop(t, nc, "login in stage 3")
	})
	t.Run("login-in-full-feature", func(t *testing.T) {
		nc, _ := rawLogin(t, tt.addr)
		defer nc.Close()
		p := pdu.New(pdu.OpLoginReq)
		p.Header[1] = 0x80 | 1<<2 | 3
		pdu.Write(nc, p, pdu.Limits{})
		r := expect(t, nc, pdu.OpReject, "login in full-feature phase")
		if r.Header[2] != rejectProtocol {
			t.Errorf("reject reason %#x", r.Header[2])
		}
		expectDrop(t, nc, "login in full-feature phase")
	})
	t.Run("bad-opcode", func(t *testing.T) {
		nc, sn := rawLogin(t, tt.addr)
		defer nc.Close()
		p := pdu.New(pdu.Opcode(0x1f))
		p.SetU32(pdu.OffCmdSN, sn)
		pdu.Write(nc, p, pdu.Limits{})
		r := expect(t, nc, pdu.OpReject, "opcode 0x1f")
		if r.Header[2] != rejectNotSupported || !bytes.Equal(r.Data[:4], p.Header[:4]) {
			t.Errorf("reject reason %#x, data % x", r.Header[2], r.Data[:4])
		}
		// The connection still works.
		pdu.Write(nc, nop(9, sn, true), pdu.Limits{})
		if r := expect(t, nc, pdu.OpNopIn, "ping after reject"); r.ITT() != 9 {
			t.Errorf("NOP-In ITT %d", r.ITT())
		}
	})
	t.Run("cmdsn-out-of-window", func(t *testing.T) {
		nc, sn := rawLogin(t, tt.addr)
		defer nc.Close()
		pdu.Write(nc, nop(5, sn+1000, false), pdu.Limits{}) // beyond MaxCmdSN: ignored
		pdu.Write(nc, nop(6, sn-5, false), pdu.Limits{})    // below ExpCmdSN: ignored
		pdu.Write(nc, nop(7, sn, false), pdu.Limits{})      // in the window
		r := expect(t, nc, pdu.OpNopIn, "ping in the window")
		if r.ITT() != 7 {
			t.Errorf("answered ITT %d, want only 7", r.ITT())
		}
		if got := r.U32(pdu.OffExpStatSN); got != sn+1 {
			t.Errorf("ExpCmdSN %d, want %d", got, sn+1)
		}
	})
	t.Run("huge-data-segment", func(t *testing.T) {
		nc, sn := rawLogin(t, tt.addr)
		defer nc.Close()
		p := nop(3, sn, true)
		var b bytes.Buffer
		pdu.Write(&b, p, pdu.Limits{})
		wire := b.Bytes()
		wire[5], wire[6], wire[7] = 0xff, 0xff, 0xff // 16 MiB - 1 announced, nothing sent
		nc.Write(wire)
		expectDrop(t, nc, "16 MiB data segment")
	})
	t.Run("wrong-lengths", func(t *testing.T) {
		nc, sn := rawLogin(t, tt.addr)
		defer nc.Close()
		// Immediate data on a command without the W bit.
		p := pdu.New(pdu.OpSCSICmd)
		p.SetU32(pdu.OffITT, 11)
		p.SetU32(pdu.OffCmdSN, sn)
		p.Header[32] = 0x00 // TEST UNIT READY
		p.Data = make([]byte, 512)
		pdu.Write(nc, p, pdu.Limits{})
		expectDrop(t, nc, "data on a command without W")
	})
	t.Run("data-beyond-edtl", func(t *testing.T) {
		nc, sn := rawLogin(t, tt.addr)
		defer nc.Close()
		p := pdu.New(pdu.OpSCSICmd)
		p.Header[1] |= cmdWrite
		p.SetU32(pdu.OffITT, 12)
		p.SetU32(pdu.OffTTT, 512) // EDTL 512
		p.SetU32(pdu.OffCmdSN, sn)
		p.Header[32] = 0x2a // WRITE(10) of one block
		p.Header[40] = 1
		p.Data = make([]byte, 1024) // more immediate data than EDTL
		pdu.Write(nc, p, pdu.Limits{})
		expectDrop(t, nc, "immediate data beyond EDTL")
	})
	t.Run("data-out-sequence", func(t *testing.T) {
		nc, sn := rawLogin(t, tt.addr)
		defer nc.Close()
		p := pdu.New(pdu.OpSCSICmd)
		p.Header[1] |= cmdWrite
		p.SetU32(pdu.OffITT, 13)
		p.SetU32(pdu.OffTTT, 512)
		p.SetU32(pdu.OffCmdSN, sn)
		p.Header[32] = 0x2a // WRITE(10) of one block at LBA 0, no immediate data
		p.Header[40] = 1
		pdu.Write(nc, p, pdu.Limits{})
		r2t := expect(t, nc, pdu.OpR2T, "write without data")
		d := pdu.New(pdu.OpDataOut)
		d.SetU32(pdu.OffITT, 13)
		d.SetU32(pdu.OffTTT, r2t.U32(pdu.OffTTT))
		d.SetU32(pdu.OffDataSN, 5) // should be 0
		d.Data = bytes.Repeat([]byte{0xee}, 512)
		pdu.Write(nc, d, pdu.Limits{})
		r := expect(t, nc, pdu.OpSCSIResp, "Data-Out with DataSN 5")
		if r.Header[3] != 0x02 || len(r.Data) < 4 || r.Data[4]&0x0f != 0x0b {
			t.Errorf("status %#x sense % x, want CHECK CONDITION / ABORTED COMMAND", r.Header[3], r.Data)
		}
		pdu.Write(nc, nop(14, sn+1, true), pdu.Limits{})
		expect(t, nc, pdu.OpNopIn, "ping after a failed data sequence")
	})
	t.Run("stray-data-out", func(t *testing.T) {
		nc, sn := rawLogin(t, tt.addr)
		defer nc.Close()
		d := pdu.New(pdu.OpDataOut)
		d.SetU32(pdu.OffITT, 999)
		d.Data = make([]byte, 512)
		pdu.Write(nc, d, pdu.Limits{}) // no such task: ignored
		pdu.Write(nc, nop(4, sn, true), pdu.Limits{})
		expect(t, nc, pdu.OpNopIn, "ping after a stray Data-Out")
	})
	t.Run("truncated-pdu", func(t *testing.T) {
		nc, sn := rawLogin(t, tt.addr)
		var b bytes.Buffer
		p := nop(4, sn, true)
		p.Data = make([]byte, 100)
		pdu.Write(&b, p, pdu.Limits{})
		nc.Write(b.Bytes()[:60])
		nc.Close() // the target sees EOF mid-PDU
	})

	close(stop)
	wg.Wait()
	if goodErr != nil {
		t.Errorf("the well-behaved session was disturbed: %v", goodErr)
	}
	if strings.Contains(tt.log.String(), "panic") {
		t.Errorf("the target panicked:\n%s", tt.log.String())
	}
	if err := good.Ping(ctxT(t, 5*time.Second)); err != nil {
		t.Errorf("good session after the abuse: %v", err)
	}
}

// The target listens only where it is told: nothing else on the host
// answers for it.
func TestListensOnlyOnGivenAddress(t *testing.T) {
	const size = 1 << 20
	tt := startFreeTarget(t, size)
	_, port, _ := net.SplitHostPort(tt.addr)
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		ip, _, _ := net.ParseCIDR(a.String())
		if ip == nil || ip.IsLoopback() {
			continue
		}
		nc, err := net.DialTimeout("tcp", net.JoinHostPort(ip.String(), port), time.Second)
		if err == nil {
			nc.Close()
			t.Errorf("the target answers on %s too", ip)
		}
	}
	if nc, err := net.Dial("tcp", tt.addr); err != nil {
		t.Errorf("not listening on %s: %v", tt.addr, err)
	} else {
		nc.Close()
	}
	_ = io.EOF
}
