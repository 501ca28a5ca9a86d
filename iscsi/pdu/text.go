package pdu

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// KV is one key=value pair of a text or login data segment.
type KV struct{ Key, Value string }

// Text is an ordered list of key=value pairs.
type Text []KV

// ErrText is a malformed text data segment.
var ErrText = errors.New("iscsi: malformed text")

// Limits of text negotiation (RFC 7143 section 6.1).
const (
	maxKeyLen   = 63
	maxValueLen = 8192 // CHAP binary values may be long; 255 for most keys
)

// ParseText parses NUL-separated key=value pairs. A trailing fragment
// without its NUL (a text split over PDUs) is an error here; the caller
// joins continued PDUs first.
func ParseText(b []byte) (Text, error) {
	var t Text
	for len(b) > 0 {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			return t, fmt.Errorf("%w: pair without NUL terminator", ErrText)
		}
		pair := b[:i]
		b = b[i+1:]
		if len(pair) == 0 {
			continue // padding NULs
		}
		k, v, ok := bytes.Cut(pair, []byte{'='})
		if !ok || len(k) == 0 || len(k) > maxKeyLen || len(v) > maxValueLen {
			return t, fmt.Errorf("%w: %.40q", ErrText, pair)
		}
		t = append(t, KV{string(k), string(v)})
	}
	return t, nil
}

// Encode returns the data segment of t.
func (t Text) Encode() []byte {
	var b []byte
	for _, kv := range t {
		b = append(b, kv.Key...)
		b = append(b, '=')
		b = append(b, kv.Value...)
		b = append(b, 0)
	}
	return b
}

// Get returns the value of key and whether it is present.
func (t Text) Get(key string) (string, bool) {
	for _, kv := range t {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return "", false
}

// Add appends key=value.
func (t *Text) Add(key, value string) { *t = append(*t, KV{key, value}) }

// ParseNumber parses a numerical value (decimal or 0x hex, RFC 7143 section 6.1).
func ParseNumber(v string) (uint64, error) {
	if strings.HasPrefix(v, "0x") || strings.HasPrefix(v, "0X") {
		return strconv.ParseUint(v[2:], 16, 64)
	}
	return strconv.ParseUint(v, 10, 64)
}
