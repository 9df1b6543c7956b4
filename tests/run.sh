#!/usr/bin/env bash
# Runs the CPU test suites and ends with "N passed, N failed".
# Arguments: the unit-test binaries. Every suite speaks TAP (cmocka through
# CMOCKA_MESSAGE_OUTPUT=TAP, Bats through --tap); a binary that dies without
# reporting counts as one failure, so a crash can never pass silently.
set -u
here=$(cd "$(dirname "$0")" && pwd)
passed=0 failed=0 skipped=0 exit_status=0
log=${SPKIT_TEST_LOG:-}

count() { # reads TAP on stdin, echoes it, tallies ok/not ok
	local line
	while IFS= read -r line; do
		printf '%s\n' "$line"
		case $line in
		"# exit "*) exit_status=${line#\# exit } ;;
		# cmocka's TAP writes a skipped test (a GPU-only case here) so
		"not ok "*"# SKIP"*) skipped=$((skipped + 1)) ;;
		"not ok "*) failed=$((failed + 1)) ;;
		"ok "*) passed=$((passed + 1)) ;;
		esac
	done
}

run_suite() { # name, command...
	local name=$1 before=$((passed + failed + skipped)) failed_before=$failed
	shift
	echo "# suite $name"
	count < <("$@" 2>&1; echo "# exit $?")
	if [ $((passed + failed + skipped)) -eq "$before" ]; then
		echo "not ok - $name reported no tests"
		failed=$((failed + 1))
	elif [ "$exit_status" -ne 0 ] && [ "$failed" -eq "$failed_before" ]; then
		echo "not ok - $name exited with status $exit_status after its tests"
		failed=$((failed + 1))
	fi
}

for t in "$@"; do
	run_suite "$(basename "$t")" env CMOCKA_MESSAGE_OUTPUT=TAP "$t"
done

if [ -z "${SPKIT_SKIP_BATS:-}" ]; then
	run_suite bats bats --tap "$here/bats"
fi

if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
