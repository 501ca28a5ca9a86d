#!/bin/bash
# The container's entry point: 'nasemu nas' on every interface of the
# container, configured from the environment.
#
#   NASEMU_SETUP               built-in setup or YAML file (default ds1817-raid5-hdd-smb-1g)
#   NASEMU_SMB_PASSWORD        the share's password (or NASEMU_SMB_PASSWORD_FILE,
#                              default /run/secrets/nasemu_smb_password)
#   NASEMU_SMB_PORT            SMB port in the container (default 445)
#   NASEMU_SHARE               share name (default nas)
#   NASEMU_ISCSI_PORT          also serve a LUN at this port (e.g. 3260; default none)
#   NASEMU_LUN_SIZE            the LUN's size (default a quarter of the array)
#   NASEMU_METRICS_PORT        /metrics and /healthz (default 9108)
#   NASEMU_TIME_SCALE          --time-scale (default 1)
#
# The share's files are in /data/share, the LUN's bytes in /data/lun0.img.
# Extra arguments go to 'nasemu nas'. 'nasemu-entrypoint health' checks
# /healthz (the image's HEALTHCHECK); 'nasemu-entrypoint nasemu ARGS...'
# runs another nasemu command (e.g. bench, from a second container).
set -euo pipefail

metrics_port="${NASEMU_METRICS_PORT:-9108}"

case "${1:-}" in
health)
	# GET /healthz with bash alone: the image has no HTTP client.
	exec 3<>"/dev/tcp/127.0.0.1/${metrics_port}"
	printf 'GET /healthz HTTP/1.0\r\nHost: localhost\r\n\r\n' >&3
	read -r _ status _ <&3
	cat <&3 >/dev/null
	[ "$status" = 200 ]
	exit
	;;
nasemu)
	shift
	exec nasemu "$@"
	;;
esac

password_file="${NASEMU_SMB_PASSWORD_FILE:-/run/secrets/nasemu_smb_password}"
if [ -z "${NASEMU_SMB_PASSWORD:-}" ] && [ ! -r "$password_file" ]; then
	echo "nasemu-entrypoint: set NASEMU_SMB_PASSWORD or mount the password at $password_file" >&2
	exit 2
fi
args=(nas --setup "${NASEMU_SETUP:-ds1817-raid5-hdd-smb-1g}"
	--backing /data/share --smb "0.0.0.0:${NASEMU_SMB_PORT:-445}" --smb-public
	--share "${NASEMU_SHARE:-nas}" --user root
	--metrics "0.0.0.0:${metrics_port}" --metrics-public
	--time-scale "${NASEMU_TIME_SCALE:-1}"
	--ready-file /run/nasemu.ready)
if [ -z "${NASEMU_SMB_PASSWORD:-}" ]; then
	args+=(--password-file "$password_file")
fi
if [ -n "${NASEMU_ISCSI_PORT:-}" ]; then
	args+=(--iscsi "0.0.0.0:${NASEMU_ISCSI_PORT}" --lun /data/lun0.img)
	if [ -n "${NASEMU_LUN_SIZE:-}" ]; then
		args+=(--lun-size "$NASEMU_LUN_SIZE")
	fi
fi
mkdir -p /data/share
# exec: nasemu is the container's main process and gets its SIGTERM.
exec nasemu "${args[@]}" "$@"
