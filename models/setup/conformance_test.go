package setup

import (
	"testing"

	"github.com/nasemu/nasemu/models/devicetest"
)

// TestConformance runs the device kit on whole stacks — protocol, link,
// NAS, cache tier, array, drives on their bus — of built-in setups that
// between them hold every protocol, link mode, RAID level, drive kind and
// cache mode, with drives scaled down to 1 GiB.
func TestConformance(t *testing.T) {
	for _, name := range []string{
		"ds1817-raid5-hdd-cache-iscsi-1g",
		"ds1817-shr-ssd-smb-1g",
		"ds1817-raid1-hdd-cache-smb-1g-encrypted",
		"ds1817-raid0-ssd-smb-lacp-4x1g",
		"rst001-single-wdred-smb-2x1g",
		"xeon002-raid10-sn640-local",
	} {
		t.Run(name, func(t *testing.T) {
			s, err := Load(name, builtinFS, nil)
			if err != nil {
				t.Fatal(err)
			}
			s = s.WithDriveCapacity(1 << 30)
			devicetest.Run(t, devicetest.Config{
				Parallel: true,
				FileOps:  true,
				Requests: 500,
				New:      devicetest.Built(s.Build),
			})
		})
	}
}
