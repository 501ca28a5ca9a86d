package iscsi

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/nasemu/nasemu/iscsi/pdu"
)

// Login status classes and details (RFC 7143 section 11.13.5).
const (
	loginSuccess         = 0x0000
	loginInitiatorError  = 0x0200
	loginAuthFailed      = 0x0201
	loginNotFound        = 0x0203
	loginUnsupportedVer  = 0x0205
	loginMissingParam    = 0x0207
	loginNoSession       = 0x020a
	loginInvalidRequest  = 0x020b
	loginTargetError     = 0x0300
	loginOutOfResources  = 0x0302
	stageSecurity        = 0
	stageOperational     = 1
	stageFullFeature     = 3
	sessionNormal        = "Normal"
	sessionDiscovery     = "Discovery"
	defaultMaxRecvSeg    = 8192
	defaultMaxBurst      = 262144
	defaultFirstBurst    = 65536
	maxNegotiatedSegment = 1<<24 - 1
)

// params are a connection's negotiated operational parameters.
type params struct {
	HeaderDigest, DataDigest bool
	ImmediateData            bool
	InitialR2T               bool
	MaxBurst                 int
	FirstBurst               int
	// SendSegment is the peer's MaxRecvDataSegmentLength: the largest data
	// segment we may send.
	SendSegment int
	// RecvSegment is our own MaxRecvDataSegmentLength.
	RecvSegment int
}

func defaultParams(recv int) params {
	return params{ImmediateData: true, InitialR2T: true, MaxBurst: defaultMaxBurst,
		FirstBurst: defaultFirstBurst, SendSegment: defaultMaxRecvSeg, RecvSegment: recv}
}

// negotiator is the target's side of login and text negotiation, apart
// from the network: it turns the keys of each request into the keys of the
// response. It is pure (but for the CHAP challenge's randomness), so the
// fuzzer drives it directly.
type negotiator struct {
	iqn, alias string
	chap       *CHAP
	limits     params // the target's own limits (MaxBurst, FirstBurst, RecvSegment)

	initiatorName string
	targetName    string
	sessionType   string
	authMethod    string // "None" or "CHAP" once agreed
	authenticated bool
	chapID        byte
	chapChallenge []byte
	chapUser      string
	sentRecvSeg   bool
	sentTPGT      bool
	p             params
	// failure explains a refused login for the log (never with secrets).
	failure string
}

func newNegotiator(iqn, alias string, chap *CHAP, limits params) *negotiator {
	return &negotiator{iqn: iqn, alias: alias, chap: chap, limits: limits, p: defaultParams(limits.RecvSegment)}
}

// login processes the keys of one login request in stage csg. It returns
// the response keys and a login status; transit says whether the
// initiator asked to leave the stage, and allowed whether it may.
func (n *negotiator) login(csg int, keys pdu.Text, transit bool) (resp pdu.Text, status int, allowed bool) {
	for _, kv := range keys {
		switch kv.Key {
		case "InitiatorName":
			n.initiatorName = kv.Value
		case "TargetName":
			n.targetName = kv.Value
		case "SessionType":
			if kv.Value != sessionNormal && kv.Value != sessionDiscovery {
				resp.Add(kv.Key, "Reject")
				continue
			}
			n.sessionType = kv.Value
		}
	}
	if n.initiatorName == "" {
		n.failure = "no InitiatorName"
		return nil, loginMissingParam, false
	}
	if n.sessionType == "" {
		n.sessionType = sessionNormal
	}
	if n.sessionType == sessionNormal {
		if n.targetName == "" {
			n.failure = "no TargetName in a normal session"
			return nil, loginMissingParam, false
		}
		if n.targetName != n.iqn {
			n.failure = "unknown target " + strconv.Quote(n.targetName)
			return nil, loginNotFound, false
		}
		if !n.sentTPGT {
			resp.Add("TargetPortalGroupTag", "1")
			n.sentTPGT = true
		}
	}
	if csg == stageOperational && n.chap != nil && !n.authenticated {
		n.failure = "CHAP is required; the initiator skipped authentication"
		return nil, loginAuthFailed, false
	}
	for _, kv := range keys {
		switch kv.Key {
		case "InitiatorName", "TargetName", "SessionType", "InitiatorAlias":
		case "AuthMethod":
			if csg != stageSecurity {
				resp.Add(kv.Key, "Reject")
				continue
			}
			want := "None"
			if n.chap != nil {
				want = "CHAP"
			}
			if !listHas(kv.Value, want) {
				n.failure = "initiator offers AuthMethod " + kv.Value + ", target wants " + want
				return nil, loginAuthFailed, false
			}
			n.authMethod = want
			resp.Add(kv.Key, want)
		case "CHAP_A", "CHAP_N", "CHAP_R", "CHAP_I", "CHAP_C":
		default:
			resp = append(resp, n.operational(kv)...)
		}
	}
	if csg == stageSecurity {
		r, st := n.chapStep(keys)
		resp = append(resp, r...)
		if st != loginSuccess {
			return nil, st, false
		}
	}
	allowed = transit
	if transit && csg == stageSecurity && n.chap != nil && !n.authenticated {
		allowed = false
	}
	if transit && csg == stageSecurity && n.chap == nil && n.authMethod == "" {
		n.authMethod = "None"
	}
	if allowed && !n.sentRecvSeg {
		resp.Add("MaxRecvDataSegmentLength", strconv.Itoa(n.limits.RecvSegment))
		n.sentRecvSeg = true
	}
	return resp, loginSuccess, allowed
}

