package pdu

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

func sample() *PDU {
	p := New(OpSCSICmd)
	p.SetImmediate()
	p.SetU32(OffITT, 0x01020304)
	p.SetU32(OffCmdSN, 7)
	p.AHS = []byte{0, 4, 1, 0, 1, 2, 3, 4}
	p.Data = []byte("hello, world") // 12 bytes: no padding
	return p
}

func TestRoundTrip(t *testing.T) {
	for _, lim := range []Limits{{}, {HeaderDigest: true}, {DataDigest: true}, {HeaderDigest: true, DataDigest: true}} {
		for _, data := range [][]byte{nil, []byte("a"), []byte("abcde"), bytes.Repeat([]byte{7}, 8193)} {
			p := sample()
			p.Data = data
			var b bytes.Buffer
			if err := Write(&b, p, lim); err != nil {
				t.Fatal(err)
			}
			want := HeaderLen + len(p.AHS) + len(data) + pad(len(data))
			if lim.HeaderDigest {
				want += 4
			}
			if lim.DataDigest && len(data) > 0 {
				want += 4
			}
			if b.Len() != want {
				t.Errorf("%+v, %d data bytes: wire length %d, want %d", lim, len(data), b.Len(), want)
			}
			q, err := Read(&b, lim)
			if err != nil {
				t.Fatalf("%+v: %v", lim, err)
			}
			if q.Header != p.Header || !bytes.Equal(q.AHS, p.AHS) || !bytes.Equal(q.Data, p.Data) {
				t.Errorf("%+v: round trip changed the PDU", lim)
			}
			if q.Opcode() != OpSCSICmd || !q.Immediate() || !q.Final() || q.ITT() != 0x01020304 || q.DataLen() != len(data) {
				t.Errorf("accessors: %v %v %v %x %d", q.Opcode(), q.Immediate(), q.Final(), q.ITT(), q.DataLen())
			}
		}
	}
}

// The CRC32C test vector of RFC 3720 appendix B.4: 32 bytes of zeros.
func TestCRC32CVector(t *testing.T) {
	if got := CRC32C(make([]byte, 32)); got != 0x8a9136aa {
		t.Errorf("CRC32C(32 zeros) = %#x, want 0x8a9136aa", got)
	}
	ones := bytes.Repeat([]byte{0xff}, 32)
	if got := CRC32C(ones); got != 0x62a8ab43 {
		t.Errorf("CRC32C(32 0xff) = %#x, want 0x62a8ab43", got)
	}
}

func TestDigestErrors(t *testing.T) {
	lim := Limits{HeaderDigest: true, DataDigest: true}
	var b bytes.Buffer
	Write(&b, sample(), lim)
	wire := b.Bytes()
	hdr := append([]byte(nil), wire...)
	hdr[20] ^= 1 // a header bit
	if _, err := Read(bytes.NewReader(hdr), lim); !errors.Is(err, ErrHeaderDigest) {
		t.Errorf("flipped header bit: %v, want ErrHeaderDigest", err)
	}
	data := append([]byte(nil), wire...)
	data[HeaderLen+8+4] ^= 1 // a data bit
	p, err := Read(bytes.NewReader(data), lim)
	if !errors.Is(err, ErrDataDigest) || p == nil || p.ITT() != 0x01020304 {
		t.Errorf("flipped data bit: %v, want ErrDataDigest with the header", err)
	}
}

func TestLimits(t *testing.T) {
	p := New(OpDataOut)
	p.Data = make([]byte, 9000)
	var b bytes.Buffer
	Write(&b, p, Limits{})
	q, err := Read(&b, Limits{MaxData: 8192})
	if !errors.Is(err, ErrTooLong) || q == nil {
		t.Errorf("9000-byte segment with limit 8192: %v", err)
	}
	// A truncated stream is an unexpected EOF, not a clean one.
	b.Reset()
	Write(&b, sample(), Limits{})
	if _, err := Read(bytes.NewReader(b.Bytes()[:b.Len()-3]), Limits{}); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated PDU: %v", err)
	}
	if _, err := Read(bytes.NewReader(nil), Limits{}); err != io.EOF {
		t.Errorf("empty stream: %v", err)
	}
}

func TestText(t *testing.T) {
	in := Text{{"InitiatorName", "iqn.2026-01.x:y"}, {"MaxBurstLength", "262144"}, {"X", ""}}
	out, err := ParseText(in.Encode())
	if err != nil || len(out) != 3 || out[0] != in[0] || out[2] != in[2] {
		t.Fatalf("round trip: %v %v", out, err)
	}
	if v, ok := out.Get("MaxBurstLength"); !ok || v != "262144" {
		t.Errorf("Get: %q %v", v, ok)
	}
	for _, bad := range []string{"NoEquals\x00", "=v\x00", "k=v", string(bytes.Repeat([]byte{'k'}, 64)) + "=v\x00"} {
		if _, err := ParseText([]byte(bad)); !errors.Is(err, ErrText) {
			t.Errorf("ParseText(%.20q) = %v, want ErrText", bad, err)
		}
	}
	for v, want := range map[string]uint64{"8192": 8192, "0x2000": 8192} {
		if n, err := ParseNumber(v); err != nil || n != want {
			t.Errorf("ParseNumber(%q) = %d, %v", v, n, err)
		}
	}
}

// FuzzRead: any byte stream decodes without panicking, and whatever
// decodes re-encodes to the same bytes.
func FuzzRead(f *testing.F) {
	var b bytes.Buffer
	Write(&b, sample(), Limits{HeaderDigest: true, DataDigest: true})
	f.Add(b.Bytes(), true)
	b.Reset()
	Write(&b, sample(), Limits{})
	f.Add(b.Bytes(), false)
	f.Add(make([]byte, 48), false)
	f.Fuzz(func(t *testing.T, wire []byte, digests bool) {
		lim := Limits{HeaderDigest: digests, DataDigest: digests, MaxData: 1 << 16}
		p, err := Read(bytes.NewReader(wire), lim)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := Write(&out, p, lim); err != nil {
			t.Fatalf("re-encoding a decoded PDU: %v", err)
		}
		q, err := Read(&out, lim)
		if err != nil || q.Header != p.Header || !bytes.Equal(q.Data, p.Data) || !bytes.Equal(q.AHS, p.AHS) {
			t.Fatalf("re-encoded PDU differs: %v", err)
		}
	})
}

// FuzzParseText: any data segment parses or fails cleanly; what parses
// re-encodes to an equal list.
func FuzzParseText(f *testing.F) {
	f.Add([]byte("a=b\x00c=d\x00"))
	f.Add([]byte("CHAP_R=0x00\x00\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		txt, err := ParseText(b)
		if err != nil {
			return
		}
		again, err := ParseText(txt.Encode())
		if err != nil || len(again) != len(txt) {
			t.Fatalf("re-parse: %v", err)
		}
		for i := range txt {
			if txt[i] != again[i] {
				t.Fatalf("pair %d: %v != %v", i, txt[i], again[i])
			}
		}
	})
}
