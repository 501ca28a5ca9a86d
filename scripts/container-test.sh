#!/usr/bin/env bash
# Builds the container image from the Dockerfile, starts it as a service
# the way README.md shows, and runs 'nasemu bench --target smb://...'
# against it from the host and from a second container; then checks its
# health endpoint, stops it and checks that it stopped cleanly.
#
#   sh scripts/container-test.sh        (as root; CI runs it from .ci/run)
#
# It uses docker when a Docker engine answers, else podman. A machine that
# reaches no container registry (CI's) gets the two base images the
# Dockerfile names made locally: Debian bookworm from debootstrap, and that
# plus this machine's Go toolchain and CA certificates for the build stage.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

if docker info >/dev/null 2>&1; then
	engine=docker
elif command -v podman >/dev/null; then
	engine=podman
else
	echo "container-test: neither a Docker engine nor podman" >&2
	exit 1
fi
build_flags=()
if [ "$engine" = podman ]; then
	# This machine kind's cgroups and limits (see the file); keep the
	# image's HEALTHCHECK, which only the docker image format holds.
	export CONTAINERS_CONF="${CONTAINERS_CONF:-$PWD/contrib/container/ci-containers.conf}"
	build_flags+=(--format docker)
	# The build stage takes the modules this machine has already
	# downloaded (podman mounts volumes into RUN steps; docker does not).
	if modcache=$(go env GOMODCACHE) && [ -d "$modcache" ]; then
		build_flags+=(--volume "$modcache:/go/pkg/mod")
	fi
fi
echo "container-test: using $engine"

base=debian:bookworm-slim
goimg=golang:1.26-bookworm
work=$(mktemp -d)
name=nasemu-ci-$$
cleanup() {
	$engine rm -f "$name" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

have_image() { $engine image exists "$1" 2>/dev/null || $engine image inspect "$1" >/dev/null 2>&1; }
if ! have_image "$base" || ! have_image "$goimg"; then
	if ! $engine pull -q "$base" >/dev/null 2>&1 || ! $engine pull -q "$goimg" >/dev/null 2>&1; then
		echo "container-test: no registry: making the base images with debootstrap"
		debootstrap --variant=minbase bookworm "$work/rootfs" >"$work/debootstrap.log" 2>&1 ||
			{ tail -20 "$work/debootstrap.log"; exit 1; }
		tar -C "$work/rootfs" -cf "$work/base.tar" .
		$engine import "$work/base.tar" "$base" >/dev/null
		# The build stage: the base, this machine's Go and the CA
		# certificates it reaches the Go module proxy with.
		goroot=$(go env GOROOT)
		tar -C "$(dirname "$goroot")" -rf "$work/base.tar" --transform "s|^$(basename "$goroot")|usr/local/go|" "$(basename "$goroot")"
		tar -C / -rf "$work/base.tar" etc/ssl/certs/ca-certificates.crt
		$engine import --change 'ENV PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
			--change 'ENV GOPATH=/go' --change 'ENV GOTOOLCHAIN=local' "$work/base.tar" "$goimg" >/dev/null
		rm -rf "$work/rootfs" "$work/base.tar"
	fi
fi

# The README's commands, with a port and password of the test's own.
port=14450
password="ci-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
start=$(date +%s)
$engine build "${build_flags[@]}" --pull=never --network host --build-arg NASEMU_VERSION="$(git describe --always --dirty 2>/dev/null || echo ci)" -t nasemu . >"$work/build.log" 2>&1 ||
	{ tail -30 "$work/build.log"; exit 1; }
echo "container-test: image built in $(($(date +%s) - start)) s"
# --no-healthcheck: this script polls the health itself, and podman
# without systemd cannot time the image's HEALTHCHECK.
$engine run -d --name "$name" --no-healthcheck --device /dev/fuse --cap-add SYS_ADMIN \
	-p "127.0.0.1:$port:445" -p 127.0.0.1:19108:9108 \
	-e NASEMU_SMB_PASSWORD="$password" nasemu >/dev/null

up=""
for _ in $(seq 60); do
	if $engine exec "$name" /usr/local/bin/nasemu-entrypoint health 2>/dev/null; then
		up=1
		break
	fi
	sleep 1
done
if [ -z "$up" ]; then
	echo "container-test: the service is not healthy after 60 s" >&2
	$engine logs "$name" >&2
	exit 1
fi
echo "container-test: service up"
# The published metrics port, from the host (bash alone: no HTTP client
# is needed on the host).
exec 3<>/dev/tcp/127.0.0.1/19108
printf 'GET /healthz HTTP/1.0\r\nHost: localhost\r\n\r\n' >&3
health=$(cat <&3)
exec 3<&-
case "$health" in
"HTTP/1.0 200"* | "HTTP/1.1 200"*) echo "container-test: /healthz: ${health##*$'\n'}" ;;
*) echo "container-test: /healthz from the host: $health" >&2; exit 1 ;;
esac

# From the host.
go build -o "$work/nasemu" ./cmd/nasemu
NASEMU_SMB_PASSWORD="$password" "$work/nasemu" bench --target "smb://root@127.0.0.1:$port/nas" \
	--suite cdm --size 16MiB --runtime 300ms
# From a second container, by the service's address on the container network.
addr=$($engine inspect -f '{{.NetworkSettings.IPAddress}}' "$name")
if [ -z "$addr" ]; then
	addr=$($engine inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$name")
fi
$engine run --rm --no-healthcheck -e NASEMU_SMB_PASSWORD="$password" nasemu nasemu \
	bench --target "smb://root@$addr:445/nas" --suite cdm --size 16MiB --runtime 300ms --format json >"$work/second.json"
grep -q '"results"' "$work/second.json" || { echo "container-test: no results from the second container" >&2; cat "$work/second.json" >&2; exit 1; }
echo "container-test: bench from a second container at $addr: ok"

$engine stop -t 20 "$name" >/dev/null
code=$($engine inspect -f '{{.State.ExitCode}}' "$name")
$engine logs "$name" >"$work/service.log" 2>&1 || true
if [ "$code" != 0 ]; then
	echo "container-test: the service exited with $code on SIGTERM" >&2
	cat "$work/service.log" >&2
	exit 1
fi
if grep -q "$password" "$work/service.log"; then
	echo "container-test: the service's log shows the password" >&2
	exit 1
fi
echo "container-test: ok"
