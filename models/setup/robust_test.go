package setup

import (
	"errors"
	"strings"
	"testing"
)

// TestRobustImpossibleValues holds issue 20's bad values: a zero that the
// config types would silently replace by their default (chunk: 0 ran as
// 64KiB, ram: 0 as 4GiB) is an error naming file, line and key.
func TestRobustImpossibleValues(t *testing.T) {
	const array = "drives: {model: wd-red-1tb, count: 4}\nraid: {level: raid5}\n"
	const nasArray = "nas: {base: synology-ds1817, %s}\ndrives: {model: wd-red-1tb, count: 4}\nraid: {level: raid5}\nlink: 1gbe\nprotocol: smb3\n"
	for _, tc := range []struct {
		yaml string
		line int
		key  string
	}{
		{"drives: {model: wd-red-1tb, count: 4}\nraid:\n  level: raid5\n  chunk: 0\n", 4, "raid.chunk"},
		{"drives: {model: wd-red-1tb, count: 4}\nraid: {level: raid5, chunk: 0KiB}\n", 2, "raid.chunk"},
		{strings.Replace(nasArray, "%s", "ram: 0", 1), 1, "nas.ram"},
		{strings.Replace(nasArray, "%s", "cpu: {cores: 0}", 1), 1, "nas.cpu.cores"},
		{strings.Replace(nasArray, "%s", "dirty_ratio: 0", 1), 1, "nas.dirty_ratio"},
		{strings.Replace(nasArray, "%s", "writeback_depth: 0", 1), 1, "nas.writeback_depth"},
		{"drives: {model: wd-red-1tb, count: 4, capacity: 0}\nraid: {level: raid5}\n", 1, "drives.capacity"},
		{"nas: synology-ds1817\n" + array + "link: 1gbe\nprotocol: {kind: smb3, max_io: 0}\n", 5, "protocol.max_io"},
		{"nas: synology-ds1817\n" + array + "cache:\n  drives: {model: kingston-suv500-240g, count: 2}\n  block: 0\n", 6, "cache.block"},
	} {
		_, err := Parse("bad.yaml", []byte(tc.yaml))
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%q: parsed (err %v); want an error at %s", tc.yaml, err, tc.key)
			continue
		}
		if e.File != "bad.yaml" || e.Line != tc.line || e.Key != tc.key || !strings.Contains(e.Msg, "must not be 0") {
			t.Errorf("%q: got %v; want bad.yaml:%d: %s: must not be 0 ...", tc.yaml, err, tc.line, tc.key)
		}
	}
	// A zero that is itself the documented default still parses.
	for _, ok := range []string{
		array + "nas: synology-ds1817\ncache:\n  drives: {model: kingston-suv500-240g, count: 2}\n  capacity: 0\n",
		"drives: {model: wd-red-1tb, count: 4}\nraid: {level: raid5, rebuild_mbps: 0}\n",
		"drives: {model: wd-red-1tb, count: 4, overprovision: 0%}\nraid: {level: raid5}\n",
	} {
		if _, err := Parse("ok.yaml", []byte(ok)); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

// TestRobustFileSize holds the cap on a setup file's size: a file past
// MaxFileSize is refused, without parsing, with a message naming the
// file; one just under it parses.
func TestRobustFileSize(t *testing.T) {
	const setup = "drives: {model: wd-red-1tb, count: 4}\nraid: {level: raid5}\n"
	pad := func(n int) []byte {
		b := []byte(setup)
		line := "# " + strings.Repeat("x", 77) + "\n"
		for len(b)+len(line) <= n {
			b = append(b, line...)
		}
		return append(b, strings.Repeat("#", n-len(b))...)
	}
	if _, err := Parse("big.yaml", pad(MaxFileSize)); err != nil {
		t.Errorf("a setup of exactly MaxFileSize bytes: %v", err)
	}
	_, err := Parse("big.yaml", pad(MaxFileSize+1))
	var e *Error
	if !errors.As(err, &e) || e.File != "big.yaml" || !strings.Contains(e.Msg, "the most a setup file may hold") {
		t.Errorf("a setup of MaxFileSize+1 bytes: got %v; want a size error naming big.yaml", err)
	}
}