func (n *negotiator) chapStep(keys pdu.Text) (pdu.Text, int) {
	var resp pdu.Text
	if n.chap == nil {
		return nil, loginSuccess
	}
	if a, ok := keys.Get("CHAP_A"); ok {
		if n.authMethod != "CHAP" || n.chapChallenge != nil {
			n.failure = "CHAP_A out of order"
			return nil, loginInitiatorError
		}
		if !listHas(a, "5") {
			n.failure = "initiator offers no MD5 CHAP (CHAP_A=" + a + ")"
			return nil, loginAuthFailed
		}
		var b [17]byte
		rand.Read(b[:])
		n.chapID = b[0]
		n.chapChallenge = b[1:]
		resp.Add("CHAP_A", "5")
		resp.Add("CHAP_I", strconv.Itoa(int(n.chapID)))
		resp.Add("CHAP_C", "0x"+hex.EncodeToString(n.chapChallenge))
		return resp, loginSuccess
	}
	name, hasN := keys.Get("CHAP_N")
	r, hasR := keys.Get("CHAP_R")
	if !hasN && !hasR {
		return nil, loginSuccess
	}
	if !hasN || !hasR || n.chapChallenge == nil {
		n.failure = "incomplete CHAP response"
		return nil, loginAuthFailed
	}
	n.chapUser = name
	got, err := decodeBinary(r)
	want := chapResponse(n.chapID, n.chap.Secret, n.chapChallenge)
	if err != nil || name != n.chap.User || subtle.ConstantTimeCompare(got, want[:]) != 1 {
		n.failure = fmt.Sprintf("CHAP authentication of user %q failed", name)
		return nil, loginAuthFailed
	}
	if _, mutual := keys.Get("CHAP_C"); mutual {
		n.failure = "mutual CHAP requested but the target has no secret of its own"
		return nil, loginAuthFailed
	}
	n.authenticated = true
	return nil, loginSuccess
}

// chapResponse is MD5(id || secret || challenge) (RFC 1994).
func chapResponse(id byte, secret string, challenge []byte) [16]byte {
	b := append([]byte{id}, secret...)
	return md5.Sum(append(b, challenge...))
}

// decodeBinary decodes a binary value: 0x hex or 0b base64 (RFC 7143 section 6.1).
func decodeBinary(v string) ([]byte, error) {
	switch {
	case strings.HasPrefix(v, "0x") || strings.HasPrefix(v, "0X"):
		return hex.DecodeString(v[2:])
	case strings.HasPrefix(v, "0b") || strings.HasPrefix(v, "0B"):
		return base64.StdEncoding.DecodeString(v[2:])
	}
	return nil, fmt.Errorf("binary value %.20q without 0x or 0b prefix", v)
}

func listHas(list, v string) bool {
	for _, x := range strings.Split(list, ",") {
		if x == v {
			return true
		}
	}
	return false
}

