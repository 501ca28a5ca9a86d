#!/usr/bin/env bash
# fio-compare.sh: checks that nasemu's engine is not the bottleneck on real
# storage. It runs the same two jobs with fio (ioengine=psync) and with
# `nasemu bench` against the same file, alternating, and prints each tool's
# best and median run and the ratios nasemu/fio. The best of several runs
# is the figure least disturbed by other load on the machine (as
# CrystalDiskMark shows the best of its passes); the check uses it:
#   - 4 KiB random read, QD1 (IOPS)
#   - 1 MiB sequential read, QD1 (MB/s)
# Usage: scripts/fio-compare.sh [DIR] (default /dev/shm: tmpfs, so the
# storage is as fast as memory and any engine overhead shows).
# Environment: SIZE (default 1g), RUNTIME seconds per run (default 10),
# ROUNDS (default 3), MIN_RATIO (default 0.95: exit 1 below it), NASEMU (a
# prebuilt nasemu binary; default: build ./cmd/nasemu).
# Needs fio and python3 (apt-get install -y fio python3) and Go.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
dir=${1:-/dev/shm}
size=${SIZE:-1g}
runtime=${RUNTIME:-10}
rounds=${ROUNDS:-3}
min_ratio=${MIN_RATIO:-0.95}
command -v fio >/dev/null || { echo "fio is not installed (apt-get install -y fio)" >&2; exit 2; }

work=$(mktemp -d)
file="$dir/nasemu-fio-compare.$$"
trap 'rm -rf "$work" "$file"' EXIT
nasemu=${NASEMU:-$work/nasemu}
[ -n "${NASEMU:-}" ] || go build -o "$nasemu" ./cmd/nasemu
# Lay the file out once, with data, so neither tool writes it.
fio --name=layout --filename="$file" --rw=write --bs=1m --size="$size" --ioengine=psync --output=/dev/null

json() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

run_fio() { # rw bs -> IOPS or MB/s
	fio --name=cmp --filename="$file" --ioengine=psync --rw="$1" --bs="$2" --iodepth=1 --numjobs=1 \
		--size="$size" --runtime="$runtime" --time_based --direct=0 --randrepeat=1 --output-format=json |
		json "d['jobs'][0]['read']['$3']"
}
run_nasemu() { # rw bs metric -> IOPS or MB/s
	cat >"$work/cmp.fio" <<JOB
[cmp]
ioengine=psync
rw=$1
bs=$2
iodepth=1
size=$size
runtime=$runtime
time_based
direct=0
JOB
	"$nasemu" bench --target "$file" --job "$work/cmp.fio" --format json | json "d['results'][0]['$3']"
}
median() { python3 -c "import statistics,sys; print(statistics.median(float(x) for x in sys.argv[1:]))" "$@"; }
best() { python3 -c "import sys; print(max(float(x) for x in sys.argv[1:]))" "$@"; }

status=0
for test in "randread 4k iops" "read 1m mbps"; do
	set -- $test
	f=() n=()
	for _ in $(seq "$rounds"); do
		if [ "$3" = iops ]; then f+=("$(run_fio "$1" "$2" iops)"); else f+=("$(run_fio "$1" "$2" bw_bytes | python3 -c 'import sys; print(float(sys.stdin.read())/1e6)')"); fi
		n+=("$(run_nasemu "$1" "$2" "$3")")
	done
	fb=$(best "${f[@]}") nb=$(best "${n[@]}") fm=$(median "${f[@]}") nm=$(median "${n[@]}")
	ratio=$(python3 -c "print(f'{$nb/$fb:.3f}')")
	mratio=$(python3 -c "print(f'{$nm/$fm:.3f}')")
	unit=IOPS; [ "$3" = mbps ] && unit=MB/s
	printf '%-9s %-3s QD1  best: fio %10.1f  nasemu %10.1f %-4s ratio %s | median: fio %10.1f  nasemu %10.1f  ratio %s\n' \
		"$1" "$2" "$fb" "$nb" "$unit" "$ratio" "$fm" "$nm" "$mratio"
	python3 -c "import sys; sys.exit(0 if $ratio >= $min_ratio else 1)" || status=1
done
exit $status
