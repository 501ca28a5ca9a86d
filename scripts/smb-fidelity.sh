#!/bin/sh
# smb-fidelity.sh — CrystalDiskMark (cdm) and file copies (copy) through a
# real SMB client (nasemu bench's smb:// target, go-smb2) against
# 'nasemu nas' of a setup, compared with sim: of the same setup. Each job's
# figure over SMB is multiplied by the time scale (the emulated NAS runs
# that many times slower than the model) and divided by sim:'s; RUNS runs
# give the median ratio and its spread (min..max). The emulation is
# faithful where the median is within ±15 % (see TestNasFidelity for the
# jobs it asserts and why). As the test does, each suite runs on a fresh
# nas (over a tmpfs backing where there is one), and sim: runs the setup
# with the client's own time per file operation off (the real client pays
# its own) for the stretch of model time a run over nas covers. Raise
# fs.fuse.max_pages_limit to 257 or more first (see nasemu nas).
#
# Usage: scripts/smb-fidelity.sh [SETUP] [RUNS] [TIME_SCALE] [RUNTIME] [COPY_DIV]
#   SETUP      default ds1817-raid5-hdd-smb-1g (1GbE, 4 HDDs in RAID 5)
#   RUNS       runs of each suite over SMB (default 3)
#   TIME_SCALE --time-scale of nasemu nas (default 3)
#   RUNTIME    each cdm job's runtime (default 2s); its file is 256 MiB
#   COPY_DIV   the copy suite's sizes divided by this (default 10: 1 x 205 MiB,
#              100 x 2 MiB, 1000 x 2 KiB)
# Needs root (smbd serves as root, FUSE), samba and python3.
set -eu
cd "$(dirname "$0")/.."
setup=${1:-ds1817-raid5-hdd-smb-1g}
runs=${2:-3}
scale=${3:-3}
runtime=${4:-2s}
div=${5:-10}
work=$(mktemp -d)
pid=
base=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
	[ -n "$base" ] && 	rm -rf "$work"
}
trap cleanup EXIT INT TERM
go build -o "$work/nasemu" ./cmd/nasemu
mkdir "$work/backing"
NASEMU_SMB_PASSWORD=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
export NASEMU_SMB_PASSWORD
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# The copy suite, its file counts and sizes divided by COPY_DIV.
python3 - "$div" >"$work/copy.fio" <<'PY'
import sys
d = int(sys.argv[1])
for n, size, name in ((1, 2 << 30, "1x2GiB"), (1000, 2 << 20, "1000x2MiB"), (10000, 2 << 10, "10000x2KiB")):
    n2, size2 = max(1, n // d), size if n > 1 else size // d
    for up in (True, False):
        print("[copy %s %s]" % (name, "upload" if up else "download"))
        print("rw=%s\nbs=1m\nnrfiles=%d\nfilesize=%d\nsize=%d\nopenfiles=1\nstonewall\nunlink=%d"
              % ("write" if up else "read", n2, size2, n2 * size2, 0 if up else 1))
        print("filename_format=copy-%s/$filenum\n" % name)
PY
# sim: of the setup with the client's own time per file operation off,
# as nas runs it (the real client pays its own): client_op 1ns.
case "$setup" in
*/* | *.yaml) src=$setup ;;
*) src=testdata/setups/$setup.yaml ;;
esac
sed 's/^protocol: \([a-z0-9]*\)$/protocol:\n  kind: \1\n  client_op: 1ns/' "$src" >"$work/sim-setup.yaml"
grep -q "client_op: 1ns" "$work/sim-setup.yaml" || { echo "cannot set client_op in $src" >&2; exit 1; }
# A job's runtime is wall time: over nas it covers 1/TIME_SCALE of it in
# the model, so sim runs for that long.
simruntime=$(python3 -c "import sys; r=sys.argv[1]; v=float(r.rstrip('s')); print('%gms' % (v*1000/float(sys.argv[2])))" "$runtime" "$scale")
# The backing directory in memory where there is a tmpfs: on the host's
# disk its own journal stalls the small-file copies now and then.
base=$work
[ -d /dev/shm ] && base=$(mktemp -d /dev/shm/nasemu-fidelity-XXXXXX)
# start_nas starts a fresh nas (an empty backing directory, a new model):
# each suite runs on a NAS of its own, as sim runs it on a model of its own.
start_nas() {
	rm -rf "$base/backing"
	mkdir "$base/backing"
	"$work/nasemu" nas --setup "$setup" --backing "$base/backing" --smb "127.0.0.1:$port" --time-scale "$scale" 2>"$work/nas.log" &
	pid=$!
	for _ in $(seq 100); do grep -q "control socket" "$work/nas.log" && break; sleep 0.2; done
	grep -q "control socket" "$work/nas.log" || { cat "$work/nas.log"; exit 1; }
	grep -E "answers|warning" "$work/nas.log" >&2 || true
}
stop_nas() {
	kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
	pid=
}
target="smb://root@127.0.0.1:$port/nas"
b() { "$work/nasemu" bench --quiet --format json "$@"; }
b --target "sim:$work/sim-setup.yaml" --suite cdm --runtime "$simruntime" --size 256MiB >"$work/sim-cdm.json"
b --target "sim:$work/sim-setup.yaml" --job "$work/copy.fio" >"$work/sim-copy.json"
for r in $(seq "$runs"); do
	start_nas
	b --target "$target" --suite cdm --runtime "$runtime" --size 256MiB >"$work/nas-cdm-$r.json"
	stop_nas
	start_nas
	b --target "$target" --job "$work/copy.fio" >"$work/nas-copy-$r.json"
	stop_nas
done
python3 - "$work" "$runs" "$scale" "$setup" <<'PY'
import json, statistics, sys
w, runs, scale, setup = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
print("sim:%s against nasemu nas --time-scale %g (%d runs); SMB figures x %g" % (setup, scale, runs, scale))
print("%-26s %-8s %10s %10s %8s %17s" % ("job", "metric", "sim", "nas", "nas/sim", "spread"))
for suite in ("cdm", "copy"):
    sim = json.load(open("%s/sim-%s.json" % (w, suite)))["results"]
    nas = [json.load(open("%s/nas-%s-%d.json" % (w, suite, r)))["results"] for r in range(1, runs + 1)]
    for i, s in enumerate(sim):
        key, metric = ("files_per_s", "files/s") if s["name"].startswith("copy") and "x2GiB" not in s["name"] else ("mbps", "MB/s")
        vals = [run[i][key] * scale for run in nas]
        ratios = sorted(v / s[key] for v in vals)
        print("%-26s %-8s %10.2f %10.2f %8.2f %8.2f..%-8.2f" % (s["name"], metric, s[key], statistics.median(vals),
              statistics.median(ratios), ratios[0], ratios[-1]))
PY
