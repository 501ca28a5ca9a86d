package proto

import (
	"fmt"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/link"
	"github.com/nasemu/nasemu/models/timeline"
)

// Computer is implemented by a device below the protocol that owns CPU
// cores (package nas's Controller): Compute runs fixed + bytes /
// bytesPerSecond of work on the core that frees first, starting no earlier
// than at, and returns when it is done. The protocol charges SMB signing
// and encryption there; below a device without cores (a models/fixed
// device in tests) it charges them on a core of its own per session.
type Computer interface {
	Compute(at, fixed time.Duration, bytes int64, bytesPerSecond float64) (done time.Duration)
}

// Scaler is implemented by a device below the protocol that knows how fast
// its CPU is (package nas's Controller): RelativeCost is how many times
// longer than a ~3 GHz x86 core it takes for the same work. The default
// server costs (ServerRequest, ServerFileOp) are an x86 core's, so the
// protocol scales them by it (when they are the x86 defaults): Samba on a 1.7 GHz Cortex-A15 NAS spends
// four times as long on each request as on a desktop x86. Costs a setup
// states explicitly are taken as they are.
type Scaler interface {
	RelativeCost() float64
}

// Prober is implemented by a device below the protocol that has a page
// cache (package nas's Controller): Uncached is how many of its pages a
// read of r would have to fill. The iSCSI target charges ServerMiss for
// each on the connection's thread.
type Prober interface {
	Uncached(r models.Request) int64
}

// Device is a protocol between a client and the NAS device below it; it is
// the outermost models.Device of a stack. It is not safe for concurrent use.
type Device struct {
	cfg  Config
	link *link.Link
	nas  models.Device
	cpu  Computer          // the NAS's cores, or nil
	pf   models.Prefetcher // the NAS's, or nil
	// probe tells iSCSI reads which pages the NAS's page cache lacks, or nil.
	probe Prober

	proto    uint8 // protoLocal, protoSMB, protoISCSI
	maxIO    int64
	sessions []*session // by Flow

	// signing or encryption cost: one core's rate and its inverse
	cryptoRate, cryptoNsPerByte float64
	encrypted                   bool // messages carry a transform header

	fs    clientFS // the client filesystem on an iSCSI LUN (ntfs client)
	block bool     // iSCSI client block: a job on the raw LUN, no filesystem

	roundTrips, smbRequests, iscsiCommands, iscsiR2Ts, fileOps int64
	cryptoBytes                                                int64
	threadBusy                                                 time.Duration // server threads' work, all sessions
}

const (
	protoLocal uint8 = iota
	protoSMB
	protoISCSI
)

var (
	_ models.Device   = (*Device)(nil)
	_ models.Observer = (*Device)(nil)
	_ models.Parent   = (*Device)(nil)
)

// New returns the protocol cfg describes, carried by l, in front of nas.
// For protocol local, l must be nil or of kind local.
func New(cfg Config, l *link.Link, nas models.Device) (*Device, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if nas == nil {
		return nil, fmt.Errorf("%w: protocol %s has no NAS device below it", models.ErrConfig, cfg.Protocol)
	}
	cfg = cfg.Defaults()
	if sc, ok := nas.(Scaler); ok {
		// Server costs are stated for a reference x86 core; the NAS's
		// own cores take RelativeCost times as long.
		if rc := sc.RelativeCost(); rc > 0 {
			cfg.ServerRequest = scaleCost(cfg.ServerRequest, rc)
			cfg.ServerFileOp = scaleCost(cfg.ServerFileOp, rc)
			cfg.ServerWrite = scaleCost(cfg.ServerWrite, rc)
			cfg.ServerMiss = scaleCost(cfg.ServerMiss, rc)
		}
	}
	if l == nil {
		if cfg.Protocol != Local {
			return nil, fmt.Errorf("%w: protocol %s needs a link (kind local for a client on the NAS itself)", models.ErrConfig, cfg.Protocol)
		}
		l, _ = link.New(link.Config{Kind: "local"})
	}
	if cfg.Protocol == Local && !l.Local() {
		return nil, fmt.Errorf("%w: protocol local has no network, but the link is %v: use link kind local", models.ErrConfig, l)
	}
	d := &Device{cfg: cfg, link: l, nas: nas, maxIO: int64(cfg.MaxIO)}
	d.cpu, _ = nas.(Computer)
	d.pf, _ = nas.(models.Prefetcher)
	d.probe, _ = nas.(Prober)
	switch cfg.Protocol {
	case Local:
		d.proto = protoLocal
	case SMB2, SMB3:
		d.proto = protoSMB
		// Encryption replaces signing when both are on.
		alg := cfg.Signing
		if cfg.Encryption != None {
			alg, d.encrypted = cfg.Encryption, true
		}
		if alg != None {
			d.cryptoRate = cfg.CryptoRate
			if d.cryptoRate == 0 {
				d.cryptoRate = cryptoRates[alg]
			}
			d.cryptoNsPerByte = 1e9 / d.cryptoRate
		}
	case ISCSI:
		d.proto = protoISCSI
		d.block = cfg.Client == ClientBlock
		if !d.block {
			d.fs = newClientFS(nas.Capacity())
		}
	}
	return d, nil
}

