#!/usr/bin/env bash
# fio-examples.sh: the job files of fio's own examples/ directory whose
# engines are all plain file or block engines (sync, psync, libaio,
# io_uring, posixaio, mmap, null and cpp_null (fio's null engine built
# as an external one), the file and directory engines,
# ftruncate, falloc; a file without ioengine gets fio's psync), run
# unchanged by nasemu bench on a simulated drive and on a directory, as
# issue 18 counts them: each file runs or is refused with a reason, and
# none may crash. It prints one line per file and target (ok, refused
# with nasemu's first line of error, or CRASH), then the counts, and
# exits 1 when fewer than MIN files run on either target or any crashed.
# Usage: scripts/fio-examples.sh EXAMPLES_DIR (a checkout's examples/).
# Environment: TARGET_SIM (sim:wd-red-sn700-500g), DIR (a scratch
# directory, default a new one under TMPDIR), RUNTIME (1s), SIZE (32MiB),
# MIN (50), NASEMU (a prebuilt binary; default: build ./cmd/nasemu).
# sprandom.fio and xnvme-compare.fio read FIO_BS, FIO_RW and FIO_IODEPTH
# from the environment; they get 4096, randread and 16 unless set.
set -euo pipefail
cd "$(dirname "$0")/.."
ex=${1:?usage: $0 EXAMPLES_DIR}
sim=${TARGET_SIM:-sim:wd-red-sn700-500g}
runtime=${RUNTIME:-1s}
size=${SIZE:-32MiB}
min=${MIN:-50}
export FIO_BS=${FIO_BS:-4096} FIO_RW=${FIO_RW:-randread} FIO_IODEPTH=${FIO_IODEPTH:-16}
export PATH="$PATH:/usr/local/go/bin"
work=$(mktemp -d -t nasemu-fio-examples.XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 130' INT TERM
nasemu=${NASEMU:-$work/nasemu}
[ -n "${NASEMU:-}" ] || go build -o "$nasemu" ./cmd/nasemu
plain=" sync psync vsync pvsync pvsync2 libaio io_uring posixaio mmap null cpp_null filecreate filestat filedelete dircreate dirstat dirdelete ftruncate falloc "

files=()
for f in "$ex"/*.fio; do
	ok=1
	for e in $(sed -n 's/^[[:space:]]*ioengine[[:space:]]*=[[:space:]]*\([^[:space:]]*\).*/\1/p' "$f"); do
		[[ $plain == *" $e "* ]] || ok=0
	done
	[ $ok = 1 ] && files+=("$f")
done
echo "${#files[@]} plain-engine job files in $ex"

declare -A runs=([sim]=0 [dir]=0)
crashed=0
for f in "${files[@]}"; do
	for kind in sim dir; do
		target=$sim
		if [ $kind = dir ]; then
			target=${DIR:-$work/dir}
			rm -rf "$target" && mkdir -p "$target"
		fi
		set +e
		(cd "$(dirname "$f")" && timeout 120 "$nasemu" bench --quiet --target "$target" --job "$(basename "$f")" \
			--runtime "$runtime" --size "$size") >"$work/out" 2>"$work/err"
		rc=$?
		set -e
		if [ $rc = 0 ]; then
			runs[$kind]=$((runs[$kind] + 1))
			echo "ok      $kind $(basename "$f")"
		elif [ $rc -gt 2 ] || grep -q '^panic:\|^fatal error:' "$work/err"; then
			crashed=$((crashed + 1))
			echo "CRASH   $kind $(basename "$f") (exit $rc): $(grep -m1 . "$work/err")"
		else
			echo "refused $kind $(basename "$f"): $(grep -m1 . "$work/err")"
		fi
	done
done
[ -z "${DIR:-}" ] || rm -rf "$DIR"
echo "run: ${runs[sim]} of ${#files[@]} on $sim, ${runs[dir]} on a directory; $crashed crashed"
[ "${runs[sim]}" -ge "$min" ] && [ "${runs[dir]}" -ge "$min" ] && [ $crashed = 0 ]
