#!/bin/sh
# fuse-overhead.sh — throughput of nasemu's FUSE share over a zero-cost
# model against a plain go-fuse loopback (passthrough disabled, same mount
# options), both with O_DIRECT I/O so that every request crosses FUSE.
# Prints MB/s (median of COUNT runs) for each workload and the ratio
# nasemu / loopback; the goal is a ratio of at least 0.9.
#
# Usage: scripts/fuse-overhead.sh [COUNT] [BENCHTIME]
# Needs FUSE: /dev/fuse and root, or fusermount3 (Debian package fuse3).
set -eu
count=${1:-5}
benchtime=${2:-1s}
cd "$(dirname "$0")/.."
go test -count="$count" -run '^$' -bench '^BenchmarkOverhead$' -benchtime "$benchtime" ./fusefs/ |
awk '
/^BenchmarkOverhead/ {
	split($1, p, "/"); op = p[2]; sub(/^op=/, "", op)
	fs = p[3]; sub(/^fs=/, "", fs); sub(/-[0-9]+$/, "", fs)
	for (i = 1; i <= NF; i++) if ($(i+1) == "MB/s") v = $i
	n[op, fs]++; val[op, fs, n[op, fs]] = v; ops[op] = 1
}
function median(op, fs,   k, i, j, t, a) {
	k = n[op, fs]
	for (i = 1; i <= k; i++) a[i] = val[op, fs, i]
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return k % 2 ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
END {
	printf "%-14s %12s %12s %8s\n", "workload", "nasemu MB/s", "loopback MB/s", "ratio"
	for (op in ops) {
		a = median(op, "nasemu"); b = median(op, "loopback")
		printf "%-14s %12.1f %12.1f %8.2f\n", op, a, b, a / b
	}
}'