// SetsValidData reports whether the client's filesystem can make a file's
// bytes valid without writing them (Windows' SetFileValidData, which
// diskspd uses to create its test file): NTFS on an iSCSI LUN or on the
// machine's own volume can; an SMB share cannot (the redirector does not
// support it, and diskspd writes the file instead). A job on a raw block
// device (iSCSI client block) lays nothing out either: every block of the
// device is there to read.
func (d *Device) SetsValidData() bool { return d.proto != protoSMB }

// scaleCost scales a server cost stated for the reference core by rc; a
// negative cost (none) stays as it is.
func scaleCost(d time.Duration, rc float64) time.Duration {
	if d <= 0 {
		return d
	}
	return time.Duration(float64(d) * rc)
}

// Config returns the configuration, defaults filled in.
func (d *Device) Config() Config { return d.cfg }

// Link returns the link the protocol runs over.
func (d *Device) Link() *link.Link { return d.link }

// Capacity implements models.Device: the NAS device's.
func (d *Device) Capacity() int64 { return d.nas.Capacity() }

// Children implements models.Parent.
func (d *Device) Children() []models.Device { return []models.Device{d.nas} }

// Submit implements models.Device: the request issued by the client of
// r.Flow at at completes when its last response reaches the client.
func (d *Device) Submit(at time.Duration, r models.Request) (time.Duration, error) {
	if err := models.CheckRange(r, d.nas.Capacity()); err != nil {
		return at, err
	}
	if r.Flow < 0 || r.Flow >= MaxFlows {
		return at, fmt.Errorf("%w: %v has flow %d: want 0..%d", models.ErrInvalid, r, r.Flow, MaxFlows-1)
	}
	if d.pf != nil {
		// The NAS's lookup of r overlaps the protocol's and the link's work.
		d.pf.Prefetch(r)
	}
	if r.Op.IsFileOp() {
		d.fileOps++
	}
	switch d.proto {
	case protoSMB:
		return d.smb(at, r)
	case protoISCSI:
		return d.iscsi(at, r)
	}
	return d.nas.Submit(at, r)
}

// atServer returns a remote client's data request r as the server
// receives it: the client's unbuffered flag (Direct) concerns the client's
// own cache, not the server's — Samba has no O_DIRECT path and a
// file-backed iSCSI LUN is read and written through the NAS's page cache —
// so it is dropped. Write-through (Request.WriteThrough) passes on. The
// client's cache itself (the SMB client's read-ahead and write-behind, the
// iSCSI client filesystem's) is modelled as the emulated mount sees it, so
// that sim: and the emulated targets agree.
func atServer(r models.Request) models.Request {
	r.Direct = false
	return r
}

// MaxFlows bounds Request.Flow: the protocol keeps state for every client
// connection, indexed by Flow.
const MaxFlows = 1 << 16

// session is the state the protocol keeps for one client connection.
type session struct {
	slots window // SMB credits or iSCSI command slots

	// serverBusy is when this session's server thread is free: one smbd
	// process serves a client connection, and its main thread parses,
	// dispatches, signs or encrypts and answers every request of the
	// session in turn (file I/O itself goes to helper threads), so that
	// work is serial per session even on a multi-core NAS.
	serverBusy time.Duration
	// conn is an iSCSI connection's core: LIO runs a receive and a
	// transmit thread per connection and pins both to the same CPU
	// (iscsit_thread_check_cpumask), so their work shares one calendar,
	// the receive side's at a PDU's arrival and the transmit side's when
	// the backend completes (iscsi.go). nil for SMB.
	conn *timeline.Timeline

	inFile  bool // a file is open (between Create/Open and Close)
	written bool // the open file was written

	// SMB client cache on a file open between Create/Open and Close:
	// the file's extent, where its sequential stream stands, the reads
	// ahead, and the writes behind.
	file         models.Request
	seqEnd       int64                         // end of the last data request of the stream; -1: none yet
	ahead        [SMBReadAhead]aheadRead       // reads issued ahead of the reader, by offset
	aheadN       int                           // how many are in ahead
	pipe         [SMBWriteBehind]time.Duration // completions of the last writes behind
	pipeNext     int
	pendingWrite time.Duration // when every write behind is done

	// iSCSI client filesystem: write-behind of file data.
	behind   window
	lazyDone time.Duration // when every write-behind write has reached the NAS
	fileDone time.Duration // when the open file's own data writes have completed
}

