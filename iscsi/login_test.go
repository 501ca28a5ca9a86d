package iscsi

import (
	"encoding/hex"
	"strconv"
	"testing"

	"github.com/nasemu/nasemu/iscsi/pdu"
)

func testLimits() params {
	return params{MaxBurst: 1 << 20, FirstBurst: 256 << 10, RecvSegment: 256 << 10}
}

func TestNegotiation(t *testing.T) {
	n := newNegotiator(testIQN, "", nil, testLimits())
	keys := pdu.Text{
		{Key: "InitiatorName", Value: "iqn.x"}, {Key: "TargetName", Value: testIQN},
		{Key: "HeaderDigest", Value: "CRC32C,None"}, {Key: "DataDigest", Value: "None"},
		{Key: "MaxBurstLength", Value: "16776192"}, {Key: "FirstBurstLength", Value: "65536"},
		{Key: "MaxRecvDataSegmentLength", Value: "8192"}, {Key: "InitialR2T", Value: "No"},
		{Key: "ImmediateData", Value: "Yes"}, {Key: "MaxOutstandingR2T", Value: "8"},
		{Key: "X-com.example.Vendor", Value: "1"}, {Key: "MaxConnections", Value: "bogus"},
	}
	resp, st, ok := n.login(stageOperational, keys, true)
	if st != loginSuccess || !ok {
		t.Fatalf("status %#x allowed %v", st, ok)
	}
	want := map[string]string{
		"HeaderDigest": "CRC32C", "DataDigest": "None", "MaxBurstLength": "1048576",
		"FirstBurstLength": "65536", "InitialR2T": "No", "ImmediateData": "Yes",
		"MaxOutstandingR2T": "1", "X-com.example.Vendor": "NotUnderstood", "MaxConnections": "Reject",
		"MaxRecvDataSegmentLength": strconv.Itoa(256 << 10), "TargetPortalGroupTag": "1",
	}
	for k, v := range want {
		if got, _ := resp.Get(k); got != v {
			t.Errorf("%s=%q, want %q", k, got, v)
		}
	}
	if !n.p.HeaderDigest || n.p.DataDigest || n.p.MaxBurst != 1<<20 || n.p.SendSegment != 8192 || n.p.InitialR2T {
		t.Errorf("negotiated %+v", n.p)
	}
	// Missing InitiatorName, unknown target.
	if _, st, _ := newNegotiator(testIQN, "", nil, testLimits()).login(stageOperational, pdu.Text{{Key: "TargetName", Value: testIQN}}, true); st != loginMissingParam {
		t.Errorf("no InitiatorName: %#x", st)
	}
	if _, st, _ := newNegotiator(testIQN, "", nil, testLimits()).login(stageOperational, pdu.Text{{Key: "InitiatorName", Value: "i"}, {Key: "TargetName", Value: "iqn.other"}}, true); st != loginNotFound {
		t.Errorf("unknown target: %#x", st)
	}
}

func TestCHAPNegotiation(t *testing.T) {
	chap := &CHAP{User: "u", Secret: "0123456789abcdef"}
	base := pdu.Text{{Key: "InitiatorName", Value: "iqn.x"}, {Key: "TargetName", Value: testIQN}}
	// Skipping the security stage is refused.
	if _, st, _ := newNegotiator(testIQN, "", chap, testLimits()).login(stageOperational, base, true); st != loginAuthFailed {
		t.Errorf("no security stage with CHAP configured: %#x", st)
	}
	n := newNegotiator(testIQN, "", chap, testLimits())
	resp, st, ok := n.login(stageSecurity, append(base, pdu.KV{Key: "AuthMethod", Value: "CHAP,None"}), true)
	if st != 0 || ok {
		t.Fatalf("AuthMethod: status %#x, transit allowed %v before CHAP", st, ok)
	}
	if v, _ := resp.Get("AuthMethod"); v != "CHAP" {
		t.Fatalf("AuthMethod=%q", v)
	}
	resp, st, _ = n.login(stageSecurity, pdu.Text{{Key: "CHAP_A", Value: "7,5"}}, true)
	id, _ := resp.Get("CHAP_I")
	c, _ := resp.Get("CHAP_C")
	idn, _ := strconv.Atoi(id)
	ch, err := decodeBinary(c)
	if st != 0 || err != nil || len(ch) != 16 {
		t.Fatalf("challenge %q %q: %v", id, c, err)
	}
	r := chapResponse(byte(idn), chap.Secret, ch)
	_, st, ok = n.login(stageSecurity, pdu.Text{{Key: "CHAP_N", Value: "u"}, {Key: "CHAP_R", Value: "0x" + hex.EncodeToString(r[:])}}, true)
	if st != 0 || !ok || !n.authenticated {
		t.Errorf("right response: status %#x allowed %v", st, ok)
	}
}

// FuzzNegotiate drives the target's login negotiation with arbitrary key
// lists in arbitrary stages: it must never panic, never let an
// unauthenticated initiator through when CHAP is configured, and never
// negotiate values beyond the target's limits.
func FuzzNegotiate(f *testing.F) {
	f.Add([]byte("InitiatorName=i\x00TargetName="+testIQN+"\x00AuthMethod=CHAP\x00"), []byte("CHAP_A=5\x00"), []byte("CHAP_N=u\x00CHAP_R=0x00\x00"), uint8(0), true)
	f.Add([]byte("InitiatorName=i\x00SessionType=Discovery\x00MaxBurstLength=99999999\x00"), []byte("FirstBurstLength=0x10\x00"), []byte(""), uint8(1), false)
	f.Fuzz(func(t *testing.T, a, b, c []byte, stages uint8, withCHAP bool) {
		var chap *CHAP
		if withCHAP {
			chap = &CHAP{User: "u", Secret: "0123456789abcdef"}
		}
		lim := testLimits()
		n := newNegotiator(testIQN, "alias", chap, lim)
		for i, seg := range [][]byte{a, b, c} {
			keys, err := pdu.ParseText(seg)
			if err != nil {
				return
			}
			csg := int(stages>>(2*i)) & 1
			_, st, ok := n.login(csg, keys, stages&0x80 != 0)
			if st != loginSuccess {
				if ok {
					t.Fatal("a refused login allowed to transit")
				}
				return
			}
			if ok && chap != nil && !n.authenticated {
				t.Fatal("transit allowed without CHAP authentication")
			}
			if n.p.MaxBurst > lim.MaxBurst || n.p.FirstBurst > lim.FirstBurst || n.p.SendSegment < 512 || n.p.SendSegment > maxNegotiatedSegment {
				t.Fatalf("negotiated beyond limits: %+v", n.p)
			}
		}
	})
}
