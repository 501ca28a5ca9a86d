#!/bin/sh
# Integrity soak: 8 concurrent iSCSI sessions write distinct regions of an
# emulated LUN for DURATION (default 60s), the target is restarted on the
# same backing file, and every byte is read back and verified.
#
# usage: scripts/iscsi-soak.sh [DURATION]
set -eu
cd "$(dirname "$0")/.."
NASEMU_ISCSI_SOAK=${1:-60s} exec go test -count=1 -timeout 30m -run 'TestIntegrityAcrossRestart$' -v ./iscsi/
