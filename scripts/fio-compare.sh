#!/usr/bin/env bash
# fio-compare.sh: nasemu bench against fio on the same file and the same
# job files, to show that nasemu's engine is not what limits a real target.
#   4 KiB random read and write at QD1, 32, 64, direct
#   1 MiB sequential read and write at QD8, direct and buffered
# Each round runs every row once with each tool, back to back (fio first
# in odd rounds, nasemu first in even ones), so that load from elsewhere
# on the host hits both tools of a round alike; a row's figure is the
# median over the rounds of the round's nasemu/fio ratio. Both tools
# write fio's JSON (nasemu bench --output-format=json) and one jq
# expression reads both: IOPS, and the 99.9th percentile of completion
# latency (clat: from the return of the submitting system call, fio's
# headline percentiles) and of total latency (lat: from the I/O's
# preparation, clat plus submission). A row passes when the median IOPS
# ratio is at least MIN_RATIO and the median clat and lat p99.9 ratios at
# most MAX_P999; beside each median stands a distribution-free interval
# for it (see interval), and a verdict whose interval straddles its bound
# is marked "?" (one run's p99.9 at queue depth swings by tens of per
# cent on a shared host: few rounds settle little). A third figure does not depend on how much of the CPU
# the host's other tenants leave a run: the CPU time (user and system) a
# tool's process spent per I/O, its ramp included in both the time and
# (estimated at the measured rate) the I/Os; its ratio is the engines'
# own cost side by side. The job files say thread: fio runs its job as a thread of
# its main process (on this kind of host nearly twice as fast as a forked
# job process at QD1), as nasemu runs goroutines; nasemu accepts thread
# without effect.
# Usage: scripts/fio-compare.sh [DIR] (default /dev/shm: tmpfs, as fast as
# memory, so any engine overhead shows; give a directory on a disk to
# compare there). Environment: ENGINE (io_uring; libaio, psync), SIZE
# (default 1g), RUNTIME seconds per run (default 5), RAMP seconds (1),
# ROUNDS (default 5), ROWS (a regular expression selecting rows by name,
# e.g. 'buffered'), MIN_RATIO (0.95), MAX_P999 (1.2), NASEMU (a prebuilt
# nasemu binary; default: build ./cmd/nasemu), RAW (a file to append each
# run's figures to). Exit status 1 when a row fails. Needs fio, jq and Go.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-/dev/shm}
size=${SIZE:-1g}
runtime=${RUNTIME:-5}
min_ratio=${MIN_RATIO:-0.95}
max_p999=${MAX_P999:-1.2}
. scripts/fio-lib.sh
fio_setup nasemu-fio-compare

rows=()
for row in "randread 4k 1 1" "randread 4k 32 1" "randread 4k 64 1" \
	"randwrite 4k 1 1" "randwrite 4k 32 1" "randwrite 4k 64 1" \
	"read 1m 8 1" "read 1m 8 0" "write 1m 8 1" "write 1m 8 0"; do
	set -- $row
	mode=direct
	[ "$4" = 0 ] && mode=buffered
	label="$1 $2 QD$3 $mode"
	[[ $label =~ $select ]] && rows+=("$row")
done
[ ${#rows[@]} -gt 0 ] || { echo "ROWS=$select selects no row" >&2; exit 2; }

job() { # rw bs iodepth direct -> the job file's path
	local f="$work/$1-$2-$3-$4.fio"
	cat >"$f" <<JOB
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
lat_percentiles=1
[cmp]
rw=$1
bs=$2
iodepth=$3
JOB
	echo "$f"
}
# figures tool job dir -> "IOPS clat_p99.9_us lat_p99.9_us cpu_us_per_io"
figures() {
	local TIMEFORMAT='%3U %3S' u s
	{ time case $1 in
		fio) fio --directory="$dir" --output-format=json --output="$work/out.json" "$2" ;;
		nasemu) "$nasemu" bench --quiet --target "$dir" --job "$2" --output-format=json >"$work/out.json" ;;
		esac 2>&3; } 3>&2 2>"$work/cpu"
	read -r u s <"$work/cpu"
	jq -r --arg d "$3" --argjson cpu "$(awk -v u="$u" -v s="$s" 'BEGIN {print u + s}')" --argjson t "$((runtime + ramp))" \
		'.jobs[0][$d] | "\(.iops) \(.clat_ns.percentile["99.900000"] / 1000) \(.lat_ns.percentile["99.900000"] / 1000) \($cpu * 1e6 / ([.iops * $t, 1] | max))"' "$work/out.json"
}
median() { # values... -> median
	printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'
}
# interval values... -> "lo hi coverage": a distribution-free interval for
# the median of the rounds' ratios, from their order statistics: the
# narrowest pair x(k), x(n+1-k) that holds the true median with at least
# 90 % probability (1 - 2 P(B < k), B ~ Binomial(n, 1/2)); with fewer
# than five rounds no pair reaches 90 %, and the range and its coverage
# are given (three rounds: 75 %).
interval() {
	printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {
		n = NR; k = 1; p = 0.5 ^ n; cdf = p  # p = P(B = k - 1), cdf = P(B < k)
		while (k + 1 <= n - k) {
			p = p * (n - k + 1) / k
			if (1 - 2 * (cdf + p) < 0.9) break
			cdf += p; k++
		}
		printf "%s %s %.0f\n", v[k], v[n + 1 - k], (1 - 2 * cdf) * 100 }'
}

