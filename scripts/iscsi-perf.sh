#!/bin/sh
# Performance figures of the iSCSI path, on 127.0.0.1:
#  1. zero-cost model: iscsi-perf (4 KiB random read QD32, 64 KiB
#     sequential read QD32) against nasemu's emulated LUN and against tgtd
#     (a file-backed LUN), side by side: the emulator's own overhead;
#  2. with a model (testdata/iscsi/slow-hdd-iscsi-1g.yaml, one HDD over
#     1GbE): iscsi-perf and 'nasemu bench --target iscsi://' against the
#     emulated LUN, and 'nasemu bench --target sim:' of the same setup.
#
# usage: scripts/iscsi-perf.sh [SECONDS]   (default 10 per run)
# needs: go, iscsi-perf (libiscsi-bin), tgtd/tgtadm (tgt), root for tgtd
set -eu
cd "$(dirname "$0")/.."
secs=${1:-10}
out=$(mktemp -d)
go build -o "$out/nasemu" ./cmd/nasemu
p1=${NASEMU_PORT:-13270}
p2=${TGTD_PORT:-13271}
pids=""
tpid=""
trap 'kill $pids 2>/dev/null; kill -9 $tpid 2>/dev/null; rm -rf "$out"' EXIT INT TERM

perf() { # URL ARGS... -> average IOPS and MB/s of a SECONDS-long run
	url=$1
	shift
	timeout -s INT "$secs" iscsi-perf "$@" "$url" 2>&1 | tr '\r' '\n' |
		sed -n 's/.*iops average \([0-9]*\) (\([0-9]*\) MB\/s).*/\1 IOPS \2 MB\/s/p' | tail -1
}

truncate -s 1G "$out/tgtd.img"
"$out/nasemu" iscsi --setup free --size 1GiB --backing "$out/free.img" --listen 127.0.0.1:$p1 2>"$out/free.log" &
pids="$pids $!"
tpid=$(scripts/iscsi-tgtd.sh $p2 "$out/tgtd.img" iqn.2026-01.org.nasemu:tgtd)
sleep 1
n=iscsi://127.0.0.1:$p1/iqn.2026-01.org.nasemu:lun/0
t=iscsi://127.0.0.1:$p2/iqn.2026-01.org.nasemu:tgtd/1
echo "== zero-cost model vs tgtd, $secs s each"
printf '%-28s %-28s %s\n' workload nasemu tgtd
printf '%-28s %-28s %s\n' "4KiB random read QD32" "$(perf $n -m 32 -b 8 -r)" "$(perf $t -m 32 -b 8 -r)"
printf '%-28s %-28s %s\n' "64KiB sequential read QD32" "$(perf $n -m 32 -b 128)" "$(perf $t -m 32 -b 128)"
kill $pids 2>/dev/null || true
kill -9 $tpid 2>/dev/null || true
pids=""
tpid=""
sleep 1

setup=testdata/iscsi/slow-hdd-iscsi-1g.yaml
"$out/nasemu" iscsi --setup $setup --size 1GiB --backing "$out/slow.img" --listen 127.0.0.1:$p1 2>"$out/slow.log" &
pids="$! "
sleep 1
cat >"$out/job.fio" <<JOB
[global]
size=1g
time_based=1
runtime=${secs}s
direct=1
[randread-4k-qd32]
rw=randread
bs=4k
iodepth=32
JOB
echo "== model $setup: 4KiB random read QD32, $secs s"
echo "iscsi-perf on the emulated LUN:  $(perf $n -m 32 -b 8 -r)"
echo "nasemu bench --target iscsi://:"
"$out/nasemu" bench --target "$n" --job "$out/job.fio" --format csv | cut -d, -f1-12
echo "nasemu bench --target sim:$setup:"
"$out/nasemu" bench --target "sim:$setup" --job "$out/job.fio" --format csv | cut -d, -f1-12 ||
	echo "(sim: needs the setup-aware sim resolver)"
