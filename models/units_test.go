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

func TestBytesHuman(t *testing.T) {
	for b, want := range map[Bytes]string{
		0: "0 B", 512: "512 B", 4096: "4 KiB", 256 << 20: "256 MiB", 3 << 29: "1.5 GiB",
		1_920_000_000_000: "1.92 TB", 960e9: "960 GB", 2e9: "2 GB", 64000: "64 kB",
		500 << 10: "500 KiB", // also 512 kB: binary when both read as short
		// the usable capacity a mount of ds1817-raid5-hdd-smb-1g (four WD
		// Red 1TB in RAID 5) announced as 2930287680KiB
		2930287680 << 10:  "3.00 TB",
		2_930_000_000_123: "2.93 TB", 45_678_901: "45.7 MB", 123_456_789: "123 MB",
		-(8 << 30): "-8 GiB",
	} {
		if got := b.Human(); got != want {
			t.Errorf("Bytes(%d).Human() = %q, want %q", int64(b), got, want)
		}
	}
}
