# Shared setup for the Bats tests: programs from $SPKIT_BIN (the Makefile sets
# it), a scratch folder per test, and assertions on spkit's conventions.
BIN=${SPKIT_BIN:-$BATS_TEST_DIRNAME/../../bin}
REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
PY=/usr/bin/python3

setup() {
	T=$(mktemp -d "${BATS_TMPDIR:-/tmp}/spkit-bats.XXXXXX")
}

teardown() {
	rm -rf "$T"
}

# assert_error STATUS PROGRAM PATTERN: the run failed with STATUS and printed one
# line, "PROGRAM: error: ..." matching PATTERN; a usage error (2) ends it with
# the hint " (try 'PROGRAM --help')", which PATTERN does not include.
assert_error() {
	local want=$1 prog=$2 pattern=$3
	if [ "$status" -ne "$want" ]; then
		echo "exit status $status, expected $want; output:"
		echo "$output"
		return 1
	fi
	local first=${lines[0]}
	case $first in
	"$prog: error: "*) ;;
	*) echo "first line is not '$prog: error: ...': $first"; return 1 ;;
	esac
	if [ "$want" -eq 2 ]; then
		local hint=" (try '$prog --help')"
		if [[ $first != *"$hint" ]]; then
			echo "usage error without the hint '$hint': $first"
			return 1
		fi
		first=${first%"$hint"}
	fi
	if ! [[ $first =~ $pattern ]]; then
		echo "message '$first' does not match '$pattern'"
		return 1
	fi
	if [ "${#lines[@]}" -ne 1 ]; then
		echo "expected one line, got ${#lines[@]}:"
		echo "$output"
		return 1
	fi
}

# assert_only_files DIR [NAME]...: DIR holds exactly the named files (no
# partial output, no temporary file).
assert_only_files() {
	local dir=$1
	shift
	local have want=""
	have=$(cd "$dir" && ls -A | sort | tr '\n' ' ')
	[ $# -gt 0 ] && want=$(printf '%s\n' "$@" | sort | tr '\n' ' ')
	if [ "$have" != "$want" ]; then
		echo "files in $dir: '$have', expected '$want'"
		return 1
	fi
}

# assert_help_version PROGRAM [ARG]...: PROGRAM ARG... --help (and -h) exits
# 0 with the usage and an example; --version (and -V) prints
# "PROGRAM (spkit) X.Y.Z". $output is then the --help text.
assert_help_version() {
	local prog=$1 opt
	shift
	for opt in --version -V; do
		run "$BIN/$prog" "$@" "$opt"
		[ "$status" -eq 0 ]
		[[ $output =~ ^$prog\ \(spkit\)\ [0-9]+\.[0-9]+\.[0-9]+$ ]]
	done
	for opt in -h --help; do
		run "$BIN/$prog" "$@" "$opt"
		[ "$status" -eq 0 ]
		[[ $output == *"Usage: $prog "* ]]
		[[ $output == *"Example:"* ]]
	done
}

# stopped_by_sigterm OPTION...: maxk-train with a checkpoint every epoch, a log
# and a model to write, sent SIGTERM once its first checkpoint exists: it stops
# with its own status (75, EX_TEMPFAIL, not an error's 1: a job script requeues
# it) and one line naming the epoch and the checkpoint, writes no model, and its
# log holds every epoch up to the checkpoint's. Leaves $T/ck.npz and $T/log.csv.
stopped_by_sigterm() {
	"$BIN/maxk-train" "$@" --checkpoint "$T/ck.npz" --checkpoint-every 1 -q \
		--save-model "$T/never.npz" --log "$T/log.csv" > /dev/null 2> "$T/err" &
	local pid=$! i rc=0 epoch
	for i in $(seq 200); do [ -f "$T/ck.npz" ] && break; sleep 0.05; done
	kill -TERM $pid
	wait $pid || rc=$?
	[ $rc -eq 75 ] || { echo "status $rc: $(cat "$T/err")"; return 1; }
	[ "$(wc -l < "$T/err")" -eq 1 ] || { cat "$T/err"; return 1; }
	grep -qE "^maxk-train: stopped: by signal 15 after epoch [0-9]+; checkpoint .*ck.npz written \(continue with --resume .*ck.npz\)$" "$T/err" ||
		{ cat "$T/err"; return 1; }
	[ ! -e "$T/never.npz" ] || { echo "the model was written"; return 1; }
	epoch=$(sed -E 's/.*after epoch ([0-9]+);.*/\1/' "$T/err")
	[ "$(tail -1 "$T/log.csv" | cut -d, -f1)" -eq "$epoch" ] &&
		[ "$(wc -l < "$T/log.csv")" -eq $((epoch + 1)) ] || { echo "log: $(wc -l < "$T/log.csv") lines"; return 1; }
}
