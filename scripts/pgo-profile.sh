#!/bin/sh
# pgo-profile.sh — regenerate cmd/nasemu/default.pgo, the CPU profile that
# `go build` and `go test` of cmd/nasemu use for profile-guided
# optimization (Go's -pgo=auto picks up default.pgo in a main package's
# directory).
#
# The profile is of what users run, not of the speed benchmark: `nasemu
# validate` (every reference case, on every reviewed system: SSD and HDD
# arrays, cache tiers, SMB and iSCSI, file copies) and the built-in suites
# on the DS1817 setups, some on files larger than its RAM. The binary that records it is built without PGO,
# so an old profile does not shape the new one. Rerun it after changes to
# the models' hot paths; an outdated profile only optimizes less.
#
# Usage: scripts/pgo-profile.sh
set -eu
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -pgo=off -o "$tmp/nasemu" ./cmd/nasemu
NASEMU_CPUPROFILE="$tmp/validate.prof" "$tmp/nasemu" validate >/dev/null
# SETUP:SUITE[:SIZE] — a size larger than the NAS's RAM makes the random
# jobs reach the drives, as a planner sizing the disks would run them.
for job in ds1817-raid5-hdd-smb-1g:cdm ds1817-raid5-hdd-smb-1g:cdm:64GiB ds1817-raid5-hdd-smb-1g:diskspd \
	ds1817-raid5-hdd-smb-1g:copy ds1817-raid5-hdd-cache-smb-1g:cdm ds1817-raid5-ssd-iscsi-1g:cdm \
	ds1817-raid5-hdd-iscsi-1g:iometer:64GiB ds1817-raid5-hdd-iscsi-1g:copy; do
	setup=${job%%:*} rest=${job#*:}
	suite=${rest%%:*} size=
	[ "$suite" = "$rest" ] || size=${rest#*:}
	NASEMU_CPUPROFILE="$tmp/$setup-$suite-$size.prof" "$tmp/nasemu" bench --target "sim:$setup" --suite "$suite" \
		${size:+--size "$size"} >/dev/null
done
go tool pprof -proto "$tmp"/*.prof >"$tmp/merged.pgo" 2>/dev/null
mv "$tmp/merged.pgo" cmd/nasemu/default.pgo
echo "wrote cmd/nasemu/default.pgo ($(wc -c <cmd/nasemu/default.pgo) bytes)"
