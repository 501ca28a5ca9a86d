#!/usr/bin/env bash
# fio-compare.sh: nasemu bench against fio on the same file and the same
# job files, to show that nasemu's engine is not what limits a real target.
# For each row it writes one fio job file, runs fio and `nasemu bench` on
# it in turn (ROUNDS rounds, alternating, so that load from elsewhere hits
# both alike) and prints IOPS and p99.9 completion latency of each tool:
# the median of the rounds and the best (highest IOPS, lowest p99.9), and
# the ratios nasemu/fio. A row passes when the median IOPS ratio is at
# least MIN_RATIO and the median p99.9 ratio at most MAX_P999. The job
# files say thread: fio runs its job as a thread of its main process (on
# this kind of host nearly twice as fast as a forked job process at QD1),
# as nasemu runs goroutines; nasemu accepts thread without effect.
#   4 KiB random read and write at QD1, 32, 64, direct
#   1 MiB sequential read and write at QD8, direct and buffered
# Usage: scripts/fio-compare.sh [DIR] (default /dev/shm: tmpfs, as fast as
# memory, so any engine overhead shows; give a directory on a disk to
# compare there). Environment: ENGINE (io_uring; libaio, psync), SIZE
# (default 1g), RUNTIME seconds per run (default 5), RAMP seconds (1),
# ROUNDS (default 3), MIN_RATIO (0.95), MAX_P999 (1.2), NASEMU (a prebuilt
# nasemu binary; default: build ./cmd/nasemu). Exit status 1 when a row
# fails. Needs fio, jq and Go.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
dir=${1:-/dev/shm}
engine=${ENGINE:-io_uring}
size=${SIZE:-1g}
runtime=${RUNTIME:-5}
ramp=${RAMP:-1}
rounds=${ROUNDS:-3}
min_ratio=${MIN_RATIO:-0.95}
max_p999=${MAX_P999:-1.2}
for tool in fio jq; do
	command -v $tool >/dev/null || { echo "$tool is not installed (apt-get install -y $tool)" >&2; exit 2; }
done

work=$(mktemp -d -t nasemu-fio-compare.XXXXXX)
name="nasemu-fio-compare.$$.dat"
trap 'rm -rf "$work" "$dir/$name"' EXIT INT TERM
nasemu=${NASEMU:-$work/nasemu}
[ -n "${NASEMU:-}" ] || go build -o "$nasemu" ./cmd/nasemu
# Lay the file out once, with data, so that neither tool writes it first.
fio --name=layout --directory="$dir" --filename="$name" --rw=write --bs=1m --size="$size" \
	--ioengine=psync --end_fsync=1 --output=/dev/null

job() { # rw bs iodepth direct
	cat >"$work/job.fio" <<JOB
[global]
filename=$name
size=$size
ioengine=$engine
direct=$4
runtime=$runtime
ramp_time=$ramp
time_based
norandommap
thread
randrepeat=0
[cmp]
rw=$1
bs=$2
iodepth=$3
JOB
}
run_fio() { # dir -> "IOPS p99.9_us"
	fio --directory="$dir" --output-format=json --output="$work/fio.json" "$work/job.fio"
	jq -r --arg d "$1" '.jobs[0][$d] | "\(.iops) \(.clat_ns.percentile["99.900000"] / 1000)"' "$work/fio.json"
}
run_nasemu() {
	"$nasemu" bench --quiet --target "$dir" --job "$work/job.fio" --format json >"$work/n.json"
	jq -r '.results[0] | "\(.iops) \(.lat_us.p999)"' "$work/n.json"
}
stats() { # values... -> "median best" (best: highest, or lowest with -l)
	local low=0
	[ "$1" = -l ] && { low=1; shift; }
	printf '%s\n' "$@" | sort -g | awk -v low=$low '{v[NR]=$1} END {m = NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2; print m, (low ? v[1] : v[NR])}'
}

printf 'engine %s, %s, %s s per run after %s s ramp, %s rounds alternating; median (best)\n' "$engine" "$dir" "$runtime" "$ramp" "$rounds"
printf '%-26s %21s %21s %13s %17s %17s %13s %s\n' job "fio IOPS" "nasemu IOPS" ratio "fio p99.9 us" "nasemu p99.9 us" ratio ""
status=0
for row in "randread 4k 1 1" "randread 4k 32 1" "randread 4k 64 1" \
	"randwrite 4k 1 1" "randwrite 4k 32 1" "randwrite 4k 64 1" \
	"read 1m 8 1" "read 1m 8 0" "write 1m 8 1" "write 1m 8 0"; do
	set -- $row
	job "$@"
	d=read
	case $1 in *write) d=write ;; esac
	fi=() fl=() ni=() nl=()
	for _ in $(seq "$rounds"); do
		read -r i l < <(run_fio $d)
		fi+=("$i") fl+=("$l")
		read -r i l < <(run_nasemu)
		ni+=("$i") nl+=("$l")
	done
	read -r fim fib < <(stats "${fi[@]}")
	read -r nim nib < <(stats "${ni[@]}")
	read -r flm flb < <(stats -l "${fl[@]}")
	read -r nlm nlb < <(stats -l "${nl[@]}")
	verdict=$(awk -v a="$nim" -v b="$fim" -v c="$nlm" -v e="$flm" -v r="$min_ratio" -v p="$max_p999" \
		'BEGIN {print (a/b >= r && c/e <= p) ? "ok" : "FAIL"}')
	[ "$verdict" = ok ] || status=1
	mode=direct
	[ "$4" = 0 ] && mode=buffered
	awk -v n="$1 $2 QD$3 $mode" -v fim="$fim" -v fib="$fib" -v nim="$nim" -v nib="$nib" \
		-v flm="$flm" -v flb="$flb" -v nlm="$nlm" -v nlb="$nlb" -v v="$verdict" 'BEGIN {
		printf "%-26s %9.0f (%9.0f) %9.0f (%9.0f) %5.2f (%5.2f) %7.0f (%7.0f) %7.0f (%7.0f) %5.2f (%5.2f) %s\n",
			n, fim, fib, nim, nib, nim/fim, nib/fib, flm, flb, nlm, nlb, nlm/flm, nlb/flb, v }'
done
exit $status
