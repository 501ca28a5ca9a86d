package smb

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nasemu/nasemu/bench"
	"github.com/nasemu/nasemu/models"
)

// smallIO is the servers' smb2 max read, write and trans in
// TestTargetHonoursServerLimits: 64 KiB, the least an SMB 2.1 server
// offers (one credit's payload), 16 times below the 1 MiB requests of
// cdm's sequential jobs.
const smallIO = 64 << 10

// TestTargetHonoursServerLimits: against an smbd whose negotiated
// MaxReadSize, MaxWriteSize and MaxTransactSize are 64 KiB, 1 MiB reads
// and writes through smb:// are split into requests within those limits
// (seen on the wire by a proxy between the target and smbd), a 1 MiB
// sequential write and read job completes, and the bytes on the share
// and read back are the ones written. go-smb2 splits a ReadAt or WriteAt
// at the negotiated sizes and charges each request its credits; this
// test holds the target to it.
func TestTargetHonoursServerLimits(t *testing.T) {
	srv := startSamba(t)
	v := strconv.Itoa(smallIO)
	srv, px, tg := limitedSamba(t, "smb2 max read = "+v, "smb2 max write = "+v)
	if r, w, _ := px.negotiated(); r != smallIO || w != smallIO {
		t.Fatalf("smbd negotiates read %d, write %d; want %d", r, w, smallIO)
	}
	bigIO(t, tg, srv.dir)

	const size = 1 << 20
	reads, writes, maxRead, maxWrite := px.io()
	t.Logf("on the wire: %d reads (largest %d bytes), %d writes (largest %d bytes)", reads, maxRead, writes, maxWrite)
	if maxRead > smallIO || maxWrite > smallIO {
		t.Errorf("requests beyond the negotiated %d bytes: read %d, write %d", smallIO, maxRead, maxWrite)
	}
	// 1 MiB read directly and 8 MiB by the job; 2 MiB written and 8 MiB.
	if reads < 9*size/smallIO || writes < 10*size/smallIO {
		t.Errorf("%d reads and %d writes of at most %d bytes cannot carry 9 MiB and 10 MiB", reads, writes, smallIO)
	}
}

// limitedSamba starts smbd, adds params and smb2 max trans = 64 KiB to
// its configuration, and returns it, a wire proxy in front of it and a
// target through the proxy whose connection negotiated the new
// configuration (its MaxTransactSize is 64 KiB).
func limitedSamba(t *testing.T, params ...string) (*testServer, *wireProxy, *Target) {
	t.Helper()
	srv := startSamba(t)
	reconfigureSamba(t, srv.Samba, append(params, "smb2 max trans = "+strconv.Itoa(smallIO))...)
	px := startWireProxy(t, srv.Addr())
	if err := os.Mkdir(filepath.Join(srv.dir, "bench"), 0o777); err != nil {
		t.Fatal(err)
	}
	url := "smb://" + srv.User() + ":" + testPassword + "@" + px.addr + "/" + srv.Share() + "/bench"
	// smbd reads the new configuration at its next connection after SIGHUP.
	for deadline := time.Now().Add(10 * time.Second); ; {
		tg := openTarget(t, url)
		if _, err := tg.Layout("probe.dat", 4096, true); err != nil {
			t.Fatal(err)
		}
		_, _, x := px.negotiated()
		if x == smallIO {
			return srv, px, tg
		}
		tg.Close()
		if time.Now().After(deadline) {
			t.Fatalf("smbd does not take up its new configuration: max trans %d", x)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// bigIO writes 2 MiB to a file of the target in 1 MiB requests and reads
// the second MiB back, checks the bytes read and on the share (dir is the
// share's directory, the target's is bench under it), then runs 1 MiB
// sequential write and read jobs of 8 MiB at queue depth 4.
func bigIO(t *testing.T, tg *Target, dir string) {
	t.Helper()
	const size = 1 << 20
	f, _, err := tg.Open(0, "io.dat", 2*size, bench.OpenFlags{Write: true, Create: true})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 2*size)
	for i := range want {
		want[i] = byte(i*7 + i>>16)
	}
	for off := int64(0); off < 2*size; off += size {
		if _, err := f.Do(0, models.Write, off, size, want[off:off+size]); err != nil {
			t.Fatalf("1 MiB write at %d: %v", off, err)
		}
	}
	got := make([]byte, size)
	if _, err := f.Do(0, models.Read, size, size, got); err != nil {
		t.Fatalf("1 MiB read: %v", err)
	}
	if !bytes.Equal(got, want[size:]) {
		t.Error("the 1 MiB read returned other bytes than were written")
	}
	if _, err := f.Close(0); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "bench", "io.dat")); err != nil || !bytes.Equal(b, want) {
		t.Errorf("the share's file holds other bytes than were written (%v, %d bytes)", err, len(b))
	}

	jobs := []bench.Job{
		{Name: "SEQ1M write", RW: bench.Write, BS: size, Size: 8 * size, IODepth: 4, Filename: "seq.dat"},
		{Name: "SEQ1M read", RW: bench.Read, BS: size, Size: 8 * size, IODepth: 4, Filename: "seq.dat"},
	}
	rep, err := bench.Run(tg, jobs, bench.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		if r.Bytes != 8*size {
			t.Errorf("%s moved %d bytes, want %d", r.Name, r.Bytes, 8*size)
		}
	}

}

