#!/bin/sh
# Run libiscsi's iscsi-test-cu (the ALL family) against nasemu's emulated
# LUN and against Debian's tgtd, side by side, on 127.0.0.1, and compare.
# Exit status 1 when nasemu fails a test that tgtd passes.
#
# usage: scripts/iscsi-conformance.sh [OUTDIR]
# needs: go, iscsi-test-cu (libiscsi-bin), tgtd/tgtadm (tgt), root for tgtd
set -eu
cd "$(dirname "$0")/.."
out=${1:-$(mktemp -d)}
mkdir -p "$out/nasemu" "$out/tgtd"
go build -o "$out/nasemu-bin" ./cmd/nasemu
p1=${NASEMU_PORT:-13260}
p2=${TGTD_PORT:-13261}
truncate -s 1G "$out/tgtd.img"
"$out/nasemu-bin" iscsi --setup free --size 1GiB --backing "$out/nasemu.img" --listen 127.0.0.1:$p1 2>"$out/nasemu.log" &
npid=$!
tpid=$(scripts/iscsi-tgtd.sh $p2 "$out/tgtd.img" iqn.2026-01.org.nasemu:tgtd)
trap 'kill $npid 2>/dev/null; kill -9 $tpid 2>/dev/null || true' EXIT INT TERM
sleep 1

results() { # XML report -> "Suite.Test PASS|FAIL" lines
	awk '/<SUITE_NAME>/{s=$2} /<CUNIT_RUN_TEST_SUCCESS>/{st="PASS"} /<CUNIT_RUN_TEST_FAILURE>/{st="FAIL"}
	     /<TEST_NAME>/{if(st!=""){print s"."$2, st; st=""}}' "$1" | sort -u |
		awk '{r[$1] = (r[$1]=="FAIL" || $2=="FAIL") ? "FAIL" : "PASS"} END {for (k in r) print k, r[k]}' | sort
}
(cd "$out/nasemu" && iscsi-test-cu --dataloss --xml --test ALL iscsi://127.0.0.1:$p1/iqn.2026-01.org.nasemu:lun/0 >run.txt 2>&1 || true)
(cd "$out/tgtd" && iscsi-test-cu --dataloss --xml --test ALL iscsi://127.0.0.1:$p2/iqn.2026-01.org.nasemu:tgtd/1 >run.txt 2>&1 || true)
results "$out/nasemu/CUnitAutomated-Results.xml" >"$out/nasemu.txt"
results "$out/tgtd/CUnitAutomated-Results.xml" >"$out/tgtd.txt"

join "$out/nasemu.txt" "$out/tgtd.txt" >"$out/both.txt"
printf '%-48s %-7s %s\n' TEST nasemu tgtd
awk '$2 != $3 || $2 == "FAIL" {printf "%-48s %-7s %s\n", $1, $2, $3}' "$out/both.txt"
n=$(grep -c ' PASS$' "$out/nasemu.txt" || true)
t=$(grep -c ' PASS$' "$out/tgtd.txt" || true)
all=$(wc -l <"$out/nasemu.txt")
echo "passed: nasemu $n of $all, tgtd $t of $(wc -l <"$out/tgtd.txt") (results in $out)"
echo "tests that pass only because the command is refused as not implemented are counted as passed by iscsi-test-cu (SKIPPED)"
worse=$(awk '$2 == "FAIL" && $3 == "PASS"' "$out/both.txt")
if [ -n "$worse" ]; then
	echo "nasemu fails what tgtd passes:"
	echo "$worse"
	exit 1
fi