func (d *Device) session(flow int) *session {
	if flow < len(d.sessions) {
		if s := d.sessions[flow]; s != nil {
			return s
		}
	}
	for len(d.sessions) <= flow {
		d.sessions = append(d.sessions, nil)
	}
	s := &session{}
	switch d.proto {
	case protoSMB:
		s.slots = newWindow(d.cfg.Credits)
	case protoISCSI:
		s.slots = newWindow(d.cfg.QueueDepth)
		s.behind = newWindow(writeBehind)
		s.conn = new(timeline.Timeline)
	}
	d.sessions[flow] = s
	return s
}

// window is a pool of n slots (credits, command slots) taken and returned
// in FIFO order: a request that needs c slots takes the next c, and may
// start once the last of them has come back.
type window struct {
	free []time.Duration // when each slot returns
	head int
}

func newWindow(n int) window { return window{free: make([]time.Duration, n)} }

// take returns when c slots are free at or after t; give must follow with
// the same c.
func (w *window) take(t time.Duration, c int) time.Duration {
	n := len(w.free)
	for i := 0; i < c; i++ {
		t = max(t, w.free[(w.head+i)%n])
	}
	return t
}

// give returns the c slots taken last at done.
func (w *window) give(done time.Duration, c int) {
	n := len(w.free)
	for i := 0; i < c; i++ {
		w.free[w.head] = done
		w.head++
		if w.head == n {
			w.head = 0
		}
	}
}

// crypto books signing or encryption of an n-byte message for session s at
// t and returns when it is done. One smbd process serves a session, so its
// crypto is serial whichever core runs it.
func (d *Device) crypto(t time.Duration, s *session, n int64) time.Duration {
	if d.cryptoRate == 0 {
		return t
	}
	d.cryptoBytes += n
	if d.cpu != nil {
		return d.serve(s, t, 0, n, d.cryptoRate)
	}
	work := time.Duration(float64(n)*d.cryptoNsPerByte + 0.5)
	d.threadBusy += work
	s.serverBusy = max(t, s.serverBusy) + work
	return s.serverBusy
}

// serve runs fixed plus n bytes at rate bytes/s (one core's; 0: fixed
// only) of session s's server-thread work on the NAS's cores, after the
// thread's earlier work and no earlier than at, and returns when it is
// done. The work counts as the thread's busy time; a wait for a free core
// is the cores', not the thread's.
func (d *Device) serve(s *session, at, fixed time.Duration, n int64, rate float64) time.Duration {
	work := fixed
	if rate > 0 && n > 0 {
		work += time.Duration(float64(n) / rate * 1e9)
	}
	d.threadBusy += work
	s.serverBusy = d.cpu.Compute(max(at, s.serverBusy), fixed, n, rate)
	return s.serverBusy
}

// cryptoRates are the bytes per second one server core signs or encrypts
// unless Config.CryptoRate says otherwise: a 2015-era x86 core with
// AES-NI and PCLMULQDQ but no SHA extensions, through Samba's GnuTLS
// (OpenSSL speed figures for one core, rounded down for per-message setup).
var cryptoRates = map[string]float64{
	HMACSHA256: 400e6,
	AESCMAC:    900e6,
	AESGMAC:    3000e6,
	AES128CCM:  700e6,
	AES256CCM:  550e6,
	AES128GCM:  2000e6,
	AES256GCM:  1600e6,
}

// Counters implements models.Observer: the protocol's counters and its
// link's.
func (d *Device) Counters() []models.Counter {
	c := []models.Counter{
		{Name: "round_trips", Value: float64(d.roundTrips)},
		{Name: "file_ops", Value: float64(d.fileOps)},
	}
	switch d.proto {
	case protoSMB:
		c = append(c,
			models.Counter{Name: "smb_requests", Value: float64(d.smbRequests)},
			models.Counter{Name: "crypto_bytes", Value: float64(d.cryptoBytes)})
	case protoISCSI:
		c = append(c,
			models.Counter{Name: "iscsi_commands", Value: float64(d.iscsiCommands)},
			models.Counter{Name: "iscsi_r2ts", Value: float64(d.iscsiR2Ts)})
	}
	return append(c, d.link.Counters()...)
}

// Resources implements models.Accountant: the link's directions and the
// server threads, one per client session (the work the protocol charges
// on the NAS's cores; the cores themselves are the NAS's resources).
func (d *Device) Resources(at time.Duration) []models.Resource {
	out := d.link.Resources(at)
	if d.threadBusy > 0 {
		sessions, ahead := 0, time.Duration(0)
		for _, s := range d.sessions {
			if s != nil {
				sessions++
				ahead += max(0, s.serverBusy-at)
			}
		}
		name := "SMB server thread"
		if d.proto == protoISCSI {
			name = "iSCSI target thread"
		}
		out = append(out, models.Resource{Name: name, Class: models.ClassProtocol, Units: max(sessions, 1), Busy: d.threadBusy - ahead})
	}
	return out
}

var _ models.Accountant = (*Device)(nil)
