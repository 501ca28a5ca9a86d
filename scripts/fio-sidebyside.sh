#!/usr/bin/env bash
# fio-sidebyside.sh: fio and nasemu bench run the same job files on the
# same file, and the figures issue 18 holds within 5 % side by side: per
# direction (read and write of mixed jobs apart), IOPS and the p50, p99
# and p99.9 of completion latency (clat_ns, fio's headline percentiles).
# The job files are testdata/fio/sidebyside/*.fio: 4 KiB randread and
# randwrite at QD1 and QD16, randrw 50/50 at QD1 and 70/30 (8 KiB) at
# QD16, sequential 128 KiB reads at QD4 and 1 MiB writes at QD1, 16 KiB
# randread with numjobs=2 (group_reporting), a rate-limited job
# (rate_iops), a thinktime job and a verify job (the file written, then
# read back and checked); all direct. They take the file, size, engine,
# runtime and ramp from the environment (SBS_FILE, SBS_SIZE, SBS_ENGINE,
# SBS_RUNTIME, SBS_RAMP), which fio and nasemu both expand.
# Each round runs every job once with each tool, back to back, fio first
# in odd rounds and nasemu first in even ones, so that load from
# elsewhere on the host hits both tools of a round alike. A figure is the
# median over the rounds of the round's nasemu/fio ratio, with the
# rounds' range; a row passes when every median ratio is within TOL of 1.
# Both tools write fio's JSON (nasemu bench --output-format=json) and one
# jq expression reads both. The load average is printed before and after:
# on a shared host the rounds' spread says how far a verdict can be
# trusted.
# Usage: scripts/fio-sidebyside.sh [DIR] (default: a tmpfs the script
# mounts on a new directory and unmounts at exit, when it runs as root;
# else /dev/shm. On tmpfs, as fast as memory, the engines' own behaviour
# shows and the disk's run-to-run spread does not; give a directory on a
# disk to compare there). Environment: ENGINE (io_uring; libaio, psync),
# SIZE (256m), RUNTIME seconds per run (3), RAMP (1), ROUNDS (5), ROWS (a
# regular expression selecting job files by name), TOL (0.05), NASEMU (a
# prebuilt binary; default: build ./cmd/nasemu), RAW (a file to append
# each run's figures to), CHRT (e.g. "chrt -f 1": a command both tools
# run under; real-time scheduling keeps the host's other tenants off the
# cores for the runs, which on a loaded shared host spread single runs
# from a third to several times their median). Exit status 1 when a row
# fails. Needs fio, jq and Go.
set -euo pipefail
cd "$(dirname "$0")/.."
size=${SIZE:-256m}
runtime=${RUNTIME:-3}
tol=${TOL:-0.05}
chrt=${CHRT:-}
mnt=
if [ $# -gt 0 ]; then
	dir=$1
elif [ "$(id -u)" = 0 ] && mnt=$(mktemp -d -t nasemu-fio-sidebyside-tmpfs.XXXXXX) &&
	mount -t tmpfs -o size=$((2 * $(numfmt --from=iec "${size^^}") / 1048576 + 64))m tmpfs "$mnt"; then
	dir=$mnt
else
	[ -z "$mnt" ] || rmdir "$mnt"
	mnt= dir=/dev/shm
fi
. scripts/fio-lib.sh
fio_setup nasemu-fio-sidebyside
[ -z "$mnt" ] || trap 'rm -rf "$work" "$dir/$name"; umount "$mnt" && rmdir "$mnt"' EXIT
export SBS_FILE=$name SBS_SIZE=$size SBS_ENGINE=$engine SBS_RUNTIME=$runtime SBS_RAMP=$ramp

rows=()
for f in testdata/fio/sidebyside/*.fio; do
	n=$(basename "$f" .fio)
	[[ $n =~ $select ]] && rows+=("$n")
done
[ ${#rows[@]} -gt 0 ] || { echo "ROWS=$select selects no job file" >&2; exit 2; }

# run tool job -> lines "DIR IOPS P50 P99 P99.9" (µs) for each direction that did I/O
run() {
	case $1 in
	fio) $chrt fio --directory="$dir" --output-format=json --output="$work/out.json" "$2" ;;
	nasemu) $chrt "$nasemu" bench --quiet --target "$dir" --job "$2" --output-format=json >"$work/out.json" ;;
	esac
	jq -r '.jobs[0] | ["read", "write"][] as $d | .[$d] | select(.total_ios > 0) |
		"\($d) \(.iops) \(.clat_ns.percentile["50.000000"] / 1000) \(.clat_ns.percentile["99.000000"] / 1000) \(.clat_ns.percentile["99.900000"] / 1000)"' "$work/out.json"
}

echo "$dir: $(df -T "$dir" | awk 'NR == 2 {print $2}')"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
	for row in "${rows[@]}"; do
		set -- "$row"
		f=testdata/fio/sidebyside/$row.fio
		order="fio nasemu"
		[ $((r % 2)) = 0 ] && order="nasemu fio"
		for tool in $order; do
			run $tool "$f" | while read -r d i p50 p99 p999; do
				echo "$r $1 $d $tool $i $p50 $p99 $p999" >>"$raw"
			done
		done
	done
done
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"

printf 'engine %s, %s, %s s per run after %s s ramp, %s rounds; fio medians, and medians of the rounds'"'"' ratios nasemu/fio (range)\n' \
	"$engine" "$dir" "$runtime" "$ramp" "$rounds"
# pair each round's fio and nasemu figures of a row and direction, then
# take medians over the rounds
awk -v tol="$tol" '
function med(s,   a, n, i, j, t) {
	n = split(s, a, " ")
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j] + 0 < a[j-1] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function lo(s,   a, n, i, m) { n = split(s, a, " "); m = a[1]; for (i = 2; i <= n; i++) if (a[i] + 0 < m + 0) m = a[i]; return m }
function hi(s,   a, n, i, m) { n = split(s, a, " "); m = a[1]; for (i = 2; i <= n; i++) if (a[i] + 0 > m + 0) m = a[i]; return m }
{ k = $2 " " $3; key[$1 " " k " " $4] = $5 " " $6 " " $7 " " $8; if (!(k in seen)) { seen[k] = 1; order[++nk] = k } ; rounds[$1] = 1 }
END {
	printf "%-32s %9s %6s %16s %8s %16s %16s %16s %s\n", "job", "fio IOPS", "", "IOPS", "fio p50", "clat p50", "clat p99", "clat p99.9", ""
	bad = 0
	for (o = 1; o <= nk; o++) {
		k = order[o]; delete rs
		fiops = ""; fp50 = ""
		for (r in rounds) {
			if (!((r " " k " fio") in key) || !((r " " k " nasemu") in key)) continue
			split(key[r " " k " fio"], f, " "); split(key[r " " k " nasemu"], n, " ")
			fiops = fiops " " f[1]; fp50 = fp50 " " f[2]
			for (m = 1; m <= 4; m++) if (f[m] > 0) rs[m] = rs[m] " " n[m] / f[m]
		}
		v = "ok"
		line = sprintf("%-32s %9.0f %6s", k, med(fiops), "")
		for (m = 1; m <= 4; m++) {
			if (m == 2) line = line sprintf(" %8.1f", med(fp50))
			x = med(rs[m])
			if (x < 1 - tol || x > 1 + tol) v = "OUT"
			line = line sprintf(" %5.3f (%4.2f-%4.2f)", x, lo(rs[m]), hi(rs[m]))
		}
		if (v != "ok") bad = 1
		print line " " v
	}
	exit bad
}' "$raw"