func yes(v string) (bool, bool) {
	switch v {
	case "Yes":
		return true, true
	case "No":
		return false, true
	}
	return false, false
}

func yesNo(b bool) string {
	if b {
		return "Yes"
	}
	return "No"
}

// operational negotiates one operational key (login or text phase).
func (n *negotiator) operational(kv pdu.KV) pdu.Text {
	var r pdu.Text
	num := func(lo, hi uint64) (int, bool) {
		x, err := pdu.ParseNumber(kv.Value)
		if err != nil || x < lo || x > hi {
			r.Add(kv.Key, "Reject")
			return 0, false
		}
		return int(x), true
	}
	boolean := func() (bool, bool) {
		b, ok := yes(kv.Value)
		if !ok {
			r.Add(kv.Key, "Reject")
		}
		return b, ok
	}
	switch kv.Key {
	case "HeaderDigest", "DataDigest":
		choice := ""
		for _, x := range strings.Split(kv.Value, ",") {
			if x == "CRC32C" || x == "None" {
				choice = x
				break
			}
		}
		if choice == "" {
			r.Add(kv.Key, "Reject")
			break
		}
		if kv.Key == "HeaderDigest" {
			n.p.HeaderDigest = choice == "CRC32C"
		} else {
			n.p.DataDigest = choice == "CRC32C"
		}
		r.Add(kv.Key, choice)
	case "MaxRecvDataSegmentLength":
		if x, ok := num(512, maxNegotiatedSegment); ok {
			n.p.SendSegment = x
			if !n.sentRecvSeg {
				r.Add(kv.Key, strconv.Itoa(n.limits.RecvSegment))
				n.sentRecvSeg = true
			}
		}
	case "MaxBurstLength":
		if x, ok := num(512, maxNegotiatedSegment); ok {
			n.p.MaxBurst = min(x, n.limits.MaxBurst)
			r.Add(kv.Key, strconv.Itoa(n.p.MaxBurst))
		}
	case "FirstBurstLength":
		if x, ok := num(512, maxNegotiatedSegment); ok {
			n.p.FirstBurst = min(x, n.limits.FirstBurst)
			r.Add(kv.Key, strconv.Itoa(n.p.FirstBurst))
		}
	case "ImmediateData":
		if b, ok := boolean(); ok {
			n.p.ImmediateData = b // AND with the target's Yes
			r.Add(kv.Key, yesNo(b))
		}
	case "InitialR2T":
		if b, ok := boolean(); ok {
			n.p.InitialR2T = b // OR with the target's No
			r.Add(kv.Key, yesNo(b))
		}
	case "MaxOutstandingR2T":
		if _, ok := num(1, 65535); ok {
			r.Add(kv.Key, "1")
		}
	case "MaxConnections":
		if _, ok := num(1, 65535); ok {
			r.Add(kv.Key, "1")
		}
	case "DataPDUInOrder", "DataSequenceInOrder":
		if _, ok := boolean(); ok {
			r.Add(kv.Key, "Yes") // OR with the target's Yes
		}
	case "IFMarker", "OFMarker":
		if _, ok := boolean(); ok {
			r.Add(kv.Key, "No") // AND with the target's No
		}
	case "IFMarkInt", "OFMarkInt":
		r.Add(kv.Key, "Irrelevant")
	case "ErrorRecoveryLevel":
		if _, ok := num(0, 2); ok {
			r.Add(kv.Key, "0")
		}
	case "DefaultTime2Wait":
		if x, ok := num(0, 3600); ok {
			r.Add(kv.Key, strconv.Itoa(x))
		}
	case "DefaultTime2Retain":
		if _, ok := num(0, 3600); ok {
			r.Add(kv.Key, "0")
		}
	case "TaskReporting":
		r.Add(kv.Key, "RFC3720")
	case "iSCSIProtocolLevel":
		if _, ok := num(0, 31); ok {
			r.Add(kv.Key, "0")
		}
	case "TargetAlias", "TargetAddress", "TargetPortalGroupTag", "TSIH":
		r.Add(kv.Key, "Reject") // the target declares these, not the initiator
	default:
		r.Add(kv.Key, "NotUnderstood")
	}
	return r
}

func randRead(b []byte) { rand.Read(b) }
