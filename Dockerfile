# The emulated NAS as a service: 'nasemu nas' serving a share over SMB
# (and a LUN over iSCSI) from a container. See README.md, "In a
# container". Build: docker build -t nasemu .  (podman build works alike)
#
# The base images are arguments so that a machine without a registry can
# build from images of its own (scripts/container-test.sh makes them with
# debootstrap).
ARG GO_IMAGE=golang:1.26-bookworm
ARG BASE_IMAGE=debian:bookworm-slim

FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG NASEMU_VERSION=container
RUN CGO_ENABLED=0 go build -trimpath -buildvcs=false \
	-ldflags "-X main.version=${NASEMU_VERSION}" -o /out/nasemu ./cmd/nasemu

FROM ${BASE_IMAGE}
# smbd serves the share, fuse3 gives fusermount3 (not needed as root, but
# 'nasemu doctor' names it), libiscsi-bin the iSCSI tools to try a LUN.
RUN apt-get update \
	&& DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends samba fuse3 libiscsi-bin \
	&& rm -rf /var/lib/apt/lists/*
COPY --from=build /out/nasemu /usr/local/bin/nasemu
COPY contrib/container/entrypoint.sh /usr/local/bin/nasemu-entrypoint
# The share's files and the LUN's bytes; keep them in a volume to keep
# them across containers.
VOLUME /data
EXPOSE 445 3260 9108
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s \
	CMD ["/usr/local/bin/nasemu-entrypoint", "health"]
ENTRYPOINT ["/usr/local/bin/nasemu-entrypoint"]
