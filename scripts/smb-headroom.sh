#!/bin/sh
# smb-headroom.sh — how close the emulated share's SMB path comes to a stock
# smbd when the model is not the limit. It starts 'nasemu nas' on a setup
# far faster than this host (testdata/emu/fast-nvme-raid0-smb-25g.yaml: four
# NVMe SSDs in RAID 0 behind 25GbE) and a stock smbd with the same smb.conf
# sharing a plain directory on the same disk, both on 127.0.0.1, and runs
# the same transfers against each, back to back, in rounds that alternate
# which goes first:
#   get     smbclient get of a 1 GiB file to /dev/null
#   put     smbclient put of a 1 GiB file
#   read    nasemu bench --target smb://... 1 MiB sequential reads at QD8
#   write   nasemu bench --target smb://... 1 MiB sequential writes at QD8
# and prints each round's ratio nas/stock and the median of the rounds'
# ratios per case, with the host's load average. It stops and unmounts what
# it started. Needs root (FUSE, smbd), samba, smbclient and python3; raise
# fs.fuse.max_pages_limit to 257 or more first (see nasemu nas).
#
# Usage: scripts/smb-headroom.sh [ROUNDS] [DIR]
#   ROUNDS  rounds of the four cases on each server (default 5)
#   DIR     where the share's backing directory and the plain directory go
#           (default: a new directory under $TMPDIR or /tmp); removed after
# Environment: SETUP (default the fast setup above), RUNTIME (each bench
# job's runtime, default 5s), SIZE (the files' size, default 1GiB), NASEMU
# (a nasemu binary to run instead of building this tree's).
set -eu
cd "$(dirname "$0")/.."
rounds=${1:-5}
setup=${SETUP:-testdata/emu/fast-nvme-raid0-smb-25g.yaml}
runtime=${RUNTIME:-5s}
size=${SIZE:-1GiB}
work=$(mktemp -d)
userdir=${2:-}
dir=$userdir
[ -n "$dir" ] || dir=$(mktemp -d "${TMPDIR:-/tmp}/nasemu-headroom-XXXXXX")
mkdir -p "$dir"
data=$(mktemp -d "$dir/headroom-XXXXXX")
naspid=
stockpid=
cleanup() {
	[ -n "$naspid" ] && kill "$naspid" 2>/dev/null && wait "$naspid" 2>/dev/null || true
	[ -n "$stockpid" ] && kill "$stockpid" 2>/dev/null && wait "$stockpid" 2>/dev/null || true
	rm -rf "$work" "$data"
	[ -n "$userdir" ] || rmdir "$dir" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 1' INT TERM
if [ -n "${NASEMU:-}" ]; then
	cp "$NASEMU" "$work/nasemu" # a build to compare, e.g. of another commit
else
	go build -o "$work/nasemu" ./cmd/nasemu
fi
NASEMU_SMB_PASSWORD=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
export NASEMU_SMB_PASSWORD
freeport() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
nasport=$(freeport)
stockport=$(freeport)
mkdir "$data/backing" "$data/plain"
bytes=$(python3 -c 'import sys
s=sys.argv[1]; u={"KiB":1<<10,"MiB":1<<20,"GiB":1<<30}
print(int(s[:-3])*u[s[-3:]] if s[-3:] in u else int(s))' "$size")
head -c "$bytes" /dev/urandom >"$data/src.bin"

# nas on the fast setup.
"$work/nasemu" nas --setup "$setup" --backing "$data/backing" --smb "127.0.0.1:$nasport" \
	--ready-file "$work/ready" 2>"$work/nas.log" &
naspid=$!
for _ in $(seq 150); do [ -f "$work/ready" ] && break; sleep 0.2; done
[ -f "$work/ready" ] || { cat "$work/nas.log" >&2; exit 1; }
# Stock smbd: nas's own smb.conf with its state, path and port replaced.
rundir=$(dirname "$(sed -n 's/^socket=//p' "$work/ready")")
mkdir -m 700 "$work/stock"
for d in private run lock state cache ncalrpc usershares log; do mkdir "$work/stock/$d"; done
sed -e "s|$rundir/samba|$work/stock|g" -e "s|^\(\tpath = \).*|\1$data/plain|" \
	-e "s|^\(\tsmb ports = \).*|\1$stockport|" "$rundir/samba/smb.conf" >"$work/stock/smb.conf"
printf '%s\n%s\n' "$NASEMU_SMB_PASSWORD" "$NASEMU_SMB_PASSWORD" |
	smbpasswd -c "$work/stock/smb.conf" -a -s root >/dev/null 2>&1
smbd=$(command -v smbd || echo /usr/sbin/smbd)
"$smbd" --foreground -s "$work/stock/smb.conf" </dev/null >"$work/stock.log" 2>&1 &
stockpid=$!
for _ in $(seq 100); do
	python3 -c 'import socket,sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1)' "$stockport" 2>/dev/null && break
	sleep 0.2
done

# run SERVER CASE ROUND: one transfer; prints MB/s.
run() {
	case $1 in nas) port=$nasport ;; stock) port=$stockport ;; esac
	share=nas
	case $2 in
	get | put)
		if [ "$2" = get ]; then cmd="get big /dev/null"; else cmd="put $data/src.bin big"; fi
		smbclient "//127.0.0.1/$share" -p "$port" -U "root%$NASEMU_SMB_PASSWORD" -c "$cmd" 2>&1 |
			sed -n 's/.*(\([0-9.]*\) [kK]ilo[bB]ytes\/sec).*/\1/p; s/.*(\([0-9.]*\) kb\/s).*/\1/p' |
			head -1 | awk '{printf "%.1f\n", $1*1024/1e6}'
		;;
	read | write)
		"$work/nasemu" bench --quiet --format json --target "smb://root@127.0.0.1:$port/$share" \
			--name="$2" --rw="$2" --bs=1m --iodepth=8 --size="$size" --runtime="$runtime" \
			--time_based | python3 -c 'import json,sys; print("%.1f" % json.load(sys.stdin)["results"][0]["mbps"])'
		;;
	esac
}