declare -A fi fc fl fu ni nc nl nu
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq "$rounds"); do
	for row in "${rows[@]}"; do
		set -- $row
		f=$(job "$@")
		d=read
		case $1 in *write) d=write ;; esac
		order="fio nasemu"
		[ $((r % 2)) = 0 ] && order="nasemu fio"
		for tool in $order; do
			read -r i c l u < <(figures $tool "$f" $d)
			echo "$r $tool $row $i $c $l $u $(cut -d' ' -f1 /proc/loadavg)" >>"$raw"
			case $tool in
			fio) fi[$row]+=" $i" fc[$row]+=" $c" fl[$row]+=" $l" fu[$row]+=" $u" ;;
			nasemu) ni[$row]+=" $i" nc[$row]+=" $c" nl[$row]+=" $l" nu[$row]+=" $u" ;;
			esac
		done
	done
done

printf 'engine %s, %s, %s s per run after %s s ramp, %s rounds; medians of the rounds, ratio nasemu/fio (an interval for the median, %s %% coverage; "?": it straddles the bound)\n' \
	"$engine" "$dir" "$runtime" "$ramp" "$rounds" "$(interval $(seq "$rounds") | cut -d' ' -f3)"
printf 'load average (1, 5, 15 min) %s at the start, %s at the end; %s cores\n' "$load0" "$(cut -d' ' -f1-3 /proc/loadavg)" "$(nproc)"
printf '%-24s %8s %8s %17s %9s %9s %17s %17s %6s %6s %5s %s\n' job "fio IOPS" nasemu "IOPS ratio" "fio clat" nasemu "clat p99.9 ratio" "lat p99.9 ratio" "fio µs" nasemu "CPU/IO" ""
status=0
for row in "${rows[@]}"; do
	set -- $row
	mode=direct
	[ "$4" = 0 ] && mode=buffered
	read -ra a <<<"${fi[$row]}"
	read -ra b <<<"${ni[$row]}"
	read -ra c <<<"${fc[$row]}"
	read -ra e <<<"${nc[$row]}"
	read -ra g <<<"${fl[$row]}"
	read -ra h <<<"${nl[$row]}"
	read -ra m <<<"${fu[$row]}"
	read -ra o <<<"${nu[$row]}"
	ri=() rc=() rl=() ru=()
	for k in "${!a[@]}"; do
		ru+=("$(awk -v x="${o[k]}" -v y="${m[k]}" 'BEGIN {print x/y}')")
		ri+=("$(awk -v x="${b[k]}" -v y="${a[k]}" 'BEGIN {print x/y}')")
		rc+=("$(awk -v x="${e[k]}" -v y="${c[k]}" 'BEGIN {print x/y}')")
		rl+=("$(awk -v x="${h[k]}" -v y="${g[k]}" 'BEGIN {print x/y}')")
	done
	mi=$(median "${ri[@]}") mc=$(median "${rc[@]}") ml=$(median "${rl[@]}")
	ii=$(interval "${ri[@]}") ic=$(interval "${rc[@]}") il=$(interval "${rl[@]}")
	# The verdict is the medians'; a "?" marks one that an interval
	# straddles: the bound may hold or fail at this many rounds.
	verdict=$(awk -v i="$mi" -v c="$mc" -v l="$ml" -v ii="$ii" -v ic="$ic" -v il="$il" \
		-v r="$min_ratio" -v p="$max_p999" 'BEGIN {
		split(ii, x, " "); split(ic, y, " "); split(il, z, " ")
		v = (i >= r && c <= p && l <= p) ? "ok" : "FAIL"
		sure = (x[1] >= r && y[2] <= p && z[2] <= p) || (v == "FAIL" && (x[2] < r || y[1] > p || z[1] > p))
		print v (sure ? "" : "?") }')
	[ "$verdict" = ok ] || [ "$verdict" = "ok?" ] || status=1
	awk -v n="$1 $2 QD$3 $mode" -v fi="$(median "${a[@]}")" -v ni="$(median "${b[@]}")" \
		-v fc="$(median "${c[@]}")" -v nc="$(median "${e[@]}")" \
		-v mi="$mi" -v ri="$ii" -v mc="$mc" -v rc="$ic" \
		-v ml="$ml" -v rl="$il" -v fu="$(median "${m[@]}")" -v nu="$(median "${o[@]}")" \
		-v mu="$(median "${ru[@]}")" -v v="$verdict" 'BEGIN {
		split(ri, x, " "); split(rc, y, " "); split(rl, z, " ")
		printf "%-24s %8.0f %8.0f %5.2f (%4.2f-%4.2f) %9.0f %9.0f %5.2f (%4.2f-%4.2f) %5.2f (%4.2f-%4.2f) %6.1f %6.1f %5.2f %s\n",
			n, fi, ni, mi, x[1], x[2], fc, nc, mc, y[1], y[2], ml, z[1], z[2], fu, nu, mu, v }'
done
exit $status
