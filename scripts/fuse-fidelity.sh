#!/bin/sh
# fuse-fidelity.sh — the same fio jobs three ways: the real fio on a nasemu
# mount, nasemu bench on a nasemu mount, and nasemu bench on sim: of the
# same setup. Each tool gets a fresh mount (an empty backing directory), so
# each starts from the state the sim: target starts from. Prints IOPS, MB/s
# and p50 latency of each run and the ratios against sim:, then per job and
# metric the median ratio over the runs with its range. The emulation is
# faithful when the ratios are within ±10 % for setups slower than what
# FUSE carries on this host (a single HDD, an HDD array behind 1GbE).
#
# The jobs are testdata/emu/fidelity.fio (the reasons for their options
# are there). nasemu bench on the mount and on sim: use the same seed in a
# run, so they issue the same offsets; fio draws its own, so its
# random-access ratios also carry the sampling noise of a few thousand
# random seeks.
#
# Usage: scripts/fuse-fidelity.sh [SETUP] [RUNTIME_SECONDS] [RUNS]
# Needs root (or fusermount3), /dev/fuse, fio and python3.
set -eu
cd "$(dirname "$0")/.."
setup=${1:-testdata/emu/slow-hdd-smb-1g.yaml}
runtime=${2:-10}
runs=${3:-1}
work=$(mktemp -d)
pid=
unmount() {
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		pid=
	fi
}
cleanup() {
	unmount
	rm -rf "$work"
}
trap cleanup EXIT INT TERM
go build -o "$work/nasemu" ./cmd/nasemu
job=testdata/emu/fidelity.fio
export RUNTIME="$runtime"
# mount_fresh mounts the setup over an empty backing directory.
mount_fresh() {
	rm -rf "$work/backing" "$work/mnt"
	mkdir "$work/backing" "$work/mnt"
	"$work/nasemu" mount --setup "$setup" --backing "$work/backing" --socket "$work/ctl.sock" "$work/mnt" 2>"$work/mount.log" &
	pid=$!
	for _ in $(seq 50); do mountpoint -q "$work/mnt" && break; sleep 0.2; done
	mountpoint -q "$work/mnt" || { cat "$work/mount.log"; exit 1; }
}
for run in $(seq "$runs"); do
	mount_fresh
	fio --output-format=json --directory="$work/mnt" "$job" >"$work/fio.$run.json"
	unmount
	mount_fresh
	"$work/nasemu" bench --quiet --seed "$run" --target "$work/mnt" --job "$job" --format json >"$work/mount.$run.json"
	unmount
	"$work/nasemu" bench --quiet --seed "$run" --target "sim:$setup" --job "$job" --format json >"$work/sim.$run.json"
done
python3 - "$work" "$runs" "$setup" "$runtime" <<'PY'
import json, statistics, sys
w, runs, setup, runtime = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
ratios = {}  # (job, metric, tool) -> [ratio per run]
order = []
print("setup %s, %s s per job, %d run(s)" % (setup, runtime, runs))
for run in range(1, runs + 1):
    fio = {j["jobname"]: j for j in json.load(open("%s/fio.%d.json" % (w, run)))["jobs"]}
    mnt = {r["name"]: r for r in json.load(open("%s/mount.%d.json" % (w, run)))["results"]}
    sim = {r["name"]: r for r in json.load(open("%s/sim.%d.json" % (w, run)))["results"]}
    print("\nrun %d" % run)
    print("%-18s %-7s %10s %10s %10s %8s %8s" % ("job", "metric", "sim", "fio/mount", "nasemu/mnt", "fio/sim", "nas/sim"))
    for name, s in sim.items():
        f, m = fio[name], mnt[name]
        d = f["read"] if f["read"]["io_bytes"] else f["write"]
        rows = [("IOPS", s["iops"], d["iops"], m["iops"]),
                ("MB/s", s["mbps"], d["bw_bytes"] / 1e6, m["mbps"]),
                ("p50 us", s["lat_us"]["p50"], d["clat_ns"]["percentile"]["50.000000"] / 1e3, m["lat_us"]["p50"])]
        for metric, sv, fv, mv in rows:
            print("%-18s %-7s %10.1f %10.1f %10.1f %8.2f %8.2f" % (name, metric, sv, fv, mv, fv / sv, mv / sv))
            for tool, v in (("fio", fv), ("nasemu", mv)):
                key = (name, metric, tool)
                if key not in ratios:
                    ratios[key] = []
                    order.append(key)
                ratios[key].append(v / sv)
print("\nratio to sim: median [min, max] over %d run(s); ok = median within ±10 %%" % runs)
print("%-18s %-7s %-7s %8s %15s" % ("job", "metric", "tool", "median", "range"))
bad = 0
for key in order:
    if key[1] == "MB/s":
        continue  # the same ratio as IOPS for fixed-size jobs
    v = ratios[key]
    med = statistics.median(v)
    ok = 0.9 <= med <= 1.1
    bad += not ok
    print("%-18s %-7s %-7s %8.2f %7.2f-%-7.2f %s" % (key + (med, min(v), max(v), "ok" if ok else "OFF")))
print("\n%d of %d figures outside ±10 %%" % (bad, sum(1 for k in order if k[1] != "MB/s")))
PY
