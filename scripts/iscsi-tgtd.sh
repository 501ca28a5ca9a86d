#!/bin/sh
# Start Debian's tgtd on 127.0.0.1:PORT with one LUN over FILE, in the
# foreground of a background job; prints tgtd's pid. Stop it with
# kill -9 PID: tgtd ignores SIGTERM while it has targets. Used by the other iscsi-*.sh scripts and by the Go tests.
#
# usage: iscsi-tgtd.sh PORT FILE [IQN] [CONTROL_PORT]
set -eu
port=$1
file=$2
iqn=${3:-iqn.2026-01.org.nasemu:tgtd}
ctl=${4:-$((port % 30000 + 1000))}
tgtd -f -C "$ctl" --iscsi portal=127.0.0.1:"$port" >/dev/null 2>&1 &
pid=$!
i=0
until tgtadm -C "$ctl" --lld iscsi --mode target --op show >/dev/null 2>&1; do
	i=$((i + 1))
	if [ $i -gt 50 ]; then
		kill -9 $pid 2>/dev/null
		echo "tgtd did not start" >&2
		exit 1
	fi
	sleep 0.1
done
tgtadm -C "$ctl" --lld iscsi --mode target --op new --tid 1 --targetname "$iqn"
tgtadm -C "$ctl" --lld iscsi --mode logicalunit --op new --tid 1 --lun 1 --backing-store "$file"
tgtadm -C "$ctl" --lld iscsi --mode target --op bind --tid 1 --initiator-address ALL
echo $pid
