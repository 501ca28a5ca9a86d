package proto

import (
	"errors"
	"testing"
	"time"

	"github.com/nasemu/nasemu/models"
	"github.com/nasemu/nasemu/models/link"
)

// The documented defaults, protocol by protocol.
func TestDefaults(t *testing.T) {
	if c := (Config{}).Defaults(); c.Protocol != Local {
		t.Errorf("default protocol %q", c.Protocol)
	}
	smb3 := Config{Protocol: SMB3}.Defaults()
	if smb3.Protocol != SMB3 || smb3.MaxIO != 1<<20 || smb3.Credits != 512 || smb3.Signing != None || smb3.Encryption != None || smb3.ClientOp != 800*time.Microsecond ||
		smb3.ServerRequest != 15*time.Microsecond || smb3.ServerFileOp != 80*time.Microsecond {
		t.Errorf("smb3 defaults %+v", smb3)
	}
	smb2 := Config{Protocol: SMB2, Signing: Yes}.Defaults()
	if smb2.MaxIO != 64<<10 || smb2.Credits != 128 || smb2.Signing != HMACSHA256 {
		t.Errorf("smb2 defaults %+v", smb2)
	}
	is := Config{Protocol: ISCSI}.Defaults()
	if is.MaxIO != 256<<10 || is.FirstBurst != 64<<10 || is.MaxBurst != 256<<10 || is.MaxRecvDataSegment != 256<<10 ||
		is.QueueDepth != 128 || !*is.ImmediateData || !*is.InitialR2T || is.HeaderDigest || is.DataDigest ||
		is.ServerRequest != DefaultISCSIServerRequest || is.ServerFileOp != 0 {
		t.Errorf("iscsi defaults %+v", is)
	}
	if enc := (Config{Protocol: SMB3, Encryption: Yes}).Defaults(); enc.Encryption != AES128GCM {
		t.Errorf("encryption yes means %s", enc.Encryption)
	}
}

func TestValidate(t *testing.T) {
	for _, c := range []Config{{}, {Protocol: Local}, {Protocol: SMB2}, {Protocol: ISCSI, HeaderDigest: true}, {Protocol: SMB3, Signing: AESGMAC, Encryption: AES256GCM}} {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
	no := false
	for _, c := range []Config{
		{Protocol: "nfs"},
		{Protocol: SMB2, MaxIO: 1 << 20},
		{Protocol: SMB2, Encryption: Yes},
		{Protocol: SMB3, MaxIO: 16 << 20},
		{Protocol: SMB3, Credits: 8},
		{Protocol: SMB3, Signing: "md5"},
		{Protocol: SMB3, QueueDepth: 32},
		{Protocol: SMB3, InitialR2T: &no},
		{Protocol: ISCSI, Credits: 64},
		{Protocol: ISCSI, Encryption: AES128GCM},
		{Protocol: ISCSI, FirstBurst: 1 << 20},
		{Protocol: ISCSI, MaxBurst: 100},
		{Protocol: ISCSI, MaxIO: 1024},
		{Protocol: Local, MaxIO: 1 << 20},
		{Protocol: SMB3, Credits: -1},
		{Protocol: ISCSI, ServerFileOp: time.Millisecond},
		{Protocol: Local, ServerRequest: time.Microsecond},
	} {
		err := c.Validate()
		if !errors.Is(err, models.ErrConfig) {
			t.Errorf("%+v: %v, want ErrConfig", c, err)
			continue
		}
		t.Logf("%v", err)
	}
}

// Encryption on a session is serial CPU work on the NAS: at 50 MB/s per
// core a single client's read cannot beat 50 MB/s even on 1GbE, also when
// the NAS has cores of its own (Computer) to run it on.
func TestEncryptionCost(t *testing.T) {
	d := newStack(t, Config{Protocol: SMB3, Encryption: AES128GCM, CryptoRate: 50e6}, link.Config{Kind: "1gbe"}, fastNAS(t))
	got := mbps(200<<20, closedLoop(t, d, 1, 8, 200, seqRead(1<<20)))
	t.Logf("encrypted read at 50 MB/s per core: %.1f MB/s", got)
	if got < 45 || got > 50 {
		t.Errorf("%.1f MB/s, want just under 50", got)
	}
	if counter(d, "crypto_bytes") < 200<<20 {
		t.Errorf("crypto bytes %v", counter(d, "crypto_bytes"))
	}
	two := mbps(400<<20, closedLoop(t, newStack(t, Config{Protocol: SMB3, Encryption: AES128GCM, CryptoRate: 50e6}, link.Config{Kind: "1gbe"}, fastNAS(t)), 2, 8, 400, seqRead(1<<20)))
	if two < 1.8*got {
		t.Errorf("two sessions %.1f MB/s, want about twice one (%.1f): one core each", two, got)
	}

	cpu := &coresNAS{fakeNAS: fakeNAS{capacity: 64 * gib}, cores: make([]time.Duration, 4)}
	d = newStack(t, Config{Protocol: SMB3, Signing: AESCMAC, CryptoRate: 50e6}, link.Config{Kind: "10gbe"}, cpu)
	got = mbps(200<<20, closedLoop(t, d, 1, 8, 200, seqWrite(1<<20)))
	t.Logf("signed writes at 50 MB/s on a 4-core NAS: %.1f MB/s, %v bytes on its cores", got, cpu.bytes)
	if cpu.bytes < 200<<20 || got < 45 || got > 50 {
		t.Errorf("signed writes %.1f MB/s, NAS cores charged %d bytes", got, cpu.bytes)
	}
}

// coresNAS is a fakeNAS with CPU cores the protocol can charge.
type coresNAS struct {
	fakeNAS
	cores []time.Duration
	bytes int64
}

var _ Computer = (*coresNAS)(nil)

func (c *coresNAS) Compute(at, fixed time.Duration, bytes int64, rate float64) time.Duration {
	c.bytes += bytes
	best := 0
	for i := range c.cores {
		if c.cores[i] < c.cores[best] {
			best = i
		}
	}
	cost := fixed
	if rate > 0 {
		cost += time.Duration(float64(bytes) / rate * 1e9)
	}
	c.cores[best] = max(at, c.cores[best]) + cost
	return c.cores[best]
}

// A bare protocol name is a whole configuration.
func TestUnmarshalText(t *testing.T) {
	c := Config{Credits: 5}
	if err := c.UnmarshalText([]byte("iscsi")); err != nil || c.Protocol != ISCSI || c.Credits != 0 {
		t.Errorf("%+v, %v", c, err)
	}
}
