package models

import "testing"

func TestParseBytes(t *testing.T) {
	for in, want := range map[string]Bytes{
		"512": 512, "4KiB": 4096, "64 KiB": 65536, "1.5TB": 1_500_000_000_000,
		"8GiB": 8 << 30, "4k": 4096, "1M": 1 << 20, "250GB": 250e9, "0": 0,
	} {
		got, err := ParseBytes(in)
		if err != nil || got != want {
			t.Errorf("ParseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "KiB", "-1", "1.5.2GB", "12 parsecs", "1e30TB"} {
		if _, err := ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q) succeeded", in)
		}
	}
	if s := Bytes(64 << 10).String(); s != "64KiB" {
		t.Errorf("String = %q", s)
	}
}