# The file smbclient gets, on both.
for s in stock nas; do run "$s" put >/dev/null; done
printf 'load average before: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
out=$work/results
: >"$out"
for r in $(seq "$rounds"); do
	if [ $((r % 2)) -eq 1 ]; then order="stock nas"; else order="nas stock"; fi
	for c in get put read write; do
		for s in $order; do
			v=$(run "$s" "$c")
			echo "$r $c $s $v" >>"$out"
		done
	done
	printf 'round %d done (%s first), load average %s\n' "$r" "${order%% *}" "$(cut -d' ' -f1-3 /proc/loadavg)" >&2
done
printf 'load average after: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
kill "$naspid" && wait "$naspid" 2>/dev/null || true
naspid=
grep -E "answers later|warning" "$work/nas.log" || true
python3 - "$out" "$setup" "$rounds" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
print("nasemu nas (%s) against stock smbd on a plain directory, %s rounds, MB/s (10^6 B/s)" % (sys.argv[2], sys.argv[3]))
print("%-6s %10s %10s %12s %s" % ("case", "stock", "nas", "nas/stock", "rounds' ratios"))
for c in ("get", "put", "read", "write"):
    by = {}
    for r, case, s, v in rows:
        if case == c:
            by.setdefault(r, {})[s] = float(v)
    ratios = [d["nas"] / d["stock"] for d in by.values() if d.get("stock")]
    print("%-6s %10.1f %10.1f %12.2f %s" % (c, statistics.median(d["stock"] for d in by.values()),
          statistics.median(d["nas"] for d in by.values()), statistics.median(ratios),
          " ".join("%.2f" % x for x in ratios)))
PY
