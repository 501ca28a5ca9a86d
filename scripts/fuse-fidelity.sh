#!/bin/sh
# fuse-fidelity.sh — the same fio job three ways: the real fio on a nasemu
# mount, nasemu bench on that mount, and nasemu bench on sim: of the same
# setup. Prints IOPS, MB/s and p50 latency of each and the ratios against
# sim:. The emulation is faithful when the ratios are within ±10 % for
# setups slower than what FUSE carries on this host (one HDD, 1GbE).
#
# Usage: scripts/fuse-fidelity.sh [SETUP] [RUNTIME_SECONDS]
# Needs root (or fusermount3), /dev/fuse, fio and python3.
set -eu
cd "$(dirname "$0")/.."
setup=${1:-testdata/emu/slow-hdd-smb-1g.yaml}
runtime=${2:-10}
work=$(mktemp -d)
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT INT TERM
go build -o "$work/nasemu" ./cmd/nasemu
mkdir "$work/backing" "$work/mnt"
cat >"$work/job.fio" <<JOB
[global]
ioengine=psync
direct=1
size=256m
runtime=$runtime
time_based=1
filename=fidelity.dat
[randread-4k-qd1]
rw=randread
bs=4k
stonewall
[read-1m-qd1]
rw=read
bs=1m
stonewall
[randwrite-4k-qd1]
rw=randwrite
bs=4k
stonewall
JOB
"$work/nasemu" mount --setup "$setup" --backing "$work/backing" --socket "$work/ctl.sock" "$work/mnt" 2>"$work/mount.log" &
pid=$!
for _ in $(seq 50); do mountpoint -q "$work/mnt" && break; sleep 0.2; done
mountpoint -q "$work/mnt" || { cat "$work/mount.log"; exit 1; }
fio --output-format=json --directory="$work/mnt" "$work/job.fio" >"$work/fio.json"
"$work/nasemu" bench --quiet --target "$work/mnt" --job "$work/job.fio" --format json >"$work/mount.json"
"$work/nasemu" bench --quiet --target "sim:$setup" --job "$work/job.fio" --format json >"$work/sim.json"
python3 - "$work" <<'PY'
import json, sys
w = sys.argv[1]
fio = {j["jobname"]: j for j in json.load(open(w + "/fio.json"))["jobs"]}
mnt = {r["name"]: r for r in json.load(open(w + "/mount.json"))["results"]}
sim = {r["name"]: r for r in json.load(open(w + "/sim.json"))["results"]}
print("%-18s %-8s %10s %10s %10s %8s %8s" % ("job", "metric", "sim", "fio/mount", "nasemu/mnt", "fio/sim", "nas/sim"))
for name, s in sim.items():
    f, m = fio[name], mnt[name]
    d = f["read"] if f["read"]["io_bytes"] else f["write"]
    rows = [("IOPS", s["iops"], d["iops"], m["iops"]),
            ("MB/s", s["mbps"], d["bw_bytes"] / 1e6, m["mbps"]),
            ("p50 us", s["lat_us"]["p50"], d["clat_ns"]["percentile"]["50.000000"] / 1e3, m["lat_us"]["p50"])]
    for metric, sv, fv, mv in rows:
        print("%-18s %-8s %10.1f %10.1f %10.1f %8.2f %8.2f" % (name, metric, sv, fv, mv, fv / sv, mv / sv))
PY
