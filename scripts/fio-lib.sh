# Sourced by fio-compare.sh and fio-sidebyside.sh, with dir and size set.
# It sets the defaults both take from the environment: ENGINE (io_uring),
# RAMP seconds (1), ROUNDS (5), ROWS (all).
export PATH="$PATH:/usr/local/go/bin"
engine=${ENGINE:-io_uring}
ramp=${RAMP:-1}
rounds=${ROUNDS:-5}
select=${ROWS:-.}

# fio_setup PREFIX checks for fio and jq, makes a work directory that is
# removed at exit with the data file, builds nasemu unless NASEMU names a
# binary, and lays the data file ($dir/$name) out once, with data, so that
# neither tool writes it first. It sets work, name, nasemu and raw.
fio_setup() {
	for tool in fio jq; do
		command -v $tool >/dev/null || { echo "$tool is not installed (apt-get install -y $tool)" >&2; exit 2; }
	done
	work=$(mktemp -d -t "$1.XXXXXX")
	name="$1.$$.dat"
	trap 'rm -rf "$work" "$dir/$name"' EXIT
	trap 'exit 130' INT TERM
	nasemu=${NASEMU:-$work/nasemu}
	[ -n "${NASEMU:-}" ] || go build -o "$nasemu" ./cmd/nasemu
	raw=${RAW:-$work/raw}
	fio --name=layout --directory="$dir" --filename="$name" --rw=write --bs=1m --size="$size" \
		--ioengine=psync --end_fsync=1 --output=/dev/null
}
