#!/usr/bin/env bash
# Runs each libFuzzer target (build/fuzz/fuzz_NAME) for FUZZ_SECONDS on a
# scratch copy of its seed corpus (tests/fuzz/corpus/NAME), so what the run
# grows never lands in the tree. Crash inputs go to build/fuzz/artifacts/NAME/.
# Ends with "N passed, N failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
seconds=${FUZZ_SECONDS:-300}
passed=0 failed=0
for bin in "$@"; do
	name=$(basename "$bin")
	name=${name#fuzz_}
	work=$(mktemp -d)
	cp "$here/corpus/$name"/* "$work"/ 2>/dev/null
	artifacts=$(cd "$(dirname "$bin")" && pwd)/artifacts/$name/
	mkdir -p "$artifacts"
	echo "# fuzz $name for ${seconds}s"
	if "$bin" -max_total_time="$seconds" -artifact_prefix="$artifacts" "$work" >"$work.log" 2>&1; then
		echo "ok - fuzz $name: $(grep -o 'Done [0-9]* runs.*' "$work.log")"
		passed=$((passed + 1))
	else
		tail -n 40 "$work.log"
		echo "not ok - fuzz $name: see $artifacts"
		failed=$((failed + 1))
	fi
	rm -rf "$work" "$work.log"
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