// reconfigureSamba adds global parameters to smbd's configuration and
// has it reload it (SIGHUP): each new connection then negotiates with them.
func reconfigureSamba(t *testing.T, s *Samba, params ...string) {
	t.Helper()
	conf := filepath.Join(s.cfg.Dir, "smb.conf")
	b, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), "[global]\n", "[global]\n\t"+strings.Join(params, "\n\t")+"\n", 1)
	if text == string(b) {
		t.Fatal("no [global] section in smb.conf")
	}
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
}

// wireProxy forwards TCP connections to an SMB server and reads the SMB2
// messages that pass: the limits of the last NEGOTIATE response, and the
// count and largest length of READ and WRITE requests.
type wireProxy struct {
	addr string
	mu   sync.Mutex
	// negotiated by the last NEGOTIATE response
	maxRead, maxWrite, maxTrans uint32
	reads, writes               int
	bigRead, bigWrite           uint32
}

func startWireProxy(t *testing.T, to string) *wireProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &wireProxy{addr: l.Addr().String()}
	var wg sync.WaitGroup
	var conns []net.Conn
	var cmu sync.Mutex
	t.Cleanup(func() {
		l.Close()
		cmu.Lock()
		for _, c := range conns {
			c.Close()
		}
		cmu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", to)
			if err != nil {
				c.Close()
				continue
			}
			cmu.Lock()
			conns = append(conns, c, s)
			cmu.Unlock()
			wg.Add(2)
			go func() { defer wg.Done(); p.pipe(s, c, false); s.Close(); c.Close() }()
			go func() { defer wg.Done(); p.pipe(c, s, true); s.Close(); c.Close() }()
		}
	}()
	return p
}

// pipe copies the NBSS-framed SMB2 stream from src to dst, message by
// message, and records what fromServer's direction carries.
func (p *wireProxy) pipe(dst, src net.Conn, fromServer bool) {
	var hdr [4]byte
	for {
		if _, err := io.ReadFull(src, hdr[:]); err != nil {
			return
		}
		n := int(hdr[1])<<16 | int(hdr[2])<<8 | int(hdr[3])
		msg := make([]byte, n)
		if _, err := io.ReadFull(src, msg); err != nil {
			return
		}
		p.record(msg, fromServer)
		if _, err := dst.Write(append(hdr[:], msg...)); err != nil {
			return
		}
	}
}

// record reads each SMB2 message of a (possibly compound) packet.
func (p *wireProxy) record(msg []byte, fromServer bool) {
	le := binary.LittleEndian
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(msg) >= 64 && string(msg[:4]) == "\xfeSMB" {
		cmd, next := le.Uint16(msg[12:]), le.Uint32(msg[20:])
		body := msg[64:]
		switch {
		case fromServer && cmd == 0 && len(body) >= 40:
			p.maxTrans, p.maxRead, p.maxWrite = le.Uint32(body[28:]), le.Uint32(body[32:]), le.Uint32(body[36:])
		case !fromServer && cmd == 8 && len(body) >= 8:
			p.reads++
			p.bigRead = max(p.bigRead, le.Uint32(body[4:]))
		case !fromServer && cmd == 9 && len(body) >= 8:
			p.writes++
			p.bigWrite = max(p.bigWrite, le.Uint32(body[4:]))
		}
		if next == 0 || int(next) > len(msg) {
			return
		}
		msg = msg[next:]
	}
}

func (p *wireProxy) negotiated() (read, write, trans uint32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.maxRead, p.maxWrite, p.maxTrans
}

func (p *wireProxy) io() (reads, writes int, maxRead, maxWrite uint32) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.reads, p.writes, p.bigRead, p.bigWrite
}
