# The fault walk of tests/bats/faults.bats: a small real job run again and
# again with its Nth allocation (or write) failing, N from 1 up to the
# number the job makes, each run held to the error contract:
#   - exit status 1: not a signal, not 0 with a partial result;
#   - one line on stderr, "PROGRAM: error: ...";
#   - no output and no temporary left in the run's folder, and an output
#     that existed before the run (every other N) unchanged.
# A failure the program absorbs (exit 0) must leave the same outputs as the
# clean run. Past FAULT_DENSE calls N grows by an eighth a step, so a job of
# thousands of calls stays affordable, up to the last FAULT_DENSE_END calls
# (the outputs' commits), which are all walked; the counts are printed.
#
# The library is $SPKIT_BUILD/tests/libfault_inject.so (tests/fault/
# fault_inject.c, built by `make test`). SPKIT_THREADS=1 makes the count
# the same from run to run.
FAULT_LIB=${SPKIT_FAULT_LIB-${SPKIT_BUILD:-$REPO/build}/tests/libfault_inject.so}
FAULT_DENSE=${FAULT_DENSE:-80}
FAULT_DENSE_END=${FAULT_DENSE_END:-30}

# fault_run DIR KIND N COMMAND...: run COMMAND -q in DIR with the Nth call
# of KIND (MALLOC or WRITE; 0: none) failing (and every later one with
# FAULT_PERSIST set); sets fstatus, ferr (stderr), ffailed (faults
# injected) and fcount (calls made).
fault_run() {
	local dir=$1 kind=$2 n=$3 report
	shift 3
	report=$T/fault.report
	rm -f "$report"
	fstatus=0
	(cd "$dir" && exec env SPKIT_THREADS=1 SPKIT_FAIL_REPORT="$report" "SPKIT_FAIL_$kind=$n" \
		${FAULT_PERSIST:+SPKIT_FAIL_PERSIST=1} LD_PRELOAD="$FAULT_LIB" \
		"$@" -q >/dev/null 2>"$T/fault.err") || fstatus=$?
	ferr=$(cat "$T/fault.err")
	read -r _ allocs _ writes _ ffailed <"$report" 2>/dev/null || ffailed=
	if [ "$kind" = MALLOC ]; then fcount=$allocs; else fcount=$writes; fi
}

# fault_digest FILE: what must be the same as the clean run's; a test
# whose outputs hold timings redefines it to leave them out.
fault_digest() {
	md5sum <"$1"
}

# fault_listing DIR: every file under DIR with its digest, sorted; not the
# files of FAULT_KEEP after a failure (a checkpoint and the log written
# with it are kept on purpose, to resume from).
fault_listing() {
	local f keep=" ${2:-} "
	(cd "$1" && find . -type f | sort | while IFS= read -r f; do
		[[ $keep == *" ${f#./} "* ]] || echo "$f $(fault_digest "$f")"
	done)
}

# fault_check_failed PROG DIR SENTINELS: the contract after an injected
# failure that the program reported.
fault_check_failed() {
	local prog=$1 dir=$2 sentinels=$3 what=$4
	if [ "$fstatus" -ne 1 ]; then
		echo "$what: exit status $fstatus, expected 1; stderr: $ferr"
		return 1
	fi
	if [[ $ferr == *$'\n'* ]] || [[ $ferr != "$prog: error: "?* ]]; then
		echo "$what: stderr is not one '$prog: error: ...' line:"
		echo "$ferr"
		return 1
	fi
	local have
	have=$(fault_listing "$dir" "${FAULT_KEEP:-}")
	if [ "$have" != "$sentinels" ]; then
		echo "$what: files left behind or changed ($ferr):"
		echo "$have"
		echo "expected:"
		echo "$sentinels"
		return 1
	fi
}

# fault_check_resumed PROG DIR REFERENCE WHAT COMMAND...: a failed run of
# a sweep, then its clean rerun. A sweep may also end with exit 0 where
# one item failed (logged, and tried again by the rerun).
fault_check_resumed() {
	local prog=$1 dir=$2 reference=$3 what=$4
	shift 4
	if [ "$fstatus" -ne 0 ]; then
		fault_check_failed "$prog" "$dir" "$(fault_listing "$dir")" "$what" || return 1
	fi
	if find "$dir" -name '*.tmp.*' | grep -q .; then
		echo "$what: temporary files left: $(find "$dir" -name '*.tmp.*')"
		return 1
	fi
	local err=$ferr
	fault_run "$dir" NONE 0 "$@"
	if [ "$fstatus" -ne 0 ] || [ "$(fault_listing "$dir")" != "$reference" ]; then
		echo "$what: the rerun after '$err' did not end as the clean run ($fstatus, $ferr):"
		fault_listing "$dir"
		return 1
	fi
}

# fault_walk KIND PROG 'OUTPUT...' COMMAND...: walk N for KIND over
# COMMAND, run in a fresh folder each time; OUTPUT are the files the job
# writes (relative to that folder), pre-created with other contents on odd
# N to show an existing output is never replaced by a failed run. With
# FAULT_RESUMABLE set (a sweep that appends flushed rows, which a rerun
# resumes), a failed run may leave rows but no temporary, and a clean rerun
# in its folder must end as the clean run did.
fault_walk() {
	local kind=$1 prog=$2 outputs=$3 n=1 runs=0 total sentinels reference f
	shift 3
	local dir=$T/run
	rm -rf "$dir" && mkdir "$dir"
	fault_run "$dir" "$kind" 0 "$@"
	if [ "$fstatus" -ne 0 ] || [ -z "$ffailed" ]; then
		echo "the clean run failed ($fstatus): $ferr"
		return 1
	fi
	total=$fcount
	reference=$(fault_listing "$dir")
	while :; do
		rm -rf "$dir" && mkdir "$dir"
		sentinels=
		if [ $((n % 2)) -eq 1 ]; then
			for f in $outputs; do
				mkdir -p "$dir/$(dirname "$f")"
				echo "existing $f" >"$dir/$f"
			done
			sentinels=$(fault_listing "$dir" "${FAULT_KEEP:-}")
		fi
		fault_run "$dir" "$kind" "$n" "$@"
		runs=$((runs + 1))
		[ "$ffailed" = 0 ] && break
		if [ -z "$ffailed" ]; then
			echo "$kind $n: no fault report (exit status $fstatus): $ferr"
			return 1
		fi
		if [ -n "${FAULT_RESUMABLE:-}" ]; then
			fault_check_resumed "$prog" "$dir" "$reference" "$kind $n" "$@" || return 1
		elif [ "$fstatus" -eq 0 ]; then
			if [ "$(fault_listing "$dir")" != "$reference" ]; then
				echo "$kind $n: exit 0 with outputs unlike the clean run's"
				return 1
			fi
		else
			fault_check_failed "$prog" "$dir" "$sentinels" "$kind $n" || return 1
		fi
		if [ "$n" -lt "$FAULT_DENSE" ] || [ "$n" -ge $((total - FAULT_DENSE_END)) ]; then
			n=$((n + 1))
		else
			n=$((n + n / 8))
			[ "$n" -gt $((total - FAULT_DENSE_END)) ] && n=$((total - FAULT_DENSE_END))
		fi
	done
	if [ "$runs" -lt 2 ] && [ "$total" -gt 0 ]; then
		echo "$kind: the walk ran $runs time(s) for $total calls"
		return 1
	fi
	echo "# $prog $kind: $total calls, $runs runs" >&3
}
